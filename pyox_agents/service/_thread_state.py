"""A thread's shared state as a server keeps it between runs, and a client's edits merged into it.

The library keeps no shared state between runs (seed 004: "Nothing is stored"); a server is an
app, and keeping a thread's latest state, so that a reloaded page gets it back, is its own
choice (`create_app(..., keep_state=True)`, the default). It keeps the latest version and the
changes back to the `RECENT` versions before it, so that it can tell which version a client last
saw and take the client's own edits against that version.

A client's state is the person's edits on top of the version the client last saw: `merge` takes
the diff from that version to the client's state and rebases it onto the latest version with the
parallel tools' rules (`pyox_agents.state.patch.rebase`): disjoint edits are all kept. Where the
person and a run both wrote one place, the person's write wins (the run has finished: a server
runs one run per thread, and a client's request waits until it ends).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyox_agents.state.frozen import JSON, freeze
from pyox_agents.state.patch import apply, apply_json, diff
from pyox_agents.state.rebase import Conflict, apart, rebase

__all__ = ["RECENT", "ThreadState", "aligned", "edit_running", "json_equal", "merge"]

RECENT = 16
"""How many versions of a thread's state a server keeps (the latest and the ones before it)."""


def json_equal(a: Any, b: Any) -> bool:
    """Whether two JSON values are the same JSON (`true` is not `1`, `-0.0` is not `0.0`)."""
    return _equal(a, b)


@dataclass
class ThreadState:
    """One thread's kept shared state: the latest `state`, its `version`, and the way back.

    `back[i]` holds the RFC 6902 ops that turn version `version - i` into the one before it, so
    the `RECENT` latest versions can be rebuilt without keeping each in full.
    """

    version: int = 0
    state: JSON = None
    back: list[list[dict[str, Any]]] = field(default_factory=list)
    _frozen: JSON = field(default=None, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ThreadState:
        """A ThreadState from what `to_json` gave (as a store returns it)."""
        return cls(int(data["version"]), data["state"], [list(ops) for ops in data["back"]])

    def to_json(self) -> dict[str, Any]:
        """The JSON a store keeps."""
        return {"version": self.version, "state": self.state, "back": self.back}

    def add(self, state: Any) -> None:
        """Record `state` as the next version, unless it is the same JSON as the latest."""
        old = self.frozen()
        new = aligned(old, state)
        if self.version and not diff(old, new):
            return
        if self.version:
            self.back.insert(0, [op.to_json() for op in diff(new, old)])
            del self.back[RECENT - 1:]
        self.version += 1
        self.state, self._frozen = new, new

    def copy(self) -> ThreadState:
        """An independent copy (versions added to it leave this one as it is)."""
        return ThreadState(self.version, self.state, list(self.back), self._frozen)

    def frozen(self) -> JSON:
        """The latest version, read-only."""
        if self._frozen is None:
            self._frozen = freeze(self.state, "state")
        return self._frozen

    def versions(self) -> Iterator[tuple[int, JSON]]:
        """The kept versions (number, frozen value), the latest first."""
        value = self.frozen()
        yield self.version, value
        for number, ops in enumerate(self.back, start=1):
            value = apply_json(value, ops)
            yield self.version - number, value

    def is_latest(self, state: Any) -> bool:
        """Whether `state` is the same JSON as the latest version (one walk of `state`)."""
        return bool(self.version) and aligned(self.frozen(), state) is self.frozen()

    def holds(self, state: Any) -> bool:
        """Whether `state` is the same JSON as one of the kept versions."""
        if not self.version:
            return False
        target = aligned(self.frozen(), state)
        return any(not diff(value, target) for _, value in self.versions())

    def base_for(self, seen: Any) -> JSON:
        """The kept version a client holding `seen` last received.

        `seen` is the version the client echoes when its protocol does (the AI SDK's
        `data-state` part), else its state with the person's edits (AG-UI echoes only that):
        then the version it equals, or, when the person edited it, the one closest to it (the
        fewest changes; the newer on a tie).
        """
        return self._closest(aligned(self.frozen(), seen))

    def _closest(self, target: JSON) -> JSON:
        """The kept version `target` (aligned on the latest) equals, else the closest to it."""
        best: tuple[int, JSON] | None = None
        for _, value in self.versions():
            changes = len(diff(value, target))
            if changes == 0:
                return value
            if best is None or changes < best[0]:
                best = (changes, value)
        assert best is not None
        return best[1]


def merge(kept: ThreadState, client: Any, seen: Any) -> JSON:
    """The state a run starts from: the client's edits (`client` against the kept version it
    last saw, found from `seen`) rebased onto the latest kept version.

    Disjoint edits of the person and of runs are all kept (the parallel tools' rebase). Where
    both wrote one place, the person's write wins, and the runs' other changes are kept; if the
    two cannot be combined at all, the client's state is taken as sent.
    """
    latest = kept.frozen()
    mine_value = aligned(latest, client)
    base = kept._closest(mine_value if seen is client else aligned(latest, seen))
    mine = diff(base, mine_value)
    if not mine:
        return latest
    theirs = diff(base, latest)
    if not theirs:
        return mine_value
    try:
        return apply(latest, rebase(mine, theirs))
    except Conflict:
        pass
    # The same place was written by both: the person's write wins over the finished run.
    others = apart(theirs, mine)
    try:
        return apply(mine_value, rebase(others, mine))
    except (Conflict, ValueError):
        return mine_value


def edit_running(versions: ThreadState, client: Any, seen: Any) -> JSON | None:
    """The person's edits (`client` against the version it saw, found from `seen`) applied to
    the latest version of a run that is still going (paused for a person): rebased onto what it
    committed since, with its refusal rule. None when the person changed nothing.

    Raises:
        Conflict: the run wrote a place the person wrote too (nothing of the edit applies).
    """
    latest = versions.frozen()
    mine_value = aligned(latest, client)
    base = versions._closest(mine_value if seen is client else aligned(latest, seen))
    mine = diff(base, mine_value)
    if not mine:
        return None
    return apply(latest, rebase(mine, diff(base, latest)))


def aligned(old: JSON, new: Any) -> JSON:
    """`new` frozen, made of `old`'s own (frozen) parts wherever it holds the same JSON.

    A client's state arrives as fresh JSON; `diff` (made for versions that share structure)
    would see every item of a list that changed length as changed. Aligned on the kept
    version, only what really differs is new: list items are matched in place, then from the
    end (an item added or removed shifts the others).
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out: dict[str, Any] = {}
        same = len(new) == len(old)
        for key, value in new.items():
            child = aligned(old[key], value) if key in old else value
            same = same and key in old and child is old[key]
            out[key] = child
        return old if same else freeze(out, "state")
    if isinstance(old, list) and isinstance(new, list):
        count, items = len(old), []
        same = count == len(new)
        for index, value in enumerate(new):
            end = index - len(new) + count  # the same place counted from the end
            if index < count and _equal(old[index], value):
                child = old[index]
            elif 0 <= end < count and _equal(old[end], value):
                child = old[end]
            else:
                child = aligned(old[index], value) if index < count else value
            same = same and child is old[index]
            items.append(child)
        return old if same else freeze(items, "state")
    return old if _equal(old, new) else freeze(new, "state")


def _equal(a: Any, b: Any) -> bool:
    """The same JSON (type-strict: `True` is not `1`, `-0.0` is not `0.0`)."""
    if a is b:
        return True
    if isinstance(a, dict):
        return (isinstance(b, dict) and len(a) == len(b)
                and all(key in b and _equal(value, b[key]) for key, value in a.items()))
    if isinstance(a, list):
        return (isinstance(b, list) and len(a) == len(b)
                and all(_equal(x, y) for x, y in zip(a, b, strict=True)))
    if type(a) is not type(b) or isinstance(b, dict | list) or a != b:
        return False
    return not isinstance(a, float) or math.copysign(1.0, a) == math.copysign(1.0, b)
