"""`ThreadFeed`: one thread's feed items so far (the latest `KEPT`), each with its id, for any
number of readers (`GET /threads/{id}/events`), and `catch_up`, what a reader that comes back
to another process than the one it followed on missed.

A feed of this process alone numbers its items itself: `<epoch>-<index>`, the epoch new with
each feed (a reader that comes back to a feed this process no longer has starts again from a
snapshot). A feed shared through the store reads its items from the thread's feed log there,
in the log's order, the same on every process; an item's id is then `log-<its id in the log>`,
so a reader that got it on one process goes on after it on any other.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections import deque
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio

from pyox_agents.stores.base import SharedRuns

__all__ = ["KEPT", "ThreadFeed", "catch_up"]

KEPT = 512
"""How many of its latest items a feed keeps for readers that reconnect."""

_LOGGED = "log-"
"""The start of the id of an item read from the store's feed log."""

_CATCH_UP = 5.0
"""Seconds a reader that comes back waits for the feed to reach the log's latest item."""


class ThreadFeed:
    """One thread's items so far (the latest `KEPT`), for any number of readers."""

    def __init__(self) -> None:
        self.epoch = secrets.token_hex(4)
        self.count = 0
        """How many items were added: the next one's index."""
        self.readers = 0
        self.logged_after: str | None = None
        """(shared) The id of the log's item the feed follows the log after: its items are
        the log's from there on."""
        self._items: deque[dict[str, Any]] = deque(maxlen=KEPT)
        self._ids: deque[str] = deque(maxlen=KEPT)  # (shared) each item's id in the log
        self._added = asyncio.Event()  # set at the next add (then a new one)
        self.following: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Done once items reach the feed (at once here; shared, once it follows the log)."""

    def add(self, items: Sequence[dict[str, Any]], log_ids: Sequence[str] = ()) -> None:
        """Append `items` (shared: with their ids in the log) and wake the readers."""
        self._items.extend(items)
        self._ids.extend(log_ids)
        self.count += len(items)
        self._added.set()
        self._added = asyncio.Event()

    def item_id(self, at: int) -> str:
        """The id of item `at` (-1: of where the feed starts, before its first item)."""
        if self.logged_after is None:
            return f"{self.epoch}-{at}"
        first = self.count - len(self._items)
        return _LOGGED + (self._ids[at - first] if at >= first else self.logged_after)

    def place(self, last_id: str | None) -> int | None:
        """The index to read after, for a reader whose last item was `last_id`: None when it
        cannot go on from there (another epoch, an item older than those kept, or one this
        shared feed does not hold: `catch_up` reads the log)."""
        if not last_id:
            return None
        if self.logged_after is not None:
            logged = last_id.removeprefix(_LOGGED)
            if logged == last_id:
                return None
            if logged == self.logged_after and self.count == len(self._items):
                return -1
            for back, log_id in enumerate(reversed(self._ids)):
                if log_id == logged:
                    return self.count - 1 - back
            return None
        epoch, _, index = last_id.partition("-")
        if epoch != self.epoch or not (index.isascii() and index.isdigit()) or len(index) > 18:
            return None
        at = int(index)
        if at >= self.count or at < self.count - len(self._items) - 1:
            return None
        return at

    async def read(self, after: int) -> AsyncIterator[list[tuple[str, dict[str, Any]]]]:
        """The items after index `after`, each time all there are, with their ids; forever."""
        at = after + 1
        while True:
            first = self.count - len(self._items)
            if at < first:
                at = first  # (a reader this far behind was told to start again)
            if at < self.count:
                items = list(self._items)[at - first:]
                yield [(self.item_id(at + i), item) for i, item in enumerate(items)]
                at += len(items)
                continue
            await self.next()

    async def next(self) -> None:
        """Wait for the next item."""
        await self._added.wait()


async def catch_up(store: SharedRuns, log: str, feed: ThreadFeed, last_id: str
                   ) -> tuple[list[tuple[str, dict[str, Any]]], int] | None:
    """For a reader of a shared feed whose last item was `last_id` and that `feed` cannot
    place (it got it on another process, before this one followed the log; or the feed no
    longer keeps it): the log's items after it, read from the store, and the index in `feed`
    to go on after (its items from there are the log's after those). None when the log cannot
    be read from there (not a log id, an expired log or one trimmed past it, a store away): a
    snapshot, then."""
    logged = last_id.removeprefix(_LOGGED)
    if logged == last_id or feed.logged_after is None:
        return None
    try:  # the whole log, which keeps its latest KEPT items: does it still hold the last one?
        rows = await store.aread_events(log)
    except Exception:
        return None
    ids = [log_id for log_id, _ in rows]
    if logged not in ids:  # trimmed past it (or expired): a gap no read can fill
        return None
    rows = rows[ids.index(logged) + 1:]
    newest = _LOGGED + (rows[-1][0] if rows else logged)
    with anyio.move_on_after(_CATCH_UP) as waited:  # the feed follows the log: it gets there
        while (at := feed.place(newest)) is None:
            await feed.next()
    if waited.cancelled_caught or at is None:
        return None
    return [(_LOGGED + log_id, json.loads(text)) for log_id, text in rows], at
