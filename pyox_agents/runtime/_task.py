"""A run in its own task: its events yielded in batches as they come, a run cut by a crash
taken over first, and running from synchronous code (`Agent.start`, `stream`, `run`)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import anyio

from pyox_agents.events import RuntimeEvent
from pyox_agents.runtime._handle import Outbox, RunHandle, one_by_one
from pyox_agents.runtime._parts import AgentParts
from pyox_agents.runtime._paused import Paused
from pyox_agents.runtime._recovery import take_over_crashed
from pyox_agents.runtime._resuming import kept_state
from pyox_agents.runtime._runner import Access, Runner
from pyox_agents.runtime._toolsets import toolsets_opened
from pyox_agents.state.shared import SharedState

__all__ = ["events", "handle", "run_sync"]

T = TypeVar("T")


def handle(agent: AgentParts, runner: Runner, *, resumed: bool = False,
           state_given: bool = True) -> RunHandle:
    """The run as its caller holds it: its `batches`."""
    stream = RunStream(agent, runner, resumed=resumed, state_given=state_given)
    return RunHandle(runner.run_id, stream, runner.text_of, runner.edit_state,
                     runner.conversation, stream.keep_pace, stream.untaken)


class RunStream:
    """A run's events as lists of those there are at a time: reading it executes the run in a
    task of its own; closing it stops the run.

    The run lives in a task of its own, not in a task group spanning the reader's awaits: a
    reader that breaks out of `async for` may close this from wherever it is finalised, and a
    plain task can be cancelled from there, while a cancel scope could not be exited. The run
    puts its events in an outbox with no trip through the event loop per event, and a reader
    that waits for the next batch waits on one future (no generator or coroutine per wait: a
    server holds a reader for each open run).
    """

    __slots__ = ("_agent", "_outbox", "_resumed", "_runner", "_state_given")

    def __init__(self, agent: AgentParts, runner: Runner, *, resumed: bool, state_given: bool
                 ) -> None:
        self._agent = agent
        self._runner = runner
        self._outbox = Outbox()
        self._resumed = resumed
        self._state_given = state_given

    def __aiter__(self) -> RunStream:
        return self

    def keep_pace(self) -> None:
        """The run saves its end only once its reader is done with every batch before it
        (`RunHandle.batches`)."""
        if self._runner.journal is not None:
            self._runner.journal.before_end = self._outbox.caught_up

    def untaken(self) -> list[RuntimeEvent]:
        """The events the run put that its reader did not take (`RunHandle.untaken`)."""
        return self._outbox.take()

    def __anext__(self) -> Awaitable[list[RuntimeEvent]]:
        if self._outbox.run is None:
            return self._start()
        return self._outbox.next()

    async def _start(self) -> list[RuntimeEvent]:
        """Take over the run a crash cut (if any), start the run's task, and give the first
        batch."""
        agent, runner, outbox, resumed = self._agent, self._runner, self._outbox, self._resumed
        if not resumed:
            resumed = await take_over_crashed(runner)
            if resumed and not self._state_given:
                await _continue_with_kept_state(agent, runner)
        runner.emit = outbox.put
        outbox.run = asyncio.create_task(_execute(agent, runner, outbox, resumed),
                                         name=f"pyox-agents run {runner.run_id[:12]}")
        return await outbox.next()

    async def aclose(self) -> None:
        """Stop the run (if it runs) and wait for its task to end."""
        self._outbox.leave()
        run = self._outbox.run
        if run is None or run.done():  # (a run that ended: nothing to wait for)
            return
        run.cancel()
        await asyncio.wait([run])

    def __del__(self) -> None:
        run = self._outbox.run  # a reader that dropped this without closing it: stop the run
        self._outbox.leave()
        if run is not None and not run.done():
            run.cancel()


async def _execute(agent: AgentParts, runner: Runner, outbox: Outbox, resumed: bool) -> None:
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


def _ended(agent: AgentParts, runner: Runner, outbox: Outbox) -> None:
    """The run is over: keep a paused run for its answer (no store to keep it), end the
    stream."""
    journal = runner.journal
    if agent.store is None and journal is not None and journal.run.pending is not None:
        agent._paused.keep(Paused(journal.run, runner.conversation, runner.access.shared.value,
                                  journal.owner))
    outbox.close()


def events(agent: AgentParts, runner: Runner, *, resumed: bool = False,
           state_given: bool = True) -> AsyncIterator[RuntimeEvent]:
    """The run's events one at a time (see `RunStream`)."""
    return one_by_one(RunStream(agent, runner, resumed=resumed, state_given=state_given))


async def _continue_with_kept_state(agent: AgentParts, runner: Runner) -> None:
    """A run cut by a crash that a run given no `state=` continues goes on from the state its
    record kept (the app gave none to replace it)."""
    journal = runner.journal
    assert journal is not None
    access = runner.access
    shared = SharedState(await kept_state(agent, runner.run_id, runner.conversation),
                         state_type=agent.state_type, max_bytes=access.shared.max_bytes)
    runner.access = Access(shared, access.owner, access.writable, access.denied)
    journal.shared = shared


def run_sync(fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
    """Run `fn` to the end from synchronous code, refusing inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(f"Agent.{fn.__name__.removeprefix('a')}() cannot be called while an "
                           f"event loop is running (you are in async code): use "
                           f"`await agent.{fn.__name__}(...)`")
    return anyio.run(functools.partial(fn, *args, **kwargs))
