"""A started run, as its caller holds it: its events (in batches or one at a time) and a stop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence

from pyox_agents.events import RuntimeEvent, TextDelta

__all__ = ["Outbox", "RunHandle"]


class RunHandle:
    """A run that `Agent.start` checked and set up: it executes while its events are read.

    Read it once, with `batches()` (every event there is at a time, in one list: a server
    writes each list at once) or `events()`; `cancel()` stops it (what it committed stays).
    """

    def __init__(self, run_id: str, batches: AsyncIterator[list[RuntimeEvent]],
                 outbox: Outbox | None = None,
                 texts: Callable[[str], Callable[[], str] | None] | None = None) -> None:
        self.run_id = run_id
        """The run's id (64 hex digits; a crash-cut run that this one continues keeps its id)."""
        self._outbox = outbox
        self._batches = batches
        self._texts = texts

    def batches(self) -> AsyncIterator[list[RuntimeEvent]]:
        """The run's events, as lists of those there are at a time; closing this stops it."""
        return self._batches

    def show_at_once(self, show: Callable[[Sequence[RuntimeEvent]], bool],
                     show_text: Callable[[str, str], bool] | None = None) -> None:
        """Let `show` take a batch of the run's events as the run emits it, when the reader
        of `batches()` waits for one (nothing is queued before it): no trip through the
        reader's task. `show` returns False for a batch it leaves to the reader (it needs to
        wait for something); the order of the events is kept either way.

        `show_text`, when given, takes a text delta of the run's own reply the same way, as
        its message id and text rather than a `TextDelta` (most events of a slow stream: no
        event made for one it takes); False: it took nothing, and the delta comes as an
        event."""
        if self._outbox is not None:
            self._outbox.direct = show
            self._outbox.direct_text = show_text

    def text_of(self, message_id: str) -> Callable[[], str] | None:
        """The text the run's own reply `message_id` has streamed so far, while it streams: a
        function that keeps giving all of it, also after the reply ended. None for any other
        message (a subagent's, one that ended before this was asked). A reader that keeps the
        run's text deltas for later can keep this instead: the run keeps the text anyway."""
        return None if self._texts is None else self._texts(message_id)

    async def events(self) -> AsyncIterator[RuntimeEvent]:
        """The run's events one at a time; closing this stops the run."""
        async with contextlib.aclosing(self._batches):  # type: ignore[type-var]
            async for batch in self._batches:
                for event in batch:
                    yield event

    async def cancel(self) -> None:
        """Stop the run: it ends `cancelled`, its running tools are cancelled."""
        await self._batches.aclose()  # type: ignore[attr-defined]


class Outbox:
    """The events a run has emitted and its consumer has not taken yet.

    Its consumer waits for the next batch on a bare future (`next`), the one object a run that
    mostly waits holds for it: no coroutine per wait, and a batch the run emits meanwhile is
    that future's result."""

    __slots__ = ("_waiter", "closed", "direct", "direct_text", "events", "run", "started")

    def __init__(self) -> None:
        self.events: list[RuntimeEvent] = []
        self.closed = False
        self.direct: Callable[[Sequence[RuntimeEvent]], bool] | None = None
        """Takes a batch at once while the consumer waits with nothing queued (False: queue
        it); `RunHandle.show_at_once`."""
        self.direct_text: Callable[[str, str], bool] | None = None
        """The same for a text delta of the run's own reply, as its message id and text."""
        self.run: asyncio.Task[None] | None = None
        """The run's task: the stream ends once it is done (with its error, if it failed)."""
        self._waiter: asyncio.Future[list[RuntimeEvent]] | None = None
        """The consumer's wait for the next batch, while it waits (nothing queued)."""
        self.started = False
        """The consumer has been handed a batch (the run's start) through its wait."""

    def put(self, events: Sequence[RuntimeEvent]) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():  # the consumer is busy (or went): queue them
            self.events.extend(events)
            return
        if self.direct is not None and self.direct(events):
            return  # what the consumer would have done next, done now
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

    def put_text(self, message_id: str, delta: str) -> None:
        """`put` for a text delta of the run's own reply: to `direct_text` at once when the
        consumer waits and it takes it, with no `TextDelta` made; else as one."""
        waiter = self._waiter
        if waiter is None or waiter.done():  # the consumer is busy: queued, as `put` would
            self.events.append(TextDelta(message_id, delta))
            return
        direct = self.direct_text
        if direct is not None and direct(message_id, delta):
            return
        self.put([TextDelta(message_id, delta)])

    def close(self) -> None:
        self.closed = True
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            _end(waiter, self.run)

    def next(self) -> asyncio.Future[list[RuntimeEvent]]:
        """Every event not taken yet, at once or as soon as there is one; once the outbox is
        closed and empty (and the run's task done), `StopAsyncIteration`, or the error the
        run's task failed with."""
        future: asyncio.Future[list[RuntimeEvent]] = asyncio.get_running_loop().create_future()
        if self.events:
            batch, self.events = self.events, []
            self.started = True
            future.set_result(batch)
        elif self.closed:
            _end(future, self.run)
        else:
            self._waiter = future
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
