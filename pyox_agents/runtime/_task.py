"""A run in its own task: its events yielded in batches as they come, a run cut by a crash
taken over first, and running from synchronous code (`Agent.start`, `stream`, `run`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import anyio

from pyox_agents.events import RuntimeEvent
from pyox_agents.runtime._handle import Outbox, RunHandle
from pyox_agents.runtime._parts import AgentParts
from pyox_agents.runtime._recovery import take_over_crashed
from pyox_agents.runtime._resuming import kept_state
from pyox_agents.runtime._runner import Access, Runner
from pyox_agents.runtime._toolsets import toolsets_opened
from pyox_agents.state.shared import SharedState

__all__ = ["batches", "events", "handle", "run_sync"]

T = TypeVar("T")


def handle(agent: AgentParts, runner: Runner, *, resumed: bool = False,
           state_given: bool = True) -> RunHandle:
    """The run as its caller holds it: `batches`, and a way to show its events at once."""
    outbox = Outbox()
    return RunHandle(runner.run_id, batches(agent, runner, resumed=resumed,
                                            state_given=state_given, outbox=outbox), outbox,
                     runner.text_of)


async def batches(
    agent: AgentParts, runner: Runner, *, resumed: bool = False, state_given: bool = True,
    outbox: Outbox | None = None,
) -> AsyncIterator[list[RuntimeEvent]]:
    """Execute the run in its own task and yield its events, all those there are at a time;
    closing this stops the run.

    The run lives in a task of its own, not in a task group spanning our `yield`s: a consumer
    that breaks out of `async for` closes this generator from wherever Python finalises it, and a
    plain task can be cancelled from there, while a cancel scope could not be exited. The run
    puts its events in an outbox with no trip through the event loop per event.
    """
    if not resumed:
        resumed = await take_over_crashed(runner)
        if resumed and not state_given:
            await _continue_with_kept_state(agent, runner)
    if outbox is None:
        outbox = Outbox()
    runner.emit = outbox.put

    async def execute() -> None:
        try:
            if agent.toolsets:  # else no context around the run: an open run holds less
                async with toolsets_opened(agent.tools, agent.toolsets, runner):
                    await runner.execute(resumed=resumed)
                    _ended(agent, runner, outbox)  # its stream ends before the toolsets close
            else:
                await runner.execute(resumed=resumed)
                _ended(agent, runner, outbox)
        finally:
            outbox.close()

    task = asyncio.create_task(execute(), name=f"pyox-agents run {runner.run_id[:12]}")
    try:
        while batch := await outbox.take():
            yield batch
    finally:
        task.cancel()
        await asyncio.wait([task])
    if not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]


def _ended(agent: AgentParts, runner: Runner, outbox: Outbox) -> None:
    """The run is over: keep a paused run for its answer (no store to keep it), end the
    stream."""
    journal = runner.journal
    if agent.store is None and journal is not None and journal.run.pending is not None:
        agent._paused[journal.run.run_id] = (journal.run, runner.conversation)
        agent._paused_state[journal.run.run_id] = runner.access.shared.value
    outbox.close()


def events(agent: AgentParts, runner: Runner, *, resumed: bool = False,
           state_given: bool = True) -> AsyncIterator[RuntimeEvent]:
    """The run's events one at a time (see `batches`)."""
    batched = batches(agent, runner, resumed=resumed, state_given=state_given)
    return RunHandle(runner.run_id, batched).events()


async def _continue_with_kept_state(agent: AgentParts, runner: Runner) -> None:
    """A run cut by a crash that a run given no `state=` continues goes on from the state its
    record kept (the app gave none to replace it)."""
    journal = runner.journal
    assert journal is not None
    old = runner.access.shared
    shared = SharedState(await kept_state(agent, runner.run_id, runner.conversation),
                         state_type=agent.state_type, max_bytes=old.max_bytes)
    access = runner.access
    runner.access = Access(shared, access.owner, access.writable, access.denied)
    journal.shared = shared


def run_sync(fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
    """Run `fn` to the end from synchronous code, refusing inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            f"Agent.{fn.__name__.removeprefix('a')}() cannot be called while an event loop is "
            f"running (you are in async code): use `await agent.{fn.__name__}(...)`"
        )

    async def main() -> T:
        return await fn(*args, **kwargs)

    return anyio.run(main)
