"""What the model is told about a person's changes to the shared state during a run: a short
note, once, at its next turn (the agent's `state_note`: on by default, off, or the app's own).

The model sees the state only through its tools (seed 004); a change a person made while it
worked is news it would otherwise act against (ticking a todo the person just deleted). The
note names each changed place and the new value, cut short, never the whole state.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from pyox_agents.events import StateChanged
from pyox_agents.runtime._handle import RunEnded
from pyox_agents.state.messages import Message
from pyox_agents.state.patch import Op
from pyox_agents.state.shared import Commit, SharedState

__all__ = ["PersonEdits", "StateNote", "describe_edits", "state_note"]

StateNote: TypeAlias = bool | Callable[[Sequence[Mapping[str, Any]]], str | None]
"""`Agent(state_note=...)`: True (the default note), False (none), or a function of the
person's changes (RFC 6902 operations, in order) that gives the note's text (None: no note)."""

_SHOWN = 12
"""How many changes the default note lists (then how many more there were)."""
_VALUE_CHARS = 80
"""How much of a changed value the default note shows."""


class PersonEdits:
    """A person's edits of a run's state while it goes on (`RunHandle.edit_state`): each a
    commit the run streams as a `StateChanged` with `call_id` "", kept for the note the model
    reads at its next turn. None once the run has told its end (`ended`)."""

    __slots__ = ("ended", "ops")

    def __init__(self) -> None:
        self.ops: list[dict[str, Any]] = []
        self.ended = False

    def commit(self, shared: SharedState, ops: Sequence[Op], base_version: int,
               send: Callable[[StateChanged], None]) -> Commit | None:
        """Commit `ops`, made on `base_version`; raises as `SharedState.commit_edit`, or
        `RunEnded`."""
        if self.ended:
            raise RunEnded("the run has ended: it takes no more edits")
        commit = shared.commit_edit(tuple(ops), base_version)
        if commit is not None:
            send(StateChanged(commit.delta, commit.state, "", commit.version))
            self.ops.extend(commit.delta)
        return commit

    def note(self, option: StateNote) -> list[Message]:
        """The note of the edits since the model's last turn (once), as a system message."""
        if not self.ops:
            return []
        edits, self.ops = self.ops, []
        text = state_note(option, edits)
        return [Message.system(text)] if text else []


def state_note(option: StateNote, edits: Sequence[Mapping[str, Any]]) -> str | None:
    """The note for `edits` as the agent's `option` makes it, or None."""
    if option is False or not edits:
        return None
    if option is True:
        return describe_edits(edits)
    note = option(edits)
    if note is not None and not isinstance(note, str):
        raise TypeError(f"the state_note function returned {type(note).__name__}, not str "
                        "or None")
    return note or None


def describe_edits(edits: Sequence[Mapping[str, Any]]) -> str:
    """The default note: "The person changed the shared state since your last turn:" and one
    line per change ("set /todos/1/done to true", "removed /todos/0", ...)."""
    lines = [_line(op) for op in edits[:_SHOWN]]
    if len(edits) > _SHOWN:
        lines.append(f"... and {len(edits) - _SHOWN} more changes")
    return ("The person changed the shared state since your last turn (take it as it is "
            "now; do not undo it):\n" + "\n".join(f"- {line}" for line in lines))


def _line(op: Mapping[str, Any]) -> str:
    path = op.get("path") or "/"
    if op.get("op") == "remove":
        return f"removed {path}"
    value = json.dumps(op.get("value"), ensure_ascii=False)
    if len(value) > _VALUE_CHARS:
        value = value[:_VALUE_CHARS] + "…"
    return f"added {value} at {path}" if op.get("op") == "add" else f"set {path} to {value}"
