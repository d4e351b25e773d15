"""A run as the service serves it: its events so far, kept for any number of followers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyox_agents.events import RunFinished, RunStarted, RuntimeEvent, StateChanged
from pyox_agents.runtime._wakeup import Wakeup
from pyox_agents.service._thread_state import ThreadState

__all__ = ["LiveRun"]


@dataclass
class LiveRun:
    """One run as the server serves it: its events so far, and whether it has ended."""

    thread_id: str
    agent_name: str
    principal: str | None = None
    events: list[RuntimeEvent] = field(default_factory=list)
    done: bool = False
    task: asyncio.Task[None] | None = None
    lease: int | None = None
    run_key: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    """What the protocol adapter that started the run keeps to translate it again on replay."""
    kept: ThreadState | None = None
    """The thread's kept shared state as the store holds it (servers that keep it): as of the
    run's start, then as this run last wrote it; None once another process took it over."""
    versions: ThreadState | None = None
    """The versions of the shared state the run went through so far (`kept` and newer ones)."""
    start: list[Any] = field(default_factory=list)
    """The state the server chose for the run to start from (none for a resumed run)."""
    shutdown: bool = False
    """The server shuts down: the run stops at its next step boundary, left for recovery."""
    shared: int = 0
    """How many of `events` were logged in the store for other processes (shared runs)."""
    _more: Wakeup = field(default_factory=Wakeup)

    @property
    def run_id(self) -> str | None:
        """The runtime's id of this run, once it has started."""
        first = self.events[0] if self.events else None
        return first.run_id if isinstance(first, RunStarted) else None

    def add(self, events: Sequence[RuntimeEvent]) -> None:
        """Keep `events` and wake whoever follows."""
        self.events.extend(events)
        self._more.notify()

    def end(self) -> None:
        """No more events will come."""
        self.done = True
        self._more.notify()

    async def follow(self, start: int = 0) -> AsyncIterator[RuntimeEvent]:
        """Every event from number `start` on: those kept, then the live ones until the end."""
        async for batch in self.follow_batches(start):
            for event in batch:
                yield event

    async def follow_batches(self, start: int = 0) -> AsyncIterator[list[RuntimeEvent]]:
        """Like `follow`, but all the events there are at once in one list (fewer writes)."""
        index = start
        while True:
            if index < len(self.events):
                batch = self.events[index:]
                index += len(batch)
                yield batch
                continue
            if self.done:
                return
            await self._more.wait()

    def last_state(self) -> Any:
        """The shared state as the latest event gave it."""
        for event in reversed(self.events):
            if isinstance(event, StateChanged | RunStarted | RunFinished):
                return event.state
        return None
