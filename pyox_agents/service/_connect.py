"""What a client that comes back to a thread needs: its messages, its shared state, the
question a paused run waits on, and the events of a run still going (from its start, each batch
with the index of its first event, then live, on this process or, with shared runs, another
one)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from pyox_agents.agent import Agent
from pyox_agents.events import RunStarted, RuntimeEvent
from pyox_agents.service._follow import Reads
from pyox_agents.service._runs import RunService
from pyox_agents.service._transcript import transcript
from pyox_agents.state.run import ApprovalRequest

__all__ = ["Rejoined", "rejoin"]


@dataclass
class Rejoined:
    """A thread as a returning client gets it.

    `messages`: the transcript (records of `transcript`) up to the run still going, if any;
    `state`: the kept shared state (when nothing runs); `pending`: the question a paused run
    waits on; `tail`: the events of the run still going, from its `RunStarted`, in batches,
    each with the index of its first event (close it to stop following the run).
    """

    messages: list[dict[str, Any]]
    state: Any
    pending: ApprovalRequest | None = None
    paused_run_id: str | None = None
    tail: AsyncGenerator[tuple[int, list[RuntimeEvent]], None] | None = None
    version: int = 0
    """The number of `state` (0: the server keeps none)."""
    resumes: bool = True
    """Whether `tail` goes on after what the client has (False: the run it read ended; `tail`
    is the run going on now, from its start)."""


async def rejoin(runs: RunService, agent: Agent, thread_id: str, after: int = -1,
                 run: str | None = None) -> Rejoined:
    """`thread_id` for a client that comes back to it; an unknown thread is empty, not an
    error (a page opened on a new thread). `after`: the last event of run `run` (its
    `run_tag`) that a client that resumes has (checked: 400 when the run has no such event);
    when `run` has ended, the run going on, if any, comes from its start (`resumes` False).

    Raises:
        RequestError: 429 when as many readers follow the run as
            `ServerLimits.followers_per_run`; 400 for an `after` the run has not reached.
    """
    tail: AsyncGenerator[tuple[int, list[RuntimeEvent]], None] | None = None
    run_id: str | None = None
    found = await runs.follow(thread_id, after, run)  # here, or another process (shared runs)
    resumes = found is not None or run is None
    if not resumes:  # the run that client read has ended: the one going on, from its start
        found = await runs.follow(thread_id)
    if found is not None:
        first = await anext(found[0], None)
        if first is not None and first[1]:
            run_id = first[1][0].run_id if isinstance(first[1][0], RunStarted) else None
            tail = _prepended(first, found[0])
        else:
            await found[0].aclose()
    messages: list[dict[str, Any]] = []
    if runs.store is not None:
        with contextlib.suppress(LookupError):
            conversation = await runs.store.aload(thread_id)
            messages = transcript(conversation, before_run=run_id)
    if tail is not None:
        return Rejoined(messages, None, tail=tail, resumes=resumes)
    kept = await runs.kept_state(thread_id)
    paused = await runs.paused(agent, thread_id) if agent.store is not None else None
    pending = paused.pending if paused is not None else None
    return Rejoined(messages, kept.state, pending,
                    paused.run_id if paused is not None else None, version=kept.version)


async def _prepended(first: tuple[int, list[RuntimeEvent]], rest: Reads
                     ) -> AsyncGenerator[tuple[int, list[RuntimeEvent]], None]:
    try:
        yield first
        async for batch in rest:
            yield batch
    finally:
        await rest.aclose()
