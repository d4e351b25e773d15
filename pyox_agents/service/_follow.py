"""Following a run that another process executes, through the store's event log: pushed to us
as it grows (`SharedRuns.follow_events`: XREAD BLOCK on Redis), never polled. `RemoteFollowers`
counts this process's readers of each such run, which `ServerLimits.followers_per_run` bounds.

Each event's index is its place in the log, from 0: the index the run's own process gives it
(it keeps its events as it logs them, text deltas that came together merged into one), so a
reader that got event N on one process resumes after it on any other (`check_resumed`)."""

from __future__ import annotations

import collections
import json
from collections.abc import AsyncGenerator, Sequence
from typing import TypeAlias

import anyio

from pyox_agents._run_request import RequestError, run_tag
from pyox_agents.events import RunFailed, RunFinished, RunStarted, RuntimeEvent
from pyox_agents.service._event_json import event_from_json
from pyox_agents.service._limits import ServerLimits, check_followers
from pyox_agents.service._live import LogReader
from pyox_agents.state.run import AgentError
from pyox_agents.stores.base import SharedRuns

__all__ = ["Reads", "RemoteFollowers", "check_resumed", "follow_remote"]

Reads: TypeAlias = "LogReader | CountedReads"
"""A run's events from its first, each batch with the index of its first event: of a run of
this process (`LiveRun.read`) or of another's (`RemoteFollowers.read`); close it when done."""


def check_resumed(after: int, count: int, thread_id: str) -> None:
    """Refuse (400) to resume after event `after` of a run that has `count` events so far.

    Raises:
        RequestError: the run has no event `after`: the id was another run's, or made up.
    """
    if after >= count:
        raise RequestError(400, f"the run going on thread {thread_id!r} has no event {after} "
                                f"(its events so far are 0 to {count - 1}): the id you resume "
                                "after is another run's; resume without it to get this run "
                                "from its start")


async def read_remote(store: SharedRuns, thread_id: str, run_key: str, lease_ttl: float,
                      logged: Sequence[tuple[str, str]]
                      ) -> AsyncGenerator[tuple[int, list[RuntimeEvent]], None]:
    """`follow_remote`, the events `logged` so far first, in one batch, each batch with the
    index of its first event."""
    first = [event_from_json(json.loads(text)) for _, text in logged]
    if first:
        yield 0, first
    if first and isinstance(first[-1], RunFinished | RunFailed):
        return
    index = len(first)
    events = follow_remote(store, thread_id, run_key, lease_ttl,
                           logged[-1][0] if logged else "0")
    try:
        async for event in events:
            yield index, [event]
            index += 1
    finally:
        await events.aclose()


async def follow_remote(store: SharedRuns, thread_id: str, run_key: str,
                        lease_ttl: float, after: str = "0") -> AsyncGenerator[RuntimeEvent, None]:
    """The events of run `run_key` of `thread_id`, after the one the log's id `after` names
    (from its first, by default), until it ends.

    The store pushes each event as it is logged. A silence of a third of `lease_ttl` makes us
    check that the run still runs somewhere: if its process died (the thread's active run is no
    longer this one, and its log was never closed), the stream ends with
    `RunFailed(code="run_lost")` instead of waiting on.
    """
    silence = lease_ttl / 3
    block_ms = max(1, int(silence * 1000))
    while True:
        rows = store.follow_events(run_key, after, block_ms=block_ms)
        try:
            while True:
                with anyio.move_on_after(silence) as quiet:
                    row = await anext(rows, None)
                if quiet.cancelled_caught:
                    break  # the follower was cut in a wait: check the run, then follow again
                if row is None:
                    return  # the log was closed
                after, text = row
                event = event_from_json(json.loads(text))
                yield event
                if isinstance(event, RunFinished | RunFailed):
                    return
        finally:
            await rows.aclose()  # type: ignore[attr-defined]
        # active first: a run's end marks its log done before (or as) it clears the thread's
        # active run, so one that ends between the two reads is read as done, not as lost
        if await store.aget_active(thread_id) != run_key and not await store.ais_done(run_key):
            yield RunFailed(AgentError("run_lost", "the server process running this run "
                                                   "stopped; send the message again"))
            return


def _tag_of(first: str) -> str | None:
    """The `run_tag` of the run whose log starts with `first` (its `RunStarted`)."""
    event = event_from_json(json.loads(first))
    return run_tag(event.run_id) if isinstance(event, RunStarted) else None


class RemoteFollowers:
    """This process's readers of the runs other processes execute, counted by run key."""

    def __init__(self) -> None:
        self._counts: collections.Counter[str] = collections.Counter()

    async def read(self, store: SharedRuns, thread_id: str, run_key: str, lease_ttl: float,
                   limits: ServerLimits, after: int = -1, run: str | None = None
                   ) -> Reads | None:
        """`read_remote`, counted from now until the reader closes it or reads it to the end;
        `after`, the last event a reader that resumes has, checked against the log; None when
        the log is not run `run`'s (a `run_tag`: the run that reader read has ended).

        Raises:
            RequestError: 429, when `limits.followers_per_run` readers follow it already; 400
                when the log has no event `after` (`check_resumed`).
        """
        check_followers(limits, self._counts[run_key])
        logged = await store.aread_events(run_key)
        if run is not None and logged and run != _tag_of(logged[0][1]):
            return None
        check_resumed(after, len(logged), thread_id)
        return CountedReads(self._counts, run_key,
                        read_remote(store, thread_id, run_key, lease_ttl, logged))


class CountedReads:
    """A reader of a run's events that counts as one reader of `key` until it is closed, read to
    its end or dropped (one that is never iterated is counted off too)."""

    def __init__(self, counts: collections.Counter[str], key: str,
                 events: AsyncGenerator[tuple[int, list[RuntimeEvent]], None]) -> None:
        self._counts: collections.Counter[str] | None = counts
        self._key = key
        self._events = events
        counts[key] += 1

    def __aiter__(self) -> CountedReads:
        return self

    async def __anext__(self) -> tuple[int, list[RuntimeEvent]]:
        try:
            return await anext(self._events)
        except StopAsyncIteration:
            self._leave()
            raise

    async def aclose(self) -> None:
        """Stop reading: the events' iterator is closed, and the reader counted off."""
        self._leave()
        await self._events.aclose()

    def _leave(self) -> None:
        counts, self._counts = self._counts, None
        if counts is not None:
            counts[self._key] -= 1
            if counts[self._key] <= 0:
                del counts[self._key]

    def __del__(self) -> None:
        self._leave()
