"""The value of a State, folded from its history one entry at a time.

`StateSnapshot` is the frozen public value. `Fold` is the reducer behind it: the snapshot's fields
plus the bookkeeping a State needs between entries (messages held while calls are pending or a
think waits, the results gathered for this turn, which request waits on the model). Each entry
is checked against the fold before it changes anything, so the same rules refuse a bad call on a
live State and a bad entry in a history being rebuilt.
"""

from __future__ import annotations

import copy as _copy
import dataclasses
import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from pyox_agents.state.frozen import FrozenDict
from pyox_agents.state.history import (
    ENTRY_TYPES,
    ClearedToolResults,
    Compacted,
    ContextChangeEntry,
    HistoryEntry,
    Purpose,
    Restored,
    Stopped,
    StoppedByFinish,
)
from pyox_agents.state.messages import NO_USAGE, Message, ToolCall, Usage

__all__ = [
    "CLEARED", "Fold", "Inconsistent", "StateSnapshot", "cleared", "replay", "summary_message",
]

CLEARED = "(cleared: kept in history)"
"""What `clear_tool_results` puts in place of an older tool result."""


@dataclass(frozen=True)
class StateSnapshot:
    """The value of a State at one moment: what `state.snapshot()` returns and every property reads.

    Frozen, so it never changes while you hold it. Every field is a pure function of history:
    `State(history=snapshot.history).snapshot() == snapshot`. `==` compares all fields except
    `created_at` and `updated_at`. Pass it to `state.restore(snapshot)` to go back to it.
    """

    history: tuple[HistoryEntry, ...] = ()
    messages: tuple[Message, ...] = ()
    pending_calls: tuple[ToolCall, ...] = ()
    turn: int = 0
    usage: Usage = field(default_factory=Usage)
    extra_data: FrozenDict = field(default_factory=FrozenDict)
    finished: bool = False
    answer: Any = None
    stopped: Stopped | None = None
    created_at: datetime.datetime | None = field(default=None, compare=False)
    updated_at: datetime.datetime | None = field(default=None, compare=False)


class Inconsistent(Exception):
    """An entry that cannot follow the ones before it; the message says why and what to do."""


def summary_message(summary: str) -> Message:
    """The message `compact(summary)` puts after the first user message."""
    return Message.notice(f"Summary of the work so far (older messages were compacted):\n{summary}")


def cleared(messages: list[Message], keep_last: int) -> list[Message]:
    tool_positions = [i for i, m in enumerate(messages) if m.role == "tool"]
    to_clear = tool_positions[: max(len(tool_positions) - keep_last, 0)]
    out = list(messages)
    for i in to_clear:
        if out[i].content != CLEARED or out[i].images:
            out[i] = dataclasses.replace(out[i], content=CLEARED, images=())
    return out


_NO_IDS: frozenset[str] = frozenset()
"""No child ids: one instance for every fold (an empty frozenset is not shared by itself)."""


class Fold:
    """The reducer: the State's value after the entries folded so far, changed one entry at a time.

    Not thread-safe by itself: a State calls it under its lock.
    """

    __slots__ = ("answer", "answer_given", "calls", "child_ids", "created_at", "extra_data",
                 "finished", "held", "length", "messages", "parent_call_id", "parent_id",
                 "request", "results", "started", "stopped", "turn", "updated_at", "usage")

    def __init__(self) -> None:
        self.length = 0
        self.created_at: datetime.datetime | None = None
        self.updated_at: datetime.datetime | None = None
        self.usage = NO_USAGE
        self.started = False
        self.parent_id: str | None = None
        self.parent_call_id: str | None = None
        self.child_ids: frozenset[str] = _NO_IDS
        # What restore puts back:
        self.messages: list[Message] = []
        self.calls: tuple[ToolCall, ...] = ()  # this turn's calls, in request order, while any is
        self.results: dict[str, Message] = {}  # open; their results so far, by call id
        self.held: tuple[Message, ...] = ()  # added while calls are pending or a think waits
        self.turn = 0
        self.extra_data = FrozenDict()
        self.finished = False
        self.answer: Any = None
        self.answer_given = False  # whether finish(answer) gave one
        self.stopped: Stopped | None = None
        self.request: Purpose | None = None  # the request waiting on the model

    @property
    def pending_calls(self) -> tuple[ToolCall, ...]:
        """This turn's calls without a result, in request order."""
        return tuple(c for c in self.calls if c.id not in self.results)

    def copy(self) -> Fold:
        """An independent copy."""
        other = _copy.copy(self)
        other._take(self)
        return other

    def _take(self, other: Fold) -> None:
        """Take the values restore puts back from `other` (copying its containers)."""
        self.messages, self.calls = list(other.messages), other.calls
        self.results, self.held = dict(other.results), other.held
        self.turn, self.extra_data, self.finished = other.turn, other.extra_data, other.finished
        self.answer, self.answer_given = other.answer, other.answer_given
        self.stopped, self.request = other.stopped, other.request

    def snapshot(self, history: tuple[HistoryEntry, ...]) -> StateSnapshot:
        """The public value, with `history` (the entries folded so far)."""
        return StateSnapshot(
            history=history, messages=tuple(self.messages), pending_calls=self.pending_calls,
            turn=self.turn, usage=self.usage, extra_data=self.extra_data,
            finished=self.finished, answer=self.answer, stopped=self.stopped,
            created_at=self.created_at, updated_at=self.updated_at)

    def apply(self, entry: HistoryEntry, checkpoint: Callable[[int], Fold]) -> None:
        """Fold `entry` in; `checkpoint(n)` gives the fold after the first n entries (restore).

        Raises:
            Inconsistent: the entry cannot follow the ones before it; nothing changed.
        """
        getattr(self, "_" + entry.kind)(entry, checkpoint)
        self.length += 1
        if self.created_at is None:
            self.created_at = entry.at
        self.updated_at = entry.at

    # --- one method per kind: check first, then change ----------------------------------------

    def _import(self, entry: Any, _: object) -> None:
        if self.length:
            raise Inconsistent("an import entry (the starting messages) can only be the first "
                               "entry: add later messages with add_message")
        self.messages.extend(entry.content)

    def _extra_data(self, entry: Any, _: object) -> None:
        self.extra_data = entry.content

    def _run_start(self, entry: Any, _: object) -> None:
        if self.finished:
            raise Inconsistent("the State is finished, so it cannot run again: restore a "
                               "snapshot taken before finish(), or start a new State from "
                               "state.messages")
        if self.request == "think":
            raise Inconsistent("a think is still waiting on the model: end it (a reply or an "
                               "error) before a new run starts")
        link = (entry.parent_id, entry.parent_call_id)
        if self.started and link != (self.parent_id, self.parent_call_id):
            raise Inconsistent(f"this run's parent link {link} differs from the first run's "
                               f"{(self.parent_id, self.parent_call_id)}: a State keeps the "
                               f"parent it was started by")
        self.started = True
        self.parent_id, self.parent_call_id = link
        self.stopped = None

    def _user_message(self, entry: Any, _: object) -> None:
        if self.calls or self.request == "think":
            self.held = (*self.held, entry.content)
        else:
            self.messages.append(entry.content)

    _notice = _user_message

    def _model_request(self, entry: Any, _: object) -> None:
        purpose = entry.purpose
        if self.request is not None:
            raise Inconsistent(f"a {self.request} request is already waiting on the model; "
                               f"wait for its reply before a {purpose}")
        if self.finished and purpose != "compact":
            raise Inconsistent(f"the State is finished, so it cannot {purpose}: restore a "
                               f"snapshot taken before finish(), or start a new State from "
                               f"state.messages")
        if self.calls and purpose != "ask":
            raise Inconsistent(self.pending_text(f"{purpose} asks the model again"))
        if purpose == "think":
            self.turn += 1
        self.request = purpose

    def _model_reply(self, entry: Any, _: object) -> None:
        if self.request != entry.purpose:
            raise Inconsistent(f"a {entry.purpose} reply needs a {entry.purpose} model_request "
                               f"waiting before it (waiting: {self.request})")
        reply = entry.content
        ids = [c.id for c in reply.tool_calls]
        if len(set(ids)) != len(ids):
            raise Inconsistent(f"the reply has two tool calls with one id: {ids}; each call "
                               f"needs its own id")
        self.usage += reply.usage
        self.request = None
        if entry.purpose != "think":
            return
        self.messages.append(Message.assistant(reply.text, reply.tool_calls))
        if reply.tool_calls:
            self.calls, self.results = tuple(reply.tool_calls), {}
        else:
            if not self.answer_given:
                self.answer = reply.text
            self._release_held()

    def _tool_result(self, entry: Any, _: object) -> None:
        call_id = entry.call.id
        if call_id in self.results or all(c.id != call_id for c in self.calls):
            pending = ", ".join(f"{c.name} [{c.id}]" for c in self.pending_calls) or "none"
            raise Inconsistent(f"no pending tool call has id {call_id!r} ({entry.call.name}); "
                               f"pending: {pending}")
        self.results[call_id] = entry.message
        self.usage += entry.usage
        if entry.child_ids:
            self.child_ids = self.child_ids.union(entry.child_ids)
        if len(self.results) == len(self.calls):
            self.messages.extend(self.results[c.id] for c in self.calls)
            self.calls, self.results = (), {}
            self._release_held()

    def _state_change(self, entry: Any, _: object) -> None:
        pass  # the shared state is not part of the snapshot: see shared_state_from

    def _context_change(self, entry: ContextChangeEntry, checkpoint: Callable[[int], Fold]) -> None:
        content = entry.content
        if self.calls:
            raise Inconsistent(self.pending_text(f"{entry.change} changes the messages"))
        match content:
            case Compacted(summary=summary):
                first = next((m for m in self.messages if m.role == "user"), None)
                self.messages = [*([first] if first else []), summary_message(summary)]
            case ClearedToolResults(keep_last=keep_last):
                if keep_last < 0:
                    raise Inconsistent(f"keep_last must be >= 0, got {keep_last}")
                self.messages = cleared(self.messages, keep_last)
            case Restored(history_length=length):
                self._restore(length, checkpoint)

    def _restore(self, length: int, checkpoint: Callable[[int], Fold]) -> None:
        if not 0 <= length <= self.length:
            raise Inconsistent(f"restore goes back to history length {length}, but only "
                               f"{self.length} entries come before it")
        if self.request is not None:
            raise Inconsistent("the model is being waited on" if self.request != "compact"
                               else "a compaction is under way")
        target = checkpoint(length)
        if target.request is not None:
            raise Inconsistent("the snapshot was taken while the model was being waited on: "
                               "restore a snapshot taken between turns")
        self._take(target)

    def _finish(self, entry: Any, _: object) -> None:
        self.finished = True
        if entry.content is not None:
            self.answer, self.answer_given = entry.content, True
        self.stopped = StoppedByFinish(self.answer)

    def _stop(self, entry: Any, _: object) -> None:
        self.stopped = entry.content

    def _error(self, entry: Any, _: object) -> None:
        if entry.during == "run":
            self.stopped = None
            return
        if self.request != entry.during:
            raise Inconsistent(f"an error for a {entry.during} needs a {entry.during} "
                               f"model_request waiting before it (waiting: {self.request})")
        self.request = None
        if entry.during == "think":
            self.turn -= 1
            self._release_held()

    def _release_held(self) -> None:
        if self.held:
            self.messages.extend(self.held)
            self.held = ()

    def pending_text(self, what: str) -> str:
        names = ", ".join(f"{c.name} [{c.id}]" for c in self.pending_calls)
        return (f"tool calls are pending ({names}): every tool call needs a result before "
                f"{what}; record their results first")


def replay(entries: Sequence[object]) -> Fold:
    """The fold of `entries`, checked one by one (what `State(history=...)` rebuilds).

    Raises:
        TypeError: an item that is not a history entry (its index is given).
        ValueError: an entry that cannot follow the ones before it (its index is given).
    """
    targets = {e.content.history_length for e in entries
               if isinstance(e, ContextChangeEntry) and isinstance(e.content, Restored)}
    checkpoints: dict[int, Fold] = {}
    fold = Fold()
    if 0 in targets:
        checkpoints[0] = fold.copy()
    for index, entry in enumerate(entries):
        if not isinstance(entry, ENTRY_TYPES):
            raise TypeError(f"history[{index}] is a {type(entry).__name__}, not a history entry: "
                            f"pass other.history, or entries a store loaded")
        known = cast(HistoryEntry, entry)
        try:
            fold.apply(known, checkpoints.__getitem__)
        except Inconsistent as exc:
            raise ValueError(f"history[{index}] ({known.kind}) cannot follow the entries before "
                             f"it: {exc}") from None
        if index + 1 in targets:
            checkpoints[index + 1] = fold.copy()
    return fold
