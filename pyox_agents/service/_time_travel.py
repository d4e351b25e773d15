"""Going back in a thread: a fork at a run or a user message into a new thread (seed 000's
`fork`: the conversation, and the shared state, as they were then), a rewind of the thread to
right after one of its runs, and the undo of one run's changes to the shared state (reversed and
rebased onto the latest version with the parallel tools' rules; a conflict is refused, naming
the place)."""

from __future__ import annotations

import dataclasses
from typing import Any

from pyox_agents._run_request import RequestError
from pyox_agents.service._checkpoints import before_and_after
from pyox_agents.service._history import Walk, run_end, walk
from pyox_agents.service._kept_writes import write_kept
from pyox_agents.service._owned_threads import thread_store
from pyox_agents.service._runs import RunService
from pyox_agents.service._thread_state import ThreadState, aligned
from pyox_agents.state._ids import is_id
from pyox_agents.state.conversation import State
from pyox_agents.state.frozen import JSON
from pyox_agents.state.history import HistoryEntry, ImportEntry
from pyox_agents.state.patch import apply, diff
from pyox_agents.state.rebase import Conflict, rebase
from pyox_agents.stores import Checkpoint, Store

__all__ = ["fork_thread", "rewind_thread", "undo_run"]


async def _opened(store: Store, thread_id: str) -> tuple[State, Walk]:
    try:
        conversation = await store.aload(thread_id)
    except LookupError:
        raise RequestError(404, f"no thread {thread_id!r}") from None
    return conversation, walk(conversation)


async def _checkpoint(store: Store, thread_id: str, found: Walk,
                      run_id: str) -> Checkpoint | None:
    if run_id not in found.runs:
        raise RequestError(422, f"thread {thread_id!r} has no run {run_id!r}: take a run id from "
                                f"GET /threads/{thread_id}/history", "run_id")
    kept = await store.aload_checkpoints(thread_id, [run_id], states=True)
    return kept[0] if kept else None


def _not_waiting(conversation: State, what: str) -> None:
    """409 while the thread's calls wait for their results: a run paused for a person (or cut
    short) goes on from them, and would not find them after a rewind or an undo."""
    if conversation.pending_calls:
        raise RequestError(409, f"a run of thread {conversation.id!r} waits for a person's "
                                f"answer (or was cut short): answer or decline it, then {what}")


async def fork_thread(runs: RunService, thread_id: str, principal: str | None, *,
                      run_id: str | None = None, message_id: str | None = None,
                      new_id: str | None = None) -> dict[str, Any]:
    """A new thread for `principal` with `thread_id`'s conversation, and its shared state, as
    they were right after run `run_id`, or when the user message `message_id` was sent (the
    message is its last; the new thread's next run answers it). `new_id`: the new thread's
    id (a random one when None). Its `{id, history_length, state}` (None: no state kept).

    Raises:
        RequestError: 404 no such thread; 409 the new id is taken, or the thread waited for a
            person at that point; 422 no such run or message, or a bad id.
    """
    store = thread_store(runs.store)
    if (run_id is None) == (message_id is None):
        raise RequestError(422, "a fork is at a run or at a message: give run_id or message_id",
                           "run_id")
    if new_id is not None and not is_id(new_id):
        raise RequestError(422, f"thread id {new_id[:40]!r} must be 1 to 128 letters, digits, "
                                "'_' or '-'", "thread_id")
    conversation, found = await _opened(store, thread_id)
    if run_id is not None:
        checkpoint = await _checkpoint(store, thread_id, found, run_id)
        history = list(conversation.history[:run_end(found, conversation, run_id, checkpoint)])
        state = _after(checkpoint)
    else:
        assert message_id is not None
        history, state = await _at_message(store, conversation, found, message_id)
    forked = State(id=new_id, history=history) if new_id else State(history=history)
    if forked.pending_calls:
        raise RequestError(409, "at that point a run of the thread waited for a person's "
                                "answer: fork at a run that ended", "run_id")
    await _save_new(store, forked, principal)
    if state is not None and runs.keep_state:
        kept = ThreadState()
        kept.add(state)
        await write_kept(store, forked.id, kept)
    return {"id": forked.id, "history_length": len(history), "state": state}


def _after(checkpoint: Checkpoint | None) -> JSON | None:
    if checkpoint is None or checkpoint.state is None:
        return None
    return before_and_after(checkpoint)[1]


async def _at_message(store: Store, conversation: State, found: Walk,
                      message_id: str) -> tuple[list[HistoryEntry], JSON | None]:
    """The history up to user message `message_id` (the last one an id names, for an edited
    one), and the shared state when it was sent: what the run that answered it started from,
    else what the last run before it left."""
    turn = found.messages.get(message_id)
    if turn is None:
        raise RequestError(422, f"thread {conversation.id!r} has no user message "
                                f"{message_id!r}: take an id from GET /threads/{conversation.id}",
                           "message_id")
    entry = conversation.history[turn.index]
    history = list(conversation.history[:turn.index])
    history.append(dataclasses.replace(entry, content=entry.content[:turn.n + 1])
                   if isinstance(entry, ImportEntry) else entry)
    answering = next((run for run in found.runs.values() if run.index > turn.index), None)
    before = [run for run in found.runs.values() if run.index < turn.index]
    wanted = [run.run_id for run in (answering, *before[-1:]) if run is not None]
    checkpoints = {c.run_id: c for c in
                   await store.aload_checkpoints(conversation.id, wanted, states=True)
                   if c.state is not None}
    if answering is not None and answering.run_id in checkpoints:
        return history, before_and_after(checkpoints[answering.run_id])[0]
    if before and before[-1].run_id in checkpoints:
        return history, before_and_after(checkpoints[before[-1].run_id])[1]
    return history, None


async def _save_new(store: Store, forked: State, principal: str | None) -> None:
    """Save `forked` as a new thread of `principal`; 409 if its id is taken."""
    try:
        await store.athread_owner(forked.id)
    except LookupError:
        pass
    else:
        raise RequestError(409, f"thread id {forked.id!r} is taken: fork into another id, or "
                                "leave it out for a new one", "thread_id")
    record = dataclasses.replace(await store.arecord_for(forked), owner=principal)
    await store.awrite(record)


async def rewind_thread(runs: RunService, thread_id: str, principal: str | None,
                        run_id: str) -> dict[str, Any]:
    """Take `thread_id` back to right after run `run_id`: its conversation goes back with
    `State.restore` (the history keeps what came after, as a branch), and its shared state
    becomes, as its next version, what it was then. `{id, history_length, version, state}`.

    Raises:
        RequestError: 404 no such thread; 409 a run is going or waits for a person; 422 no
            such run.
    """
    store = thread_store(runs.store)
    async with runs.holding(thread_id, principal) as token:
        conversation, found = await _opened(store, thread_id)
        _not_waiting(conversation, "rewind")
        checkpoint = await _checkpoint(store, thread_id, found, run_id)
        end = run_end(found, conversation, run_id, checkpoint)
        target = State(history=conversation.history[:end])
        if target.pending_calls:
            raise RequestError(409, f"run {run_id[:12]} waited for a person's answer at its "
                                    "end: rewind to a run that ended", "run_id")
        if end < len(conversation.history):
            conversation.restore(target.snapshot())
            await _write(store, await store.arecord_for(conversation), token)
        kept = await runs.kept_state(thread_id)  # (version 0 when the server keeps none)
        state = _after(checkpoint)
        if state is not None and runs.keep_state:
            await _commit(runs, thread_id, principal, kept, state, token)
    return {"id": thread_id, "history_length": len(conversation.history),
            "version": kept.version or None, "state": kept.state if kept.version else None}


async def _write(store: Store, record: Any, token: int | None) -> None:
    if token is None:
        await store.awrite(record)
    else:
        await store.awrite_fenced(record, record.thread_id, token)


async def undo_run(runs: RunService, thread_id: str, principal: str | None,
                   run_id: str) -> dict[str, Any]:
    """Undo run `run_id`'s changes to `thread_id`'s shared state: its changes reversed, rebased
    onto the latest version (the parallel tools' rules), kept as the next version. The
    conversation stays as it is. `{id, version, state}`.

    Raises:
        RequestError: 404 no such thread; 409 a run is going or waits for a person, or a place
            the run changed was changed again since (naming it); 422 no such run, or no state
            recorded for it.
    """
    store = thread_store(runs.store)
    if not runs.keep_state:
        raise RequestError(422, "this server keeps no shared state (create_app(..., "
                                "keep_state=False)), so it has no run's changes to undo")
    async with runs.holding(thread_id, principal) as token:
        conversation, found = await _opened(store, thread_id)
        _not_waiting(conversation, "undo")
        checkpoint = await _checkpoint(store, thread_id, found, run_id)
        if checkpoint is None or checkpoint.state is None:
            raise RequestError(422, f"run {run_id[:12]} has no recorded changes (it ended "
                                    "before this server recorded runs' changes)", "run_id")
        kept = await runs.kept_state(thread_id)
        undone = _undone(kept.frozen(), *before_and_after(checkpoint), run_id)
        if undone is not None:
            await _commit(runs, thread_id, principal, kept, undone, token)
    return {"id": thread_id, "version": kept.version or None, "state": kept.state}


async def _commit(runs: RunService, thread_id: str, principal: str | None, kept: ThreadState,
                  state: JSON, token: int | None) -> None:
    """Keep `state` as the thread's next version (if it differs from its latest), and tell
    the thread's followers, as a person's version: every open tab shows it."""
    before = kept.frozen()
    number = kept.version
    kept.add(state)
    if kept.version == number:
        return
    await write_kept(thread_store(runs.store), thread_id, kept, token)
    runs.feeds.publish(thread_id, principal, [{
        "type": "state", "version": kept.version,
        "delta": [op.to_json() for op in diff(before, kept.frozen())], "by": "person",
        "run_id": None}])


def _undone(latest: JSON, before: JSON, after: JSON, run_id: str) -> JSON | None:
    """`latest` with the change from `before` to `after` reversed; None if the run changed
    nothing.

    Raises:
        RequestError: 409 naming the place, when a later change wrote where the run wrote.
    """
    after = aligned(latest, after)
    back = diff(after, aligned(after, before))
    if not back:
        return None
    try:
        return apply(latest, rebase(back, diff(after, latest)))
    except Conflict as conflict:
        where = f"at {conflict.path}" if conflict.path else "as a whole"
        raise RequestError(409, f"run {run_id[:12]} cannot be undone: the shared state was "
                                f"changed {where} after it (by a later run or a person); undo "
                                "that change first, or rewind the thread", "run_id") from None
    except ValueError as exc:
        raise RequestError(409, f"run {run_id[:12]} cannot be undone onto the latest shared "
                                f"state ({exc}); rewind the thread instead", "run_id") from None
