"""A started run, as its caller holds it: its events (in batches or one at a time) and a stop."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence

from pyox_agents.events import RuntimeEvent
from pyox_agents.runtime._wakeup import Wakeup

__all__ = ["Outbox", "RunHandle"]


class RunHandle:
    """A run that `Agent.start` checked and set up: it executes while its events are read.

    Read it once, with `batches()` (every event there is at a time, in one list: a server
    writes each list at once) or `events()`; `cancel()` stops it (what it committed stays).
    """

    def __init__(self, run_id: str, batches: AsyncIterator[list[RuntimeEvent]]) -> None:
        self.run_id = run_id
        """The run's id (64 hex digits; a crash-cut run that this one continues keeps its id)."""
        self._batches = batches

    def batches(self) -> AsyncIterator[list[RuntimeEvent]]:
        """The run's events, as lists of those there are at a time; closing this stops it."""
        return self._batches

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
        self._more = Wakeup()

    def put(self, events: Sequence[RuntimeEvent]) -> None:
        self.events.extend(events)
        self._more.notify()

    def close(self) -> None:
        self.closed = True
        self._more.notify()

    async def take(self) -> list[RuntimeEvent]:
        """Every event not taken yet, waiting for one; [] once closed and empty."""
        while not self.events and not self.closed:
            await self._more.wait()
        batch, self.events = self.events, []
        return batch
