"""The recording core of a `State`: its lock, history and fold, and the agent loop's API.

`State` (in `conversation`) adds the public constructor, properties and methods. The methods here
are internal: the agent loop calls them to record what a run does, and stores call
`_entries_since` to append only new entries. Each appends the right entry under the State's lock
and folds it into the current value, refusing (ValueError) an entry that cannot follow.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from pyox_agents.state.history import (
    ErrorEntry,
    HistoryEntry,
    ModelReplyEntry,
    ModelRequestEntry,
    Outcome,
    Purpose,
    RequestSummary,
    RunStartEntry,
    StateChangeEntry,
    StopEntry,
    ToolResultEntry,
    utc_now,
)
from pyox_agents.state.jsonvalue import frozen_delta
from pyox_agents.state.messages import NO_USAGE, Image, Reply, ToolCall, Usage
from pyox_agents.state.snapshot import Fold, Inconsistent, StateSnapshot, replay
from pyox_agents.state.stopped import Stopped

__all__ = ["Recorder"]


class Recorder:
    """A State's history and value, changed only by appending entries under one lock."""

    def _setup(self, id: str, fold: Fold, history: list[HistoryEntry],
               children: dict[str, Any], child_store: object | None) -> None:
        self._id = id
        self._lock = threading.RLock()
        self._fold = fold
        self._history = history
        self._cache: StateSnapshot | None = None
        self._children = children  # subagent States by id, shared with forks
        self._store: object | None = None
        self._child_store = child_store  # where children not in memory are loaded from
        self._editing = False

    # --- recording ------------------------------------------------------------------------------

    def _record(self, entry: HistoryEntry, what: str) -> None:
        """Fold `entry` in and append it, under the lock; ValueError if it cannot follow."""
        with self._lock:
            try:
                self._fold.apply(entry, self._checkpoint)
            except Inconsistent as exc:
                raise ValueError(f"cannot {what}: {exc}") from None
            self._history.append(entry)
            self._cache = None

    def _checkpoint(self, length: int) -> Fold:
        return replay(self._history[:length])

    def snapshot(self) -> StateSnapshot:
        """The current value of this State: a frozen StateSnapshot that restore can go back to."""
        with self._lock:
            if self._cache is None:
                self._cache = self._fold.snapshot(tuple(self._history))
            return self._cache

    # --- internal API for the agent loop and stores ---------------------------------------------

    def _check_can_run(self) -> None:
        """Internal: ValueError if this State is finished (think, use_tools, ask, run call it)."""
        with self._lock:
            if self._fold.finished:
                raise ValueError("this State is finished (finish() was called), so it cannot run "
                                 "again: restore a snapshot taken before finish(), or start a new "
                                 "State(messages=state.messages)")

    def _start_run(self, parent_id: str | None = None, parent_call_id: str | None = None, *,
                   run_id: str | None = None) -> None:
        """Internal: record a run's start; `stopped` becomes None.

        The first run sets the parent link; later ones carry the same. A run started without
        one (`agent.run` of a subagent's State, a retry, a fork) repeats the State's own: a
        State keeps its parent link. ValueError if the State is finished or the link given
        differs.
        """
        with self._lock:
            if parent_id is None and parent_call_id is None:
                parent_id, parent_call_id = self._fold.parent_id, self._fold.parent_call_id
            self._record(RunStartEntry(at=utc_now(), content=run_id, parent_id=parent_id,
                                       parent_call_id=parent_call_id), "start a run")

    def _begin_request(self, purpose: Purpose, message_count: int,
                       tool_names: Sequence[str] = ()) -> None:
        """Internal: a model request begins waiting (`think` adds a turn; `ask`, `compact`).

        ValueError if a request already waits, the State is finished (think, ask), or calls are
        pending (think, compact).
        """
        self._record(ModelRequestEntry(at=utc_now(), purpose=purpose,
                                       content=RequestSummary(message_count, tuple(tool_names))),
                     purpose)

    def _end_request(self, purpose: Purpose, reply: Reply) -> None:
        """Internal: the model answered the open request; its usage is added.

        For a think, messages gain the assistant message, pending_calls become its tool calls,
        and held messages go in if there are none.
        """
        self._record(ModelReplyEntry(at=utc_now(), purpose=purpose, content=reply),
                     f"record a {purpose} reply")

    def _fail_request(self, purpose: Purpose, error: str) -> None:
        """Internal: the open request failed (a think takes its turn back, held messages go in)."""
        self._record(ErrorEntry(at=utc_now(), during=purpose, content=error),
                     f"record a failed {purpose}")

    def _begin_think(self, message_count: int, tool_names: Sequence[str]) -> None:
        """Internal: a think begins waiting on the model (turn + 1); see `_begin_request`."""
        self._begin_request("think", message_count, tool_names)

    def _end_think(self, reply: Reply) -> None:
        """Internal: the think's reply; see `_end_request`."""
        self._end_request("think", reply)

    def _fail_think(self, error: str) -> None:
        """Internal: the think failed (also call it when it is cancelled): the turn goes back."""
        self._fail_request("think", error)

    def _fail_run(self, error: str) -> None:
        """Internal: the run ended with an exception; `stopped` becomes None."""
        self._record(ErrorEntry(at=utc_now(), during="run", content=error), "record a run error")

    def _add_tool_result(self, call: ToolCall, outcome: Outcome, result: Any, *, is_error: bool,
                         child_ids: Sequence[str] = (), usage: Usage | None = None,
                         text: str | None = None, images: Sequence[Image] = ()) -> None:
        """Internal: a pending call closed.

        `result` is its JSON value; `text` what the model reads (default: `result` if a str,
        else its JSON). Subagents' `usage` is added. Once the last pending call has a result,
        the tool messages go into messages in request order, then held messages.
        """
        entry = ToolResultEntry(at=utc_now(), content=result, call=call, outcome=outcome,
                                is_error=is_error, text=text, images=tuple(images),
                                child_ids=tuple(child_ids), usage=usage or NO_USAGE)
        self._record(entry, f"record the result of {call.name}")

    def _add_state_change(self, call_id: str, delta: Sequence[Mapping[str, Any]],
                          version: int) -> None:
        """Internal: a `StateChangeEntry` (RFC 6902 ops committed as `version`).

        Runs no longer record the shared state (it is the app's, not the conversation's); this
        stays for histories in the earlier form, which must still be written and read.
        """
        ops = frozen_delta(list(delta))
        entry = StateChangeEntry(at=utc_now(), content=ops, call_id=call_id,
                                 version=version)
        self._record(entry, "record a state change")

    def _stop(self, stopped: Stopped) -> None:
        """Internal: set why the run stops (StoppedByPermission, StoppedByUntil, ...)."""
        self._record(StopEntry(at=utc_now(), content=stopped), "stop")

    def _bind_store(self, store: object) -> None:
        """Internal: the store this State is saved in, with `load(id)` / `aload(id)` for children.

        An async-only store has `async_only = True` (or a coroutine `load`).
        """
        with self._lock:
            self._store = store
            self._child_store = store

    def _entry_count(self) -> int:
        """Internal: how many entries the history holds (a save writes those it had then)."""
        with self._lock:
            return len(self._history)

    def _entries_since(self, length: int) -> tuple[HistoryEntry, ...]:
        """Internal: the entries after the first `length` (what a store has not saved yet)."""
        with self._lock:
            return tuple(self._history[length:])
