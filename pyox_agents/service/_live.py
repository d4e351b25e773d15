"""A run as the service serves it: its events so far, each with its index, for any number of
readers, which pull them from an index (`read`), and what the service keeps of it besides.

The run appends its events (`add`); a reader waits for the next one on a future the log settles
when it adds or ends. Nothing is handed to a reader in the run's task: every reader reads in its
own. The index of an event is its place in the log, so a reader can go on after the last one
it got.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyox_agents.events import (
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    TextDelta,
    TextEnded,
    TextStarted,
)
from pyox_agents.service._thread_state import ThreadState

__all__ = ["LiveRun"]


@dataclass
class LiveRun:
    """One run as the server serves it: its events so far, and whether it has ended."""

    thread_id: str
    agent_name: str
    principal: str | None = None
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
    resumed: bool = False
    """The run continues one that waited for a person (answered, or declined by a message)."""
    shutdown: bool = False
    """The server shuts down: the run stops at its next step boundary, left for recovery."""
    shared: int = 0
    """How many of `events` were logged in the store for other processes (shared runs)."""
    store_away: bool = False
    """The store was unreachable for one of the run's writes: the run writes nothing more
    until its end, which tries once (each write would wait the store's timeout in turn)."""
    _events: list[RuntimeEvent] = field(default_factory=list)
    """Every event so far, in order: an event's index is its place here."""
    _waiters: list[asyncio.Future[None]] = field(default_factory=list)
    """The readers waiting for the next event (or the end)."""
    _reading: int = 0
    """How many readers read the run now."""

    @property
    def events(self) -> list[RuntimeEvent]:
        """The run's events so far (a new list)."""
        return list(self._events)

    @property
    def run_id(self) -> str | None:
        """The runtime's id of this run, once it has started."""
        first = self._events[0] if self._events else None
        return first.run_id if isinstance(first, RunStarted) else None

    @property
    def followers(self) -> int:
        """How many readers read the run now (`read`, `follow`, not yet closed)."""
        return self._reading

    def last(self) -> RuntimeEvent | None:
        """The latest event, if any."""
        return self._events[-1] if self._events else None

    def unshared(self) -> list[RuntimeEvent]:
        """The events the store has not logged yet (shared runs)."""
        return self._events[self.shared:]

    def add(self, events: Sequence[RuntimeEvent]) -> None:
        """Append `events` and wake the readers that wait."""
        self._events.extend(events)
        self._wake()

    def end(self) -> None:
        """No more events will come."""
        self.done = True
        self._wake()

    async def ended(self) -> None:
        """Wait until the run has ended (no more events will come)."""
        while not self.done:
            await self._wait()

    async def read(self, after: int = -1
                   ) -> AsyncGenerator[tuple[int, list[RuntimeEvent]], None]:
        """The events after index `after` (all, by default), each time all there are, with the
        index of the first, until the run's end; waiting for more while it goes on."""
        at = after + 1
        self._reading += 1
        try:
            while True:
                if at < len(self._events):
                    batch = self._events[at:]
                    yield at, batch
                    at += len(batch)
                elif self.done:
                    return
                else:
                    await self._wait()
        finally:
            self._reading -= 1

    async def follow_batches(self, start: int = 0
                             ) -> AsyncGenerator[list[RuntimeEvent], None]:
        """The events from index `start` on, each time all there are (one write each)."""
        async for _, batch in self.read(start - 1):
            yield batch

    async def follow(self, start: int = 0) -> AsyncIterator[RuntimeEvent]:
        """Every event from index `start` on, one at a time, until the run's end."""
        async for _, batch in self.read(start - 1):
            for event in batch:
                yield event

    def open_texts(self) -> list[TextEnded]:
        """A `TextEnded` for each text the run started and has not ended, with all its text: what
        the run's end must close when the service ends a run the runtime did not (a cancel, the
        server's time limit), as every run closes what it opened before its end."""
        texts: dict[tuple[str, str | None], list[str]] = {}
        open_now: dict[tuple[str, str | None], None] = {}
        for event in self._events:
            if type(event) is TextDelta:
                texts.setdefault((event.message_id, event.run_id), []).append(event.delta)
            elif type(event) is TextStarted:
                open_now[event.message_id, event.run_id] = None
            elif type(event) is TextEnded:
                open_now.pop((event.message_id, event.run_id), None)
        return [TextEnded(message_id, "".join(texts.get((message_id, run_id), ())), run_id=run_id)
                for message_id, run_id in open_now]

    def last_state(self) -> Any:
        """The shared state as the latest event gave it."""
        for event in reversed(self._events):
            if isinstance(event, StateChanged | RunStarted | RunFinished):
                return event.state
        return None

    async def _wait(self) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if not waiter.done():  # (cancelled while it waited)
                self._waiters.remove(waiter)

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
