"""A run cut by a crash goes on: the next run on its thread continues it instead of starting
a new one, when it runs nowhere."""

from __future__ import annotations

from typing import cast

import anyio

from pyox_agents.runtime._records import InFlight
from pyox_agents.runtime._runner import Runner, running_here
from pyox_agents.state.conversation import State
from pyox_agents.state.history import RunStartEntry
from pyox_agents.state.run import RunState, RunStatus
from pyox_agents.stores.base import SharedRuns

__all__ = ["last_run_id", "take_over_crashed"]


async def take_over_crashed(runner: Runner) -> bool:
    """Make `runner` continue the conversation's last run instead of a new run, if that run was
    cut by a crash: not ended, with calls in flight (or asking a person about such calls), and
    running nowhere. Whether it does.

    Such a run goes on as `resume` continues it: a cut idempotent call runs again with the same
    idempotency key, any other is put to a person ("outcome unknown after a crash: run
    again?"), and messages added meanwhile wait until every call has its result.

    Raises:
        ValueError: the last run is still running, in this process or (its store lease is
            held) in another.
    """
    store, journal = runner.setup.store, runner.journal
    if store is None or journal is None:
        return False
    run_id = last_run_id(runner.conversation)
    if run_id is None:
        return False
    try:
        run = await store.aload_run(run_id)
    except LookupError:
        return False
    if not _cut_by_crash(run, runner.conversation):
        return False
    thread_id = runner.conversation.id
    if running_here(run_id):
        raise ValueError(f"the last run {run_id[:12]} of thread {thread_id!r} is still running "
                         "in this process; wait for it to end, or stop it, then run again")
    if journal.fence is None and isinstance(store, SharedRuns):  # a server holds the lease
        holder = await anyio.to_thread.run_sync(store.lease_holder, thread_id)
        if holder is not None:
            raise ValueError(f"the last run {run_id[:12]} of thread {thread_id!r} is still "
                             f"running in another process ({holder[0]} holds the thread's "
                             "lease); wait for it to end, or for the lease to expire")
    runner.continue_run(run)
    return True


def last_run_id(conversation: State) -> str | None:
    """The id of the conversation's latest run, from its history."""
    for entry in reversed(conversation.history):
        if isinstance(entry, RunStartEntry):
            return entry.content
    return None


def _cut_by_crash(run: RunState, conversation: State) -> bool:
    """Whether `run` stopped inside a decision's calls without ending (its process died during
    them, or it asks a person about calls a crash cut: its decision was attempted again), and
    `conversation` still waits for results of those calls (a State that closed them itself,
    e.g. with `use_tools` in a loop of its own, has nothing to recover)."""
    in_flight = cast("InFlight | None", run.in_flight)
    if in_flight is None:
        return False
    crashed = run.status is RunStatus.RUNNING or (
        run.status is RunStatus.PAUSED and int(in_flight["attempt"]) > 1)
    cut = {item["call_id"] for item in in_flight["decision"]["calls"]}
    pending = {call.id for call in conversation.pending_calls}
    return crashed and bool(pending) and pending <= cut
