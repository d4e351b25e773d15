"""A started run, as its caller holds it: its events (in batches or one at a time) and a stop."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence

from pyox_agents.events import RuntimeEvent
from pyox_agents.runtime._wakeup import Wakeup

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

    def show_at_once(self, show: Callable[[Sequence[RuntimeEvent]], bool]) -> None:
        """Let `show` take a batch of the run's events as the run emits it, when the reader
        of `batches()` waits for one (nothing is queued before it): no trip through the
        reader's task. `show` returns False for a batch it leaves to the reader (it needs to
        wait for something); the order of the events is kept either way."""
        if self._outbox is not None:
            self._outbox.direct = show

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
    """The events a run has emitted and its consumer has not taken yet."""

    def __init__(self) -> None:
        self.events: list[RuntimeEvent] = []
        self.closed = False
        self.direct: Callable[[Sequence[RuntimeEvent]], bool] | None = None
        """Takes a batch at once while the consumer waits with nothing queued (False: queue
        it); `RunHandle.show_at_once`."""
        self._waiting = False
        self._more = Wakeup()

    def put(self, events: Sequence[RuntimeEvent]) -> None:
        if self._waiting and not self.events and self.direct is not None \
                and self.direct(events):
            return  # what the consumer would have done next, done now
        self.events.extend(events)
        self._more.notify()

    def close(self) -> None:
        self.closed = True
        self._more.notify()

    async def take(self) -> list[RuntimeEvent]:
        """Every event not taken yet, waiting for one; [] once closed and empty."""
        while not self.events and not self.closed:
            self._waiting = True
            try:
                await self._more.wait()
            finally:
                self._waiting = False
        batch, self.events = self.events, []
        return batch
