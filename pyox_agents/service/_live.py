"""A run as the service serves it: its events so far, kept for any number of followers.

A slow stream is mostly text deltas, and a run keeps its events for the clients that connect or
resume later. Deltas every follower has read are therefore merged as the run goes: the pieces of
one message become a few events of up to `MERGED_CHARS` characters each, so an open run's memory
does not grow with each token it streams (a late follower reads the same text in fewer pieces).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pyox_agents.events import (
    ReasoningDelta,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgsDelta,
)
from pyox_agents.runtime._wakeup import Wakeup
from pyox_agents.service._thread_state import ThreadState

__all__ = ["MERGED_CHARS", "LiveRun"]

MERGED_CHARS = 1024
"""Deltas are merged into pieces of up to this many characters (one copy of at most this much
per merge, whatever the message's length)."""
_MERGE_EVERY = 16
"""Deltas merge once this many events came after the last merge: a merge per 16 tokens."""


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
    _read: list[list[int]] = field(default_factory=list)
    """Where each follower is in `events` (one cell each, moved by the follower)."""
    _merged: int = 0
    """How many of `events` were settled by the last merge."""

    @property
    def run_id(self) -> str | None:
        """The runtime's id of this run, once it has started."""
        first = self.events[0] if self.events else None
        return first.run_id if isinstance(first, RunStarted) else None

    def add(self, events: Sequence[RuntimeEvent]) -> None:
        """Keep `events` and wake whoever follows."""
        if len(self.events) - self._merged >= _MERGE_EVERY:
            self._merge_read()
        self.events.extend(events)
        self._more.notify()

    def _merge_read(self) -> None:
        """Merge the deltas since the last merge, once every follower has read them (and, for a
        shared run, the store has logged them): each follower is at the end before and after."""
        kept = len(self.events)
        if any(at[0] < kept for at in self._read) or (self.run_key is not None
                                                       and self.shared < kept):
            return
        start = max(self._merged - 1, 0)  # the last settled delta may take the next ones
        merged = merge_deltas(self.events[start:])
        self.events[start:] = merged
        self._merged = len(self.events)
        for at in self._read:
            at[0] = self._merged
        if self.run_key is not None:
            self.shared = self._merged

    def end(self) -> None:
        """No more events will come."""
        self.done = True
        self._more.notify()

    async def follow(self, start: int = 0) -> AsyncIterator[RuntimeEvent]:
        """Every event from number `start` on (as `events` holds them now: read deltas merge),
        those kept, then the live ones until the end."""
        async for batch in self.follow_batches(start):
            for event in batch:
                yield event

    async def follow_batches(self, start: int = 0) -> AsyncIterator[list[RuntimeEvent]]:
        """Like `follow`, but all the events there are at once in one list (fewer writes)."""
        at = [start]
        self._read.append(at)
        try:
            while True:
                if at[0] < len(self.events):
                    batch = self.events[at[0]:]
                    at[0] += len(batch)
                    yield batch
                    continue
                if self.done:
                    return
                await self._more.wait()
        finally:
            self._read.remove(at)

    def open_texts(self) -> list[TextEnded]:
        """A `TextEnded` for each text the run started and has not ended, with all its text: what
        the run's end must close when the service ends a run the runtime did not (a cancel, the
        server's time limit), as every run closes what it opened before its end."""
        texts: dict[tuple[str, str | None], list[str]] = {}
        open_now: dict[tuple[str, str | None], None] = {}
        for event in self.events:
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
        for event in reversed(self.events):
            if isinstance(event, StateChanged | RunStarted | RunFinished):
                return event.state
        return None


_Delta = TextDelta | ReasoningDelta | ToolCallArgsDelta


def merge_deltas(events: Sequence[RuntimeEvent]) -> list[RuntimeEvent]:
    """`events` with each run of consecutive deltas of one part (a message's text or reasoning,
    a tool call's arguments) of one run merged into pieces of up to `MERGED_CHARS` characters:
    the same text, in the same order, in fewer events."""
    out: list[RuntimeEvent] = []
    pieces: list[str] = []
    size = 0
    first: _Delta | None = None
    part: tuple[type, str, str | None] | None = None
    for event in events:
        if not isinstance(event, _Delta):
            if first is not None:
                out.append(_joined(first, pieces))
                first = None
            out.append(event)
            continue
        if first is not None and size < MERGED_CHARS and _part(event) == part:
            pieces.append(event.delta)
            size += len(event.delta)
            continue
        if first is not None:
            out.append(_joined(first, pieces))
        first, part, pieces, size = event, _part(event), [event.delta], len(event.delta)
    if first is not None:
        out.append(_joined(first, pieces))
    return out


def _part(event: _Delta) -> tuple[type, str, str | None]:
    """What a delta adds to: its type, its message or tool call, and its run."""
    if isinstance(event, ToolCallArgsDelta):
        return ToolCallArgsDelta, event.call_id, event.run_id
    return type(event), event.message_id, event.run_id


def _joined(first: _Delta, pieces: list[str]) -> _Delta:
    return first if len(pieces) == 1 else replace(first, delta="".join(pieces))
