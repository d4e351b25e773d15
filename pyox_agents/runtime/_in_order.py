"""The shared state's versions are shown in the order they were committed.

A tool's change is saved in its run's record before it is shown (see `Journal.save_closed`), so
for the moment of that save its version is committed but not shown. A version committed after
it (a person's edit, a parallel tool's change that saved sooner, a subagent's) waits until it
is shown: a client applies each delta to the version before it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyox_agents.events import RuntimeEvent

__all__ = ["InOrder"]

Emit = Callable[[Sequence[RuntimeEvent]], None]


class InOrder:
    """The versions of one shared state that are being saved, and the events that wait for
    them. One per shared state: a run and its subagents share it."""

    __slots__ = ("_held", "_saving")

    def __init__(self) -> None:
        self._saving: set[int] = set()
        self._held: list[tuple[int, Emit, Sequence[RuntimeEvent]]] = []

    def saving(self, version: int) -> None:
        """Version `version` was committed and is being saved: later ones wait for it."""
        self._saving.add(version)

    def saved(self, version: int, emit: Emit, events: Sequence[RuntimeEvent]) -> None:
        """Version `version` was saved (or its save failed): show `events`, which bring it."""
        self._saving.discard(version)
        self.show(version, emit, events)

    def show(self, version: int, emit: Emit, events: Sequence[RuntimeEvent]) -> None:
        """Show `events`, which bring version `version`, through `emit`: now, unless an earlier
        version is still being saved; then those that waited for it and can go now."""
        if self._waits(version):
            self._held.append((version, emit, events))
            return
        emit(events)
        self._held.sort(key=lambda held: held[0])
        while self._held and not self._waits(self._held[0][0]):
            _, later, waited = self._held.pop(0)
            later(waited)

    def _waits(self, version: int) -> bool:
        return any(saving < version for saving in self._saving)
