"""A started run, as its caller holds it: its events (in batches or one at a time) and a stop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence

from pyox_agents._errors import PyoxError
from pyox_agents.events import RuntimeEvent
from pyox_agents.state.conversation import State
from pyox_agents.state.patch import Op
from pyox_agents.state.shared import Commit

__all__ = ["Outbox", "RunEnded", "RunHandle", "one_by_one"]


class RunEnded(PyoxError):
    """The run has told its end (`RunFinished`, `RunFailed`): it takes no more edits."""


class RunHandle:
    """A run that `Agent.start` checked and set up: it executes while its events are read.

    Read it once, with `batches()` (every event there is at a time, in one list: a server
    writes each list at once) or `events()`; `cancel()` stops it (what it committed stays).
    """

    __slots__ = ("_batches", "_edit", "_keep_pace", "_texts", "_untaken", "conversation", "run_id")

    def __init__(self, run_id: str, batches: AsyncIterator[list[RuntimeEvent]],
                 texts: Callable[[str], Callable[[], str] | None],
                 edit: Callable[[Sequence[Op], int], Commit | None], conversation: State,
                 keep_pace: Callable[[], None], untaken: Callable[[], list[RuntimeEvent]]
                 ) -> None:
        self.run_id = run_id
        """The run's id (64 hex digits; a crash-cut run that this one continues keeps its id)."""
        self.conversation = conversation
        """The conversation the run adds its messages to (read it, never change it)."""
        self._batches = batches
        self._texts = texts
        self._edit = edit
        self._keep_pace = keep_pace
        self._untaken = untaken

    def edit_state(self, ops: Sequence[Op], base_version: int) -> Commit | None:
        """Commit a person's edit of the run's shared state while it runs: `ops` (made on the
        run's version `base_version`) rebased past what the run committed since, the person's
        write winning where both wrote; the run streams it as a `StateChanged` with `call_id`
        "", its tools that finish later rebase onto it, and its model is told at its next
        turn (`Agent(state_note=...)`). None when it changes nothing. Call it on the run's
        event loop, while the run goes on.

        Raises:
            Conflict: a place the edit writes is gone (the run removed or replaced it).
            Refused: the new version breaks a limit of the state (depth, size, `state_type`).
            LookupError: `base_version` is not a version the run can rebase from.
            RunEnded: the run has told its end.
        """
        return self._edit(ops, base_version)

    def text_of(self, message_id: str) -> Callable[[], str] | None:
        """The text the run's own reply `message_id` has streamed so far, while it streams: a
        function that keeps giving all of it, also after the reply ended. None for any other
        message. A reader that keeps the run's text deltas can keep this instead: the run keeps
        the text anyway."""
        return self._texts(message_id)

    def batches(self, *, keep_pace: bool = False) -> AsyncIterator[list[RuntimeEvent]]:
        """The run's events, as lists of those there are at a time; closing this stops it.

        `keep_pace`: the run saves its end (the save that drops the shared state from its
        record) only once this reader is done with every batch before it, asking for the next.
        A server that keeps each version of the state before it shows it reads so: a crash
        between that save and keeping the run's last version would lose the version.
        """
        if keep_pace:
            self._keep_pace()
        return self._batches

    def untaken(self) -> list[RuntimeEvent]:
        """The events the run emitted that its reader of `batches` did not take, once (a reader
        cancelled as the run handed it a batch): what the reader must still keep of the run,
        such as a version of the state the run committed."""
        return self._untaken()

    def events(self) -> AsyncIterator[RuntimeEvent]:
        """The run's events one at a time; closing this stops the run."""
        return one_by_one(self._batches)

    async def cancel(self) -> None:
        """Stop the run: it ends `cancelled`, its running tools are cancelled."""
        await self._batches.aclose()  # type: ignore[attr-defined]


async def one_by_one(batches: AsyncIterator[list[RuntimeEvent]]) -> AsyncIterator[RuntimeEvent]:
    """The events of a run's `batches` one at a time; closing this closes them (stops the run)."""
    async with contextlib.aclosing(batches):  # type: ignore[type-var]
        async for batch in batches:
            for event in batch:
                yield event


class Outbox:
    """The events a run has emitted and its consumer has not taken yet.

    Its consumer waits for the next batch on a bare future (`next`), the one object a run that
    mostly waits holds for it: no coroutine per wait, and a batch the run emits meanwhile is
    that future's result."""

    __slots__ = ("_caught_up", "_loop", "_waiter", "closed", "events", "left", "run", "started")

    def __init__(self) -> None:
        self.events: list[RuntimeEvent] = []
        self.closed = False
        self.run: asyncio.Task[None] | None = None
        """The run's task: the stream ends once it is done (with its error, if it failed)."""
        self._waiter: asyncio.Future[list[RuntimeEvent]] | None = None
        """The consumer's wait for the next batch, while it waits (nothing queued)."""
        self.started = False
        """The consumer has been handed a batch (the run's start) through its wait."""
        self._loop: asyncio.AbstractEventLoop | None = None
        """The consumer's loop, once it waited (taken once: each `asyncio.get_running_loop()`
        asks the OS for the process's id)."""
        self.left = False
        """The consumer stopped reading (it closed the stream)."""
        self._caught_up: asyncio.Future[None] | None = None
        """The run's wait for its consumer to be done with every batch (`caught_up`)."""

    def put(self, events: Sequence[RuntimeEvent]) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():  # the consumer is busy (or went): queue them
            self.events.extend(events)
            return
        self._waiter = None
        if not self.started:  # the run's start: at once (a server answers the request by it)
            self.started = True
            waiter.set_result(events if type(events) is list else list(events))
            return
        self.events.extend(events)  # what the run emits until it waits goes with these
        waiter.get_loop().call_soon(self._hand_over, waiter)

    def _hand_over(self, waiter: asyncio.Future[list[RuntimeEvent]]) -> None:
        """Give the consumer what the run emitted since it took the last batch, now that the
        run waits: one batch (one write), not one for the events that could not be shown at
        once (a state change the server keeps first) and another for the rest."""
        if waiter.done():
            return
        batch, self.events = self.events, []
        waiter.set_result(batch)

    async def caught_up(self) -> None:
        """Return once the consumer has taken every event put so far and asks for more (it is
        done with them), or stopped reading."""
        while not self.left and (self.events or self._waiter is None or self._waiter.done()):
            self._caught_up = asyncio.get_running_loop().create_future()
            await self._caught_up

    def take(self) -> list[RuntimeEvent]:
        """The events put and not taken (the consumer's wait was cancelled as they came)."""
        events, self.events = self.events, []
        return events

    def leave(self) -> None:
        """The consumer stops reading: a run waiting for it to catch up goes on."""
        self.left = True
        self._wake_caught_up()

    def _wake_caught_up(self) -> None:
        waiting, self._caught_up = self._caught_up, None
        if waiting is not None and not waiting.done():
            waiting.set_result(None)

    def close(self) -> None:
        self.closed = True
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            _end(waiter, self.run)

    def next(self) -> asyncio.Future[list[RuntimeEvent]]:
        """Every event not taken yet, at once or as soon as there is one; once the outbox is
        closed and empty (and the run's task done), `StopAsyncIteration`, or the error the
        run's task failed with."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        future: asyncio.Future[list[RuntimeEvent]] = self._loop.create_future()
        if self.events:
            batch, self.events = self.events, []
            self.started = True
            future.set_result(batch)
        elif self.closed:
            _end(future, self.run)
        else:
            self._waiter = future
            self._wake_caught_up()
        return future


def _end(future: asyncio.Future[list[RuntimeEvent]], run: asyncio.Task[None] | None) -> None:
    """End the stream in `future` once `run` is done: its error, else `StopAsyncIteration`."""
    if run is not None and not run.done():
        run.add_done_callback(lambda done: _end(future, done))
        return
    if future.done():
        return
    failure = None if run is None or run.cancelled() else run.exception()
    future.set_exception(failure if failure is not None else StopAsyncIteration())
