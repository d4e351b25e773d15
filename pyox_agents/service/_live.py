"""A run as the service serves it: its events so far, each with its index, for any number of
readers, which pull them from an index (`read`), and what the service keeps of it besides.

The run appends its events (`add`); a reader waits for the next one on a future the log settles
when it adds or ends. Nothing is handed to a reader in the run's task: every reader reads in its
own. An event's index is its place in the log: a reader can go on after the last one it got.

A slow stream is mostly the text deltas of the run's reply, and the run keeps that text anyway
(`RunHandle.text_of`). So the deltas older than the last `_TAIL` events are kept as the lengths
of their pieces of it (`_Deltas`, 4 bytes a delta), not as events: an open run's memory barely
grows with each token, and a reader that reads them (a late one) gets each `TextDelta` as it was.
In the same way a `StateChanged` older than those keeps its delta alone (`state` `NOT_KEPT`)
once a later change superseded it: every version of a large state held until the run's end cost a
copy of its changed lists a step, and a collector that walked each of them. A reader that needs
the whole state of such a change makes it from the version before (the AI SDK's adapter does).
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
from array import array
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyox_agents.events import (
    NOT_KEPT,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    TextDelta,
    TextEnded,
    TextStarted,
)
from pyox_agents.runtime._handle import RunHandle
from pyox_agents.service._thread_state import ThreadState
from pyox_agents.state.conversation import State

__all__ = ["LiveRun", "LogReader"]

_TAIL = 4
"""The latest events a log keeps as they are (the readers at its end read those); it settles once
twice as many came: an open paced run holds 4 to 8 token events."""


@dataclass(slots=True, weakref_slot=True)
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
    last_run: str | None = None
    """The id of the thread's last run when this one was started."""
    shutdown: bool = False
    """The server shuts down: the run stops at its next step boundary, left for recovery."""
    shared: int = 0
    """How many of `events` were logged in the store for other processes (shared runs)."""
    store_away: bool = False
    """The store was unreachable for one of the run's writes: the run writes nothing more
    until its end, which tries once (each write would wait the store's timeout in turn)."""
    held: bool = False
    """Not a run: the thread held while it is changed apart from one (`RunService.holding`)."""
    handle: RunHandle | None = None
    """The run, once started (a person's edit of its state goes through it)."""

    @property
    def continues(self) -> bool:
        """Whether the run continues an earlier one: one that waited for a person (`resumed`),
        or one a crash cut (its id is `last_run`'s: a new run has an id of its own)."""
        return self.resumed or (self.run_id is not None and self.run_id == self.last_run)

    @property
    def conversation(self) -> State | None:
        """The conversation the run adds its messages to, once started."""
        return None if self.handle is None else self.handle.conversation
    base: int | None = None
    """The thread's number of the state the run starts from, once known (None: the server
    numbers no versions of its threads): the run's versions are shown as `base` + its own."""
    start_delta: list[dict[str, Any]] = field(default_factory=list)
    """What the request changed of the kept state (its start is a version of its own)."""
    texts: Callable[[str], Callable[[], str] | None] | None = None
    """The text the run's reply `message_id` has streamed (`RunHandle.text_of`), while it
    streams: the log keeps its read deltas as pieces of it."""
    _entries: list[RuntimeEvent | _Deltas] = field(default_factory=list)
    """Every event so far, in order, older text deltas of one reply as one `_Deltas` each."""
    _starts: list[int] = field(default_factory=list)
    """The index of the first event of each entry (`_entries`)."""
    _count: int = 0
    """How many events there are: the next one's index."""
    _settled: int = 0
    """How many entries were looked at for keeping deltas as pieces of their text."""
    _state_at: int = -1
    """The entry of the latest change looked at so, which keeps its state (-1: none)."""
    _chars: dict[str, list[Any]] = field(default_factory=dict)
    """Each reply's text (when the run gives it) and how many of its characters the deltas
    looked at so far come to."""
    _waiters: list[asyncio.Future[None]] = field(default_factory=list)
    """The readers waiting for the next event (or the end)."""
    _reading: int = 0
    """How many readers read the run now."""
    _loop: asyncio.AbstractEventLoop | None = None
    """The loop the run's readers wait in, once one waited (taken once: each
    `asyncio.get_running_loop()` asks the OS for the process's id)."""

    @property
    def events(self) -> list[RuntimeEvent]:
        """The run's events so far (a new list)."""
        return self._slice(0)

    @property
    def started(self) -> RunStarted | None:
        """The run's first event, once it has started (read without making the others again)."""
        first = self._entries[0] if self._entries else None
        return first if isinstance(first, RunStarted) else None

    @property
    def run_id(self) -> str | None:
        """The runtime's id of this run, once it has started."""
        return None if (started := self.started) is None else started.run_id

    @property
    def count(self) -> int:
        """How many events the run has given so far: the next one's index."""
        return self._count

    @property
    def followers(self) -> int:
        """How many readers read the run now (`read`, `follow`, not yet closed)."""
        return self._reading

    def last(self) -> RuntimeEvent | None:
        """The latest event, if any."""
        return self._slice(self._count - 1)[-1] if self._count else None

    def unshared(self) -> list[RuntimeEvent]:
        """The events the store has not logged yet (shared runs)."""
        return self._slice(self.shared)

    def kept_whole(self) -> ThreadState | None:
        """What the store keeps of the thread's state as this run wrote it, when that is all
        there is (None: a write failed or was fenced, so the store and the run's record must
        be read again: the record may hold a version the kept state missed)."""
        kept, versions = self.kept, self.versions
        if kept is None or (versions is not None and versions.version != kept.version):
            return None
        return kept

    def numbered(self, events: Sequence[RuntimeEvent]) -> Sequence[RuntimeEvent]:
        """`events` with the versions of the state as the thread counts them (`base` on)."""
        base = self.base
        if base is None:
            return events
        out: list[RuntimeEvent] | None = None
        for at, event in enumerate(events):
            if type(event) is StateChanged or type(event) is RunStarted:
                out = list(events) if out is None else out
                out[at] = dataclasses.replace(event, version=base + event.version)
        return events if out is None else out

    def add(self, events: Sequence[RuntimeEvent]) -> None:
        """Append `events` and wake the readers that wait."""
        count = self._count
        self._starts.extend(range(count, count + len(events)))
        self._entries.extend(events)
        self._count = count + len(events)
        if len(self._entries) - self._settled >= 2 * _TAIL:
            self._settle(len(self._entries) - _TAIL)
        self._wake()

    def end(self) -> None:
        """No more events will come."""
        self.done = True
        self._wake()

    async def begun(self) -> None:
        """Wait until the run has its first event (its start, saved) or has ended."""
        while not self._count and not self.done:
            await self._wait()

    async def ended(self) -> None:
        """Wait until the run has ended (no more events will come)."""
        while not self.done:
            await self._wait()

    def read(self, after: int = -1) -> LogReader:
        """The events after index `after` (all, by default), each time all there are, with the
        index of the first, until the run's end; waiting for more while it goes on (a
        `LogReader`: a wait that is cancelled loses nothing)."""
        return LogReader(self, after + 1)

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
        for event in self._slice(0):
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
        for entry in reversed(self._entries):
            if isinstance(entry, StateChanged | RunStarted | RunFinished):
                return entry.state
        return None

    def _slice(self, at: int) -> list[RuntimeEvent]:
        """The events from index `at` on, those kept as pieces of a text made again."""
        if at >= self._count:
            return []
        place = bisect.bisect_right(self._starts, at) - 1
        entries = self._entries
        first = entries[place]
        if type(first) is not _Deltas and not any(type(e) is _Deltas for e in entries[place:]):
            return entries[place:]  # type: ignore[return-value]  # (the usual read: the tail)
        out: list[RuntimeEvent] = []
        for index in range(place, len(entries)):
            entry = entries[index]
            if type(entry) is _Deltas:
                out.extend(entry.events(at - self._starts[index] if index == place else 0))
            else:
                out.append(entry)  # type: ignore[arg-type]
        return out

    def _settle(self, end: int) -> None:
        """Keep the text deltas of entries `_settled` to `end` as pieces of their reply's text
        (where the run gives the text), one `_Deltas` per run of deltas of one reply, and
        each change a later one superseded as its delta alone."""
        settled = self._settled
        entries, starts = self._entries[settled:end], self._starts[settled:end]
        kept: list[RuntimeEvent | _Deltas] = []
        kept_starts: list[int] = []
        last = self._entries[settled - 1] if settled else None  # a run of deltas goes on
        for entry, start in zip(entries, starts, strict=True):
            if type(entry) is TextDelta and entry.run_id is None:
                seen = self._text(entry.message_id)
                seen[1] += len(entry.delta)
                text, chars = seen
                if text is not None:
                    if type(last) is _Deltas and last.message_id == entry.message_id:
                        last.ends.append(chars)
                        continue
                    last = _Deltas(entry.message_id, text, chars - len(entry.delta), chars)
                    kept.append(last)
                    kept_starts.append(start)
                    continue
            last = entry
            kept.append(entry)
            kept_starts.append(start)
        self._entries[settled:end] = kept
        self._starts[settled:end] = kept_starts
        self._settled += len(kept)
        self._supersede([settled + at for at, entry in enumerate(kept)
                         if type(entry) is StateChanged])

    def _supersede(self, changes: list[int]) -> None:
        """Keep the state of only the latest of the changes at entries `changes` and
        `_state_at`: the others keep their delta alone."""
        if not changes:
            return
        if self._state_at >= 0:
            changes.insert(0, self._state_at)
        for at in changes[:-1]:
            change = self._entries[at]
            assert type(change) is StateChanged
            self._entries[at] = dataclasses.replace(change, state=NOT_KEPT)
        self._state_at = changes[-1]

    def _text(self, message_id: str) -> list[Any]:
        """[the text of reply `message_id` (None: not given), its characters looked at]."""
        seen = self._chars.get(message_id)
        if seen is None:
            text = self.texts(message_id) if self.texts is not None else None
            seen = self._chars[message_id] = [text, 0]
        return seen

    async def _wait(self) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = self._loop.create_future()
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


class LogReader:
    """A reader of a run's log from an index on (`LiveRun.read`): each `__anext__` gives all
    the events there are after the last it gave, with the index of the first, waiting for
    more while the run goes on. Its wait may be cancelled (a response that stops waiting to
    send a keep-alive) and the next `__anext__` goes on where it was: `cancel_safe`. It counts
    as one of the run's readers until it is closed, read to its end or dropped."""

    __slots__ = ("_at", "_live")

    cancel_safe = True
    """A cancelled `__anext__` loses nothing: its reader may stop a wait (to send a keep-alive)
    and read on."""

    def __init__(self, live: LiveRun, at: int) -> None:
        self._live: LiveRun | None = live
        self._at = at
        live._reading += 1

    def __aiter__(self) -> LogReader:
        return self

    async def __anext__(self) -> tuple[int, list[RuntimeEvent]]:
        while (live := self._live) is not None:
            at = self._at
            if at < live._count:
                batch = live._slice(at)
                self._at = at + len(batch)
                return at, batch
            if live.done:
                self._leave()
            else:
                await live._wait()
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Stop reading: the run no longer counts this reader."""
        self._leave()

    def _leave(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live._reading -= 1

    def __del__(self) -> None:
        self._leave()


class _Deltas:
    """Consecutive text deltas of one reply of the run's own, kept as where each ends in the
    reply's text (`text`, which the run keeps), not as events: read, each is the `TextDelta`
    it was."""

    __slots__ = ("ends", "message_id", "start", "text")

    def __init__(self, message_id: str, text: Callable[[], str], start: int, end: int) -> None:
        self.message_id = message_id
        self.text = text
        self.start = start
        """Where the first delta begins in the text."""
        self.ends = array("I", [end])
        """Where each delta ends in the text."""

    def events(self, skip: int = 0) -> list[RuntimeEvent]:
        """The deltas after the first `skip`, as events."""
        text, ends = self.text(), self.ends
        starts = [self.start, *ends[:-1]]
        return [TextDelta(self.message_id, text[starts[i]:ends[i]])
                for i in range(skip, len(ends))]
