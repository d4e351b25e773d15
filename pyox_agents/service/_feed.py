"""A thread's feed: what every open tab of a thread follows, idle or not.

Each item is a small JSON object: a version of the shared state (`state`: its number, its
RFC 6902 delta, and whether a person or the agent made it), a run starting or ending (its end
after the messages the run added: `messages`), an approval asked. Items have an id
(`ThreadFeed`: the same on every process when they are shared through the store), so a tab
that reconnects goes on after the last one it got, on any process; one that is too far behind
(or comes back to a feed no process keeps) starts again from a snapshot. A feed lives while
someone follows it (and a minute after, for a tab that reconnects) and keeps its latest `KEPT`
items, here and in the store's log.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from pyox_agents.events import (
    ApprovalRequested,
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
)
from pyox_agents.service._thread_feed import KEPT, ThreadFeed, catch_up
from pyox_agents.service._transcript import run_messages
from pyox_agents.state.conversation import State
from pyox_agents.state.frozen import thaw
from pyox_agents.stores._shared import feed_log_key
from pyox_agents.stores.base import SharedRuns

__all__ = [
    "KEPT", "EditLocks", "Feeds", "ThreadFeed", "follow_thread", "items_of",
]

_log = logging.getLogger(__name__)

Key = tuple[str | None, str]
"""(principal, thread id): a feed is its owner's; a thread id another principal follows
before the thread exists is another feed, which the owner's items never reach."""


class Feeds:
    """The feeds of this process's threads that someone follows, or followed in the last
    `GRACE` seconds (a tab that reconnects after a short cut goes on where it was).

    With a store that several processes share (`shared`), a thread's items go through the
    store: `publish` has them appended to the thread's feed log there, and each feed followed
    here reads that log (one follower per thread and process, whatever the number of tabs), so
    a tab sees the runs and edits of every process, each process's in the order it made them.
    """

    GRACE = 60.0
    RETRY = 1.0
    """Seconds between two tries to follow a feed's log again after the store failed."""
    FOLLOWED = 60.0
    """(shared) Seconds a process's mark that it follows a feed lasts; renewed every third."""
    LOOK_EVERY = 1.0
    """(shared) Seconds a process trusts what it read of whether anyone follows a feed: a
    thread nobody follows costs one look a second at most, no appends."""

    def __init__(self, shared: SharedRuns | None = None) -> None:
        self.shared = shared
        self._feeds: dict[Key, ThreadFeed] = {}
        self._idle: dict[Key, float] = {}  # feed -> when its last reader left
        self._pumps: dict[Key, asyncio.Task[None]] = {}  # (shared) each feed's log reader
        self._outbox: dict[Key, deque[str]] = {}  # (shared) items not appended to a log yet
        self._writers: dict[Key, asyncio.Task[None]] = {}  # (shared) each outbox's writer
        self._looked: dict[Key, tuple[float, bool]] = {}  # (shared) when, and if followed

    def wanted(self, thread_id: str, principal: str | None) -> bool:
        """Whether the thread's items are wanted: someone follows it here, or (shared) a
        process did when last looked, or it is time to look again (`_followed`). A run on a
        thread nobody follows builds its items once a `LOOK_EVERY` at most."""
        key = (principal, thread_id)
        if key in self._feeds:
            return True
        if self.shared is None:
            return False
        looked, followed = self._looked.get(key, (-self.LOOK_EVERY, False))
        return followed or time.monotonic() - looked >= self.LOOK_EVERY

    def publish(self, thread_id: str, principal: str | None,
                items: Sequence[dict[str, Any]]) -> None:
        """Add `items` to the feed of `principal`'s thread, if anyone follows it. Shared, they
        are appended to its log in the store by a task of the thread's, in order, so a run never
        waits on it; a store that fails loses them for the tabs, which see a gap in the
        versions at the next item and take a fresh snapshot."""
        if not items:
            return
        key = (principal, thread_id)
        if self.shared is None:
            feed = self._feeds.get(key)
            if feed is not None:
                feed.add(items)
            return
        outbox = self._outbox.setdefault(key, deque(maxlen=KEPT))
        outbox.extend(json.dumps(item, separators=(",", ":")) for item in items)
        if key not in self._writers:
            self._writers[key] = asyncio.create_task(self._write(key),
                                                     name=f"feed log of thread {thread_id}")

    async def _write(self, key: Key) -> None:
        """Append the thread's pending items to its feed log, until none is left."""
        assert self.shared is not None
        principal, thread_id = key
        try:
            while outbox := self._outbox.get(key):
                texts = list(outbox)
                outbox.clear()
                try:
                    if await self._followed(key):
                        await self.shared.aappend_events(feed_log_key(thread_id, principal),
                                                         texts, keep=KEPT)
                except Exception:
                    _log.warning("thread %s: %d feed items not logged", thread_id, len(texts),
                                 exc_info=True)
        finally:
            self._outbox.pop(key, None)
            self._writers.pop(key, None)

    async def _followed(self, key: Key) -> bool:
        """Whether any process follows the feed (here: known; elsewhere: its mark in the store,
        looked at once a `LOOK_EVERY` at most)."""
        assert self.shared is not None
        if key in self._feeds:
            return True
        looked, followed = self._looked.get(key, (-self.LOOK_EVERY, False))
        if time.monotonic() - looked >= self.LOOK_EVERY:
            followed = await self.shared.aget_active(followed_key(*key)) is not None
            if len(self._looked) > 4 * KEPT:
                self._looked.clear()
            self._looked[key] = (time.monotonic(), followed)
        return followed

    async def open(self, thread_id: str, principal: str | None) -> ThreadFeed:
        """The thread's feed, made if needed, with one more reader (`close` when done).
        Shared, it returns once the feed follows the store's log from its end.

        Raises:
            StoreUnavailable: (shared) the store cannot be reached.
        """
        self._sweep()
        key = (principal, thread_id)
        feed = self._feeds.get(key)
        if feed is None:
            feed = self._feeds[key] = ThreadFeed()
            if self.shared is None:
                feed.following.set_result(None)
            else:
                self._pumps[key] = asyncio.create_task(
                    _pump(self.shared, key, feed, self.RETRY, self.FOLLOWED, self.LOOK_EVERY),
                    name=f"feed of thread {thread_id}")
        self._idle.pop(key, None)
        feed.readers += 1
        try:
            await asyncio.shield(feed.following)
        except BaseException:
            self.close(thread_id, principal, feed)
            raise
        return feed

    def close(self, thread_id: str, principal: str | None, feed: ThreadFeed) -> None:
        """One reader less; the feed goes `GRACE` seconds after nobody reads it."""
        key = (principal, thread_id)
        feed.readers -= 1
        if feed.readers <= 0 and self._feeds.get(key) is feed:
            self._idle[key] = time.monotonic()
            if not feed.following.done() or feed.following.exception() is not None:
                self._drop(key)  # it never followed its log: the next reader starts again
        self._sweep()

    def _sweep(self) -> None:
        """Let go of the feeds nobody read for `GRACE` seconds (oldest first)."""
        now = time.monotonic()
        while self._idle:
            key, since = next(iter(self._idle.items()))
            if now - since < self.GRACE:
                return
            self._drop(key)

    def stop(self) -> None:
        """Stop following every feed log (the server is shutting down)."""
        for key in list(self._feeds):
            self._drop(key)
        for writer in self._writers.values():
            writer.cancel()

    def _drop(self, key: Key) -> None:
        self._idle.pop(key, None)
        self._feeds.pop(key, None)
        pump = self._pumps.pop(key, None)
        if pump is not None:
            pump.cancel()


def followed_key(principal: str | None, thread_id: str) -> str:
    """The mark (an "active" record in the store) that some process follows the feed."""
    return "followed " + feed_log_key(thread_id, principal)


async def _pump(store: SharedRuns, key: Key, feed: ThreadFeed, retry: float,
                followed: float, look: float) -> None:
    """Follow the feed log of `key` from its end into `feed`, forever, with the mark that this
    process follows it kept in the store: after a store failure it goes on from the last item
    it got (`retry` seconds later); a log that expired (PostgreSQL) is followed again from its
    start. It starts `look` seconds after its mark: a process that read, just before, that
    nobody follows the feed trusts that as long and appends nothing meanwhile, so the feed's
    readers take their snapshot only once every process appends again."""
    log = feed_log_key(key[1], key[0])
    try:
        await store.aset_active(followed_key(*key), "1", followed)  # before its items are told
        await asyncio.sleep(look)
        after = feed.logged_after = await store.alast_event_id(log)
    except Exception as exc:
        feed.following.set_exception(exc)
        feed.following.exception()  # (retrieved: a reader may have left meanwhile)
        return
    feed.following.set_result(None)
    marking = asyncio.create_task(_mark(store, followed_key(*key), followed))
    try:
        while True:
            try:
                async for id, text in store.follow_events(log, after):
                    after = id
                    feed.add([json.loads(text)], [id])
                after = "0"  # the log expired and ended: a new one starts at its first item
            except Exception:
                task = asyncio.current_task()
                if task is not None and task.cancelling():  # the driver's error for a cancel
                    raise asyncio.CancelledError from None
                _log.warning("the feed log %s could not be followed; trying again", log,
                             exc_info=True)
                await asyncio.sleep(retry)
    finally:
        marking.cancel()


async def _mark(store: SharedRuns, mark: str, ttl: float) -> None:
    """Renew the mark `mark` every third of its `ttl`, forever."""
    while True:
        await asyncio.sleep(ttl / 3)
        try:
            await store.aset_active(mark, "1", ttl)
        except Exception:
            _log.warning("the mark %s could not be renewed", mark, exc_info=True)


class EditLocks:
    """One lock per thread that people edit now: their edits are committed one at a time
    (each rebased onto the one before), never refused for running into each other. A lock
    lives while an edit holds it or waits for it."""

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = (
            weakref.WeakValueDictionary())

    def holding(self, thread_id: str) -> asyncio.Lock:
        """The thread's edit lock: `async with` it to wait for the edits before."""
        lock = self._locks.get(thread_id)
        if lock is None:
            lock = self._locks[thread_id] = asyncio.Lock()
        return lock


def items_of(events: Sequence[RuntimeEvent], run_id: str | None,
             start_delta: Sequence[dict[str, Any]] = (),
             conversation: State | None = None) -> list[dict[str, Any]]:
    """The feed items of a run's events (numbered as the thread's versions); `start_delta`,
    what the run's request changed of the kept state, goes with its start. With the run's
    `conversation`, its end (or pause) comes after the messages of its turn (`messages`:
    those its request added and its own, as `GET /threads/{id}` gives them), so a tab shows
    the conversation as it grows without reading it again."""
    items: list[dict[str, Any]] = []
    for event in events:
        if type(event) is StateChanged:
            items.append({"type": "state", "version": event.version,
                          "delta": [thaw(op) for op in event.delta],
                          "by": "person" if event.call_id == "" else "agent",
                          "run_id": run_id})
        elif type(event) is RunStarted:
            started = {"type": "run_started", "run_id": event.run_id, "version": event.version}
            items.append({**started, "delta": list(start_delta)} if start_delta else started)
        elif type(event) is ApprovalRequested:
            request = event.request
            items.append({"type": "approval", "run_id": run_id, "id": request.id,
                          "tool": request.tool, "prompt": request.prompt})
        elif type(event) is RunFinished:
            items.extend(_messages(conversation, run_id))
            items.append({"type": "run_finished", "run_id": run_id, "outcome": event.outcome})
        elif type(event) is RunFailed:
            items.extend(_messages(conversation, run_id))
            items.append({"type": "run_finished", "run_id": run_id, "outcome": "failed",
                          "error": event.error.public_message})
    return items


def _messages(conversation: State | None, run_id: str | None) -> list[dict[str, Any]]:
    if conversation is None or run_id is None:
        return []
    return [{"type": "messages", "run_id": run_id,
             "messages": run_messages(conversation, run_id)}]


async def follow_thread(feeds: Feeds, thread_id: str, principal: str | None,
                        last_id: str | None, snapshot: Callable[[], Awaitable[dict[str, Any]]]
                        ) -> AsyncIterator[list[tuple[str, dict[str, Any]]]]:
    """The thread's items after `last_id` (a reconnect's `Last-Event-ID`, from this process or,
    shared, any other), each time all there are, forever: when it cannot go on from `last_id`,
    first a `snapshot` item (`snapshot()`: `{version, state, running}`), then every item after
    it. The reader is counted while this is open (close it when done)."""
    feed = await feeds.open(thread_id, principal)
    try:
        after, seen = feed.place(last_id), 0
        if after is None and last_id and feeds.shared is not None:  # got on another process
            missed = await catch_up(feeds.shared, feed_log_key(thread_id, principal), feed,
                                    last_id)
            if missed is not None:
                if missed[0]:
                    yield missed[0]
                after = missed[1]
        if after is None:  # taken after joining: nothing between it and the items is missed
            after = feed.count - 1
            view = await snapshot()
            seen = view.get("version") or 0  # the versions it holds are not told again
            yield [(feed.item_id(after), {"type": "snapshot", **view})]
        async for batch in feed.read(after):
            fresh = [(i, item) for i, item in batch
                     if item.get("type") != "state" or item.get("version", 0) > seen]
            if fresh:
                yield fresh
    finally:
        feeds.close(thread_id, principal, feed)
