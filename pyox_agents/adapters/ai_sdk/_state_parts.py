"""The shared state in a UI message stream: one persistent `data-state` part (id "state") per
assistant message, replaced in place, and a transient `data-state-delta` per change.

Each change goes out as its RFC 6902 patch (the ops of AG-UI's `STATE_DELTA`), a few hundred
bytes however large the state is. The whole state (`data-state`) is written:

- at the start (the state the run starts from), unless the client already has exactly that
  state (its last `data-state` part, with no edits of its own);
- then, by the agent's `state_snapshots`: after every change ("change"), at the end of a step
  that changed it ("step", the default), or not before the end ("finish");
- at the end, when the last one written is not the final state (or none was written), so the
  message always ends with one `data-state` part equal to the final state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyox_agents.events import NOT_KEPT, StateSnapshots
from pyox_agents.state.patch import apply_json

__all__ = ["STATE_ID", "VERSION_ID", "StateParts", "state_parts"]

STATE_ID = "state"
"""The id of the `data-state` part: one part per assistant message, replaced in place."""
VERSION_ID = "state-version"
"""The id of the `data-state-version` part (`{version}`): the number of the state the message's
`data-state` part holds, where the server numbers its threads' versions. The client sends it
back with the message, so the server knows exactly which version the page last had."""


def state_parts(state: Any, version: int = 0) -> list[dict[str, Any]]:
    """The `data-state` part of `state`, then the `data-state-version` part of its number
    where versions are numbered (0: not)."""
    return [{"type": "data-state", "id": STATE_ID, "data": state}, *_version_part(version)]


def _version_part(version: int) -> list[dict[str, Any]]:
    if not version:
        return []
    return [{"type": "data-state-version", "id": VERSION_ID, "data": {"version": version}}]


class StateParts:
    """The `data-state` / `data-state-delta` chunks of one stream.

    `seen` is the state the client is known to hold (None: unknown); `mode` is when whole
    snapshots are written besides the patches (`StateSnapshots`).
    """

    def __init__(self, mode: StateSnapshots, seen: Any = None) -> None:
        self.mode = mode
        self.known = False  # False until RunStarted: no snapshot of a state never seen
        self._seen = seen
        self.state: Any = None
        """The latest state the stream knows."""
        self.version = 0
        """Its number (0: the server numbers no versions)."""
        self._written = False  # a snapshot went out in this stream
        self._behind = False  # a change came after the last snapshot written

    def opening(self, state: Any, version: int = 0) -> list[dict[str, Any]]:
        """The run starts from `state`, version `version`."""
        self.state, self.known, self.version = state, True, version
        if self._seen is not None and state == self._seen:
            return _version_part(version)  # the client has it: its next patches apply to it
        return self._snapshot()

    def changed(self, delta: Sequence[Mapping[str, Any]], state: Any,
                version: int = 0) -> list[dict[str, Any]]:
        """A change was applied: its patch (its id, `v<version>`, where versions are
        numbered), and the snapshot if every change gets one. A change that comes without
        its state (`NOT_KEPT`: a served run's log keeps only the latest) is applied to the
        last."""
        part: dict[str, Any] = {"type": "data-state-delta", "data": [dict(op) for op in delta],
                                "transient": True}
        if version:
            part["id"] = f"v{version}"
        out = [part]
        self.version = version
        if state is NOT_KEPT:
            if not self.known:  # (a change read without the state before it: none to show)
                return out
            state = apply_json(self.state, delta)
        self.state, self.known = state, True
        if self.mode == "change":
            out += self._snapshot()
        else:
            self._behind = True
        return out

    def step_end(self) -> list[dict[str, Any]]:
        """A step ends: its snapshot, in "step" mode when the step changed the state."""
        return self._snapshot() if self.mode == "step" and self._behind else []

    def final(self, state: Any) -> list[dict[str, Any]]:
        """The run ends with `state`: the last snapshot, unless the client has it already."""
        if not self.known:
            return []
        if self._written and not self._behind and state == self.state:
            return []
        self.state = state
        return self._snapshot()

    def _snapshot(self) -> list[dict[str, Any]]:
        self._written, self._behind = True, False
        return state_parts(self.state, self.version)
