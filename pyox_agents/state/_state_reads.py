"""The read-only properties of a `State`, each a pure function of its history."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pyox_agents.state.frozen import FrozenDict
from pyox_agents.state.history import HistoryEntry
from pyox_agents.state.messages import Message, ToolCall, Usage
from pyox_agents.state.recorder import Recorder
from pyox_agents.state.stopped import Stopped

__all__ = ["StateReads"]


class StateReads(Recorder):
    """What a `State` shows: its id, messages, usage and the rest, read under its lock."""

    @property
    def id(self) -> str:
        """The name a store saves this State under. Given with State(id=...), or random."""
        return self._id

    @property
    def parent_id(self) -> str | None:
        """The id of the State whose tool call started this one as a subagent, or None.

        It is the first link in the history (RunStartEntry.parent_id), so it is the same while
        it runs and after store.load.
        """
        with self._lock:
            return self._fold.parent_id

    @property
    def parent_call_id(self) -> str | None:
        """The ToolCall.id of the parent's call that started this State, or None with parent_id."""
        with self._lock:
            return self._fold.parent_call_id

    @property
    def history(self) -> tuple[HistoryEntry, ...]:
        """Everything that happened, oldest first. Entries are only ever added."""
        return self.snapshot().history

    @property
    def messages(self) -> tuple[Message, ...]:
        """The messages the model will see at the next think.

        Results of this turn's tool calls go in together once the last call has a result.
        Messages added in the meantime, or while think waits on the model, go in after them.
        """
        return self.snapshot().messages

    @property
    def pending_calls(self) -> tuple[ToolCall, ...]:
        """Tool calls the model requested this turn that have no result yet, in request order."""
        with self._lock:
            return self._fold.pending_calls

    @property
    def turn(self) -> int:
        """Turns so far: each think adds 1 while it waits on the model; a failed think takes it
        back."""
        with self._lock:
            return self._fold.turn

    @property
    def usage(self) -> Usage:
        """Tokens, requests and cost of every think, ask and compact, and of subagents.

        Subagents' usage is added when their tool call closes. restore does not lower it.
        """
        with self._lock:
            return self._fold.usage

    @property
    def extra_data(self) -> FrozenDict:
        """A read-only dict for your own values (JSON); change it with edit_extra_data()."""
        with self._lock:
            return self._fold.extra_data

    @property
    def finished(self) -> bool:
        """Whether finish() was called. A finished State cannot run again."""
        with self._lock:
            return self._fold.finished

    @property
    def answer(self) -> Any:
        """The finish(answer) value if one was given, else the text of the latest reply without
        tool calls, else None. In JSON form (a dataclass or pydantic model comes back a dict)."""
        with self._lock:
            return self._fold.answer

    @property
    def stopped(self) -> Stopped | None:
        """Why this run is set to stop, or None until something decides that."""
        with self._lock:
            return self._fold.stopped

    @property
    def created_at(self) -> datetime | None:
        """The at of the first history entry (UTC), or None for a State with no history yet."""
        with self._lock:
            return self._fold.created_at

    @property
    def updated_at(self) -> datetime | None:
        """The at of the latest history entry (UTC), or None for a State with no history yet."""
        with self._lock:
            return self._fold.updated_at
