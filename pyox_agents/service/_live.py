"""A run as the service serves it: its events so far, kept for any number of followers.

A slow stream is mostly text deltas, and a run keeps its events for the clients that connect or
resume later. Deltas every follower has read are therefore merged as the run goes: the pieces of
one message become a few events of up to `MERGED_CHARS` characters each, so an open run's memory
does not grow with each token it streams (a late follower reads the same text in fewer pieces).

The text of the run's own replies is kept once: the runtime keeps each reply's text while it
streams (it records the reply), so the deltas of a reply every follower has read become a span of
that text (`_Span`), not a copy of it; a late follower reads the span as one `TextDelta`. Deltas
of a subagent's replies, of reasoning and of tool arguments are merged into strings.

A follower (`Following`) takes batches at once: one that waits with every event read, and has set
its `at_once`, is handed each new batch in the task that adds it (the run's), without a wake-up
(the protocol adapters' `AtOnce`, which a server writes through).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from pyox_agents.events import (
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    TextDelta,
    TextEnded,
    TextStarted,
)
from pyox_agents.service._merge import merge_deltas
from pyox_agents.service._thread_state import ThreadState

__all__ = ["Following", "LiveRun"]

_MERGE_EVERY = 16
"""Deltas merge once this many events came after the last merge: a merge per 16 tokens."""


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
    texts: Callable[[str], Callable[[], str] | None] | None = None
    """The text the run's reply `message_id` has streamed so far, while it streams (the run's
    `RunHandle.text_of`): its read deltas are kept as spans of it, not as copies."""
    _kept: list[RuntimeEvent | _Span] = field(default_factory=list)
    """The events so far, with the settled text of the run's own replies as spans of it."""
    _end_waiters: list[asyncio.Future[None]] = field(default_factory=list)
    """Those waiting for the run's end (a request queued behind it)."""
    _read: list[Following] = field(default_factory=list)
    """The followers reading `events` now, each at its place in them."""
    _merged: int = 0
    """How many of `events` were settled by the last merge."""
    _chars: dict[str, int] = field(default_factory=dict)
    """Characters of each of the run's own replies settled so far (where its next span starts),
    but for the open span's reply (`_open.end`)."""
    _open: _Span | None = None
    """The span at the end of the events, which takes each next token of its reply that every
    follower has read as it comes (no delta kept, no merge)."""

    @property
    def events(self) -> list[RuntimeEvent]:
        """The run's events so far, deltas that every follower read merged (a new list)."""
        return _readable(self._kept, 0)

    @property
    def run_id(self) -> str | None:
        """The runtime's id of this run, once it has started."""
        first = self._kept[0] if self._kept else None
        return first.run_id if isinstance(first, RunStarted) else None

    @property
    def followers(self) -> int:
        """How many readers follow the run now (`follow`, `follow_batches` not yet closed)."""
        return len(self._read)

    def last(self) -> RuntimeEvent | None:
        """The latest event, if any."""
        return _readable(self._kept[-1:], 0)[0] if self._kept else None

    def unshared(self) -> list[RuntimeEvent]:
        """The events the store has not logged yet (shared runs; never merged)."""
        return cast("list[RuntimeEvent]", self._kept[self.shared:])

    def add(self, events: Sequence[RuntimeEvent]) -> None:
        """Keep `events` and wake whoever follows."""
        kept = self._kept
        if len(kept) - self._merged >= _MERGE_EVERY:
            self._merge_read()
        span = self._open
        if span is not None and len(events) == 1:  # a slow stream's token, the usual event
            event = events[0]
            if type(event) is TextDelta and event.message_id == span.message_id \
                    and event.run_id is None:
                read = self._read  # its one follower (a response) takes it at once, or none
                if not read or (len(read) == 1 and read[0].at == len(kept)
                                and read[0].take_now(events)):
                    span.end += len(event.delta)  # the reply's span takes it: nothing kept
                    return
        kept.extend(events)
        read = self._read
        # a copy when there are several: a follower handed the batch may stop (one that stops
        # while it is the only one ends the loop as it leaves the list)
        for follower in read if len(read) <= 1 else read[:]:
            follower.wake(events)
        if span is not None:  # events came after the span: it takes no more tokens at once
            self._open = None
            self._chars[span.message_id] = span.end
        elif len(events) == 1 and self.texts is not None and self.run_key is None \
                and type(events[0]) is TextDelta and events[0].run_id is None:
            self._merge_read()  # a token of the run's reply that all read: its span opens now

    def add_text(self, message_id: str, delta: str) -> bool:
        """`add` for a token of the run's own reply `message_id`, as its text: taken at once
        when the open span is that reply's and its one follower (if any) waits and takes it
        at once (`Following.at_once_text`), with no event made or kept (True); False: nothing
        taken, the delta comes to `add` as an event.

        With the span open, no merge is due (it opened at one, and an event kept since
        closed it), and a follower that waits has read every event (`add` hands each new one
        to it, a merge leaves it at the end). The span opens only for a run no other process
        follows, once its first events were shown, so after `show` noted the run's versions
        of the shared state: `show_now`'s checks hold, and a server hands this the tokens
        straight from the run's outbox (`RunHandle.show_at_once`)."""
        span = self._open
        if span is None or span.message_id != message_id:
            return False
        read = self._read
        if read:
            if len(read) > 1:
                return False
            follower = read[0]  # `Following.take_now`'s checks, for a token as its text
            waiter, take = follower._waiter, follower.at_once_text
            if take is None or waiter is None or waiter.done() or not take(message_id, delta):
                return False
        span.end += len(delta)
        return True

    def _merge_read(self) -> None:
        """Merge the deltas since the last merge, once every follower has read them (and, for a
        shared run, the store has logged them): each follower is at the end before and after."""
        kept = len(self._kept)
        if any(follower.at < kept for follower in self._read) or (self.run_key is not None
                                                                  and self.shared < kept):
            return
        if self.texts is not None:
            self._span_texts()
        start = max(self._merged - 1, 0)  # the last settled delta may take the next ones
        self._kept[start:] = merge_deltas(self._kept[start:])  # type: ignore[arg-type]
        self._merged = len(self._kept)
        for follower in self._read:
            follower.at = self._merged
        if self.run_key is not None:
            self.shared = self._merged

    def _span_texts(self) -> None:
        """Make the new deltas of the run's own replies spans of their replies' texts (the
        last span taking the next deltas that follow it), where the runtime still streams
        the reply; deltas of a reply it no longer streams stay for `merge_deltas`."""
        kept, texts, chars = self._kept, self.texts, self._chars
        assert texts is not None
        last = kept[self._merged - 1] if self._merged else None
        out: list[RuntimeEvent | _Span] = []
        for event in kept[self._merged:]:
            if type(event) is not TextDelta or event.run_id is not None:
                out.append(event)
                last = event
                continue
            message, size = event.message_id, len(event.delta)
            at = chars.get(message, 0)
            chars[message] = at + size
            if type(last) is _Span and last.message_id == message and last.end == at:
                last.end = at + size
                continue
            text = texts(message)
            if text is None:  # a reply the runtime no longer streams: its deltas as they are
                out.append(event)
                last = event
                continue
            last = _Span(message, text, at, at + size)
            out.append(last)
        kept[self._merged:] = out
        if out and out[-1] is last and type(last) is _Span and self.run_key is None:
            self._open = last  # it takes the next tokens as they come (see `add`)

    def end(self) -> None:
        """No more events will come."""
        self.done = True
        self.texts = None  # (it refers to the run, which refers to this: no cycle left)
        for follower in self._read[:]:
            follower.wake(())
        for waiter in self._end_waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._end_waiters.clear()

    async def ended(self) -> None:
        """Wait until the run has ended (no more events will come)."""
        if self.done:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._end_waiters.append(waiter)
        await waiter

    async def follow(self, start: int = 0) -> AsyncIterator[RuntimeEvent]:
        """Every event from number `start` on (as `events` holds them now: read deltas merge),
        those kept, then the live ones until the end. Closing it stops following."""
        batches = self.follow_batches(start)
        try:
            async for batch in batches:
                for event in batch:
                    yield event
        finally:
            batches.close()

    def follow_batches(self, start: int = 0) -> Following:
        """Like `follow`, but all the events there are at once in one list (fewer writes)."""
        return Following(self, start)

    def open_texts(self) -> list[TextEnded]:
        """A `TextEnded` for each text the run started and has not ended, with all its text: what
        the run's end must close when the service ends a run the runtime did not (a cancel, the
        server's time limit), as every run closes what it opened before its end."""
        texts: dict[tuple[str, str | None], list[str]] = {}
        open_now: dict[tuple[str, str | None], None] = {}
        for event in _readable(self._kept, 0):
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
        for event in reversed(self._kept):
            if isinstance(event, StateChanged | RunStarted | RunFinished):
                return event.state
        return None


class Following:
    """One follower's read of a live run's events (`LiveRun.follow_batches`): each time, every
    event there is from its place on, in one list, until the run's end. Closing it (or dropping
    it) lets the run merge the deltas it has not read.

    `at_once`, when its reader sets it, takes each new batch in the task that adds it, while the
    reader waits with everything before read (the adapters' `AtOnce` protocol)."""

    __slots__ = ("_live", "_waiter", "at", "at_once", "at_once_text")

    def __init__(self, live: LiveRun, start: int) -> None:
        self._live: LiveRun | None = live
        self.at = start
        """Where the follower is in the run's events."""
        self.at_once: Callable[[list[RuntimeEvent]], None] | None = None
        self.at_once_text: Callable[[str, str], bool] | None = None
        """Takes a token of the run's own reply (message id, text) the way `at_once` takes a
        batch, or returns False having taken nothing (`AtOnceText`; `LiveRun.add_text`)."""
        self._waiter: asyncio.Future[list[RuntimeEvent]] | None = None
        live._read.append(self)

    def __aiter__(self) -> Following:
        return self

    def __anext__(self) -> asyncio.Future[list[RuntimeEvent]]:
        """Every event from the follower's place on, at once or as soon as the run adds one;
        `StopAsyncIteration` once it read all of a run that ended. A bare future: a follower
        that waits (a response, for each open run) holds no coroutine for it."""
        future: asyncio.Future[list[RuntimeEvent]] = asyncio.get_running_loop().create_future()
        if not self._give(future):
            self._waiter = future
        return future

    def _give(self, future: asyncio.Future[list[RuntimeEvent]]) -> bool:
        """Settle `future` with the events not read yet, or the end; False: nothing to give."""
        live = self._live
        if live is None:
            future.set_exception(StopAsyncIteration())
            return True
        kept = live._kept
        if self.at < len(kept):
            # a follower behind the last merge (a late one) reads its spans as deltas
            batch = _readable(kept, self.at) if self.at < live._merged else cast(
                "list[RuntimeEvent]", kept[self.at:])
            self.at = len(kept)
            future.set_result(batch)
            return True
        if live.done:  # read to the end: the run no longer refers to this follower
            self.close()
            future.set_exception(StopAsyncIteration())
            return True
        return False

    def take_now(self, batch: Sequence[RuntimeEvent]) -> bool:
        """Hand `batch` over at once, without the run keeping it, if the follower waits with
        all before it read and takes batches at once (`at_once`); False: it cannot."""
        waiter, at_once = self._waiter, self.at_once
        if waiter is None or at_once is None or waiter.done():
            return False
        at_once(batch if type(batch) is list else list(batch))
        return True

    def wake(self, batch: Sequence[RuntimeEvent]) -> None:
        """The run added `batch` (or ended, with an empty one): hand it over at once when the
        follower waits with all before it read, else give it to the follower if it waits."""
        waiter = self._waiter
        if waiter is None:
            return
        if waiter.done():  # a follower cancelled meanwhile has its future cancelled
            self._waiter = None
            return
        live = self._live
        if batch and live is not None and self.at + len(batch) == len(live._kept) \
                and self.take_now(batch):
            self.at += len(batch)
            return
        self._waiter = None
        if not self._give(waiter):  # nothing new (an empty batch): it waits on
            self._waiter = waiter

    async def aclose(self) -> None:
        """Stop following: the run no longer keeps its unmerged deltas for this follower."""
        self.close()

    def close(self) -> None:
        """`aclose`, at once."""
        live, self._live = self._live, None
        self.at_once = self.at_once_text = None
        if live is not None:
            live._read.remove(self)
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(StopAsyncIteration())

    def __del__(self) -> None:
        self.close()


class _Span:
    """Deltas of one of the run's own replies, kept as characters `start` to `end` of its text
    (`text()`, which the runtime keeps while the reply streams and all of it after), not as a
    copy: read, it is one `TextDelta` of them."""

    __slots__ = ("end", "message_id", "start", "text")

    def __init__(self, message_id: str, text: Callable[[], str], start: int, end: int) -> None:
        self.message_id = message_id
        self.text = text
        self.start = start
        self.end = end

    def event(self) -> TextDelta:
        """The span as the one delta it stands for."""
        return TextDelta(self.message_id, self.text()[self.start:self.end])


def _readable(kept: list[RuntimeEvent | _Span], start: int) -> list[RuntimeEvent]:
    """`kept[start:]` as events: each span read as its `TextDelta` (a copy of its text)."""
    batch = kept[start:]
    if any(type(event) is _Span for event in batch):
        return [event.event() if isinstance(event, _Span) else event for event in batch]
    return cast("list[RuntimeEvent]", batch)
