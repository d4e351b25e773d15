"""What a client that comes back to a thread needs: its messages, its shared state, the
question a paused run waits on, and the events of a run still going (replayed from its start,
then live, on this process or, with shared runs, another one)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

from pyox_agents.agent import Agent
from pyox_agents.events import RunStarted, RuntimeEvent
from pyox_agents.service._limits import check_followers
from pyox_agents.service._runs import RunService
from pyox_agents.service._transcript import transcript
from pyox_agents.state.run import ApprovalRequest

__all__ = ["Rejoined", "rejoin"]


@dataclass
class Rejoined:
    """A thread as a returning client gets it.

    `messages`: the transcript (records of `transcript`) up to the run still going, if any;
    `state`: the kept shared state (when nothing runs); `pending`: the question a paused run
    waits on; `tail`: the events of the run still going, from its `RunStarted`, in batches
    (close it to stop following the run).
    """

    messages: list[dict[str, Any]]
    state: Any
    pending: ApprovalRequest | None = None
    paused_run_id: str | None = None
    tail: AsyncGenerator[list[RuntimeEvent], None] | None = None
    version: int = 0
    """The number of `state` (0: the server keeps none)."""


async def rejoin(runs: RunService, agent: Agent, thread_id: str) -> Rejoined:
    """`thread_id` for a client that comes back to it; an unknown thread is empty, not an
    error (a page opened on a new thread)."""
    tail: AsyncGenerator[list[RuntimeEvent], None] | None = None
    run_id: str | None = None
    batches = await _running(runs, thread_id)
    if batches is not None:
        first = await anext(batches, None)
        if first:
            run_id = first[0].run_id if isinstance(first[0], RunStarted) else None
            tail = _prepended(first, batches)
    messages: list[dict[str, Any]] = []
    if runs.store is not None:
        with contextlib.suppress(LookupError):
            conversation = await runs.store.aload(thread_id)
            messages = transcript(conversation, before_run=run_id)
    if tail is not None:
        return Rejoined(messages, None, tail=tail)
    kept = await runs.kept_state(thread_id)
    paused = await runs.paused(agent, thread_id) if agent.store is not None else None
    pending = paused.pending if paused is not None else None
    return Rejoined(messages, kept.state, pending,
                    paused.run_id if paused is not None else None, version=kept.version)


async def _running(runs: RunService, thread_id: str
                   ) -> AsyncGenerator[list[RuntimeEvent], None] | None:
    """The events of the run going on `thread_id` from its first, or None when none is; 429
    (`RequestError`) when as many readers follow it as `ServerLimits.followers_per_run`."""
    live = runs.active(thread_id)
    if live is not None:
        check_followers(runs.limits, live.followers)
        return live.follow_batches()
    found = await runs.follow(thread_id)  # another process's run (shared runs)
    return None if found is None else _singles(found[0])


async def _singles(events: AsyncIterator[RuntimeEvent]
                   ) -> AsyncGenerator[list[RuntimeEvent], None]:
    try:
        async for event in events:
            yield [event]
    finally:
        close = getattr(events, "aclose", None)  # (a generator, or a counted reader)
        if close is not None:
            await close()


async def _prepended(first: list[RuntimeEvent],
                     rest: AsyncGenerator[list[RuntimeEvent], None]
                     ) -> AsyncGenerator[list[RuntimeEvent], None]:
    try:
        yield first
        async for batch in rest:
            yield batch
    finally:
        await rest.aclose()
