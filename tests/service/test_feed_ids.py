"""A shared thread feed's items have their ids in the store's feed log, so a reader that got
some on one process goes on after the last one on another: from that process's feed when it
holds it, else from the log (the other process began to follow the thread later); only an id
the log cannot go on from gets a fresh snapshot. On a real `redis-server`."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from pyox_agents.service._feed import Feeds, follow_thread
from pyox_agents.stores import RedisStore
from pyox_agents.stores._shared import feed_log_key
from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name

pytestmark = pytest.mark.anyio

Items = list[tuple[str, dict[str, Any]]]


async def _snapshot() -> dict[str, Any]:
    return {"version": 0, "state": {}, "running": False}


async def _take(items: AsyncIterator[Items], count: int) -> Items:
    got: Items = []
    with anyio.fail_after(10):
        while len(got) < count:
            got.extend(await anext(items))
    return got


@pytest.fixture
async def two_processes(redis_server: str) -> AsyncIterator[tuple[Feeds, Feeds]]:  # noqa: F811
    """The feeds of two processes that share one store (a fresh key prefix each test)."""
    prefix = f"feed-{uuid.uuid4().hex[:8]}:"
    store_a, store_b = RedisStore(redis_server, prefix=prefix), RedisStore(redis_server,
                                                                          prefix=prefix)
    on_a, on_b = Feeds(store_a), Feeds(store_b)
    try:
        yield on_a, on_b
    finally:
        on_a.stop()
        on_b.stop()
        await store_a.aclose()
        await store_b.aclose()


async def test_a_reader_goes_on_on_another_process_after_the_last_item_it_got(
        two_processes: tuple[Feeds, Feeds]) -> None:
    on_a, on_b = two_processes
    thread = "t-feed"
    reader = follow_thread(on_a, thread, None, None, _snapshot)
    try:
        (snapshot,) = await _take(reader, 1)
        assert snapshot[1]["type"] == "snapshot"
        on_a.publish(thread, None, [{"type": "state", "version": v} for v in (1, 2, 3)])
        got = await _take(reader, 3)
        assert [item["version"] for _, item in got] == [1, 2, 3]
        on_a.publish(thread, None, [{"type": "state", "version": v} for v in (4, 5)])
        await _take(reader, 2)  # (in the log: B's feed, made after, starts after them)
        # B never followed the thread: its feed starts at the log's end; the log has the rest
        back = follow_thread(on_b, thread, None, got[0][0], _snapshot)
        rest = await _take(back, 4)
        assert [item["version"] for _, item in rest] == [2, 3, 4, 5]
        assert [i for i, _ in rest[:2]] == [i for i, _ in got[1:]]  # the ids A gave them
        on_b.publish(thread, None, [{"type": "state", "version": 6}])
        (sixth,) = await _take(back, 1)  # then live, from B's feed
        assert sixth[1]["version"] == 6
        again = follow_thread(on_b, thread, None, sixth[0], _snapshot)
        on_a.publish(thread, None, [{"type": "state", "version": 7}])
        (seventh,) = await _take(again, 1)  # B's feed holds the id: no read of the log
        assert seventh[1]["version"] == 7
        lost = follow_thread(on_b, thread, None, "log-not-an-id", _snapshot)
        assert (await _take(lost, 1))[0][1]["type"] == "snapshot"
        for items in (back, again, lost):
            await items.aclose()  # type: ignore[attr-defined]
    finally:
        await reader.aclose()  # type: ignore[attr-defined]


async def test_a_feed_log_keeps_its_latest_items_and_a_reader_past_them_gets_a_snapshot(
        two_processes: tuple[Feeds, Feeds], monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: a shared feed's log in the store keeps only its latest `KEPT` items (a thread
    edited all day does not grow it without end); a reader whose last item was trimmed away
    starts again from a snapshot, never with a silent gap."""
    monkeypatch.setattr("pyox_agents.service._feed.KEPT", 3)
    on_a, on_b = two_processes
    thread = "t-trim"
    reader = follow_thread(on_a, thread, None, None, _snapshot)
    try:
        await _take(reader, 1)
        got: Items = []
        for version in range(1, 9):  # one append each: the log is trimmed as it goes
            on_a.publish(thread, None, [{"type": "state", "version": version}])
            got += await _take(reader, 1)
        assert on_a.shared is not None
        log = await on_a.shared.aread_events(feed_log_key(thread, None))
        assert [json.loads(text)["version"] for _, text in log] == [6, 7, 8]
        kept = follow_thread(on_b, thread, None, got[5][0], _snapshot)  # after 6: in the log
        assert [item["version"] for _, item in await _take(kept, 2)] == [7, 8]
        trimmed = follow_thread(on_b, thread, None, got[1][0], _snapshot)  # after 2: gone
        assert (await _take(trimmed, 1))[0][1]["type"] == "snapshot"
        for items in (kept, trimmed):
            await items.aclose()  # type: ignore[attr-defined]
    finally:
        await reader.aclose()  # type: ignore[attr-defined]


async def test_a_thread_nobody_follows_is_looked_at_once_a_second_not_at_every_item(
        two_processes: tuple[Feeds, Feeds]) -> None:
    """Rule: a run on a shared store builds a thread's feed items (its end's messages walk
    the conversation) only while some process may follow the thread: once a look found
    nobody, `wanted` says no until `LOOK_EVERY` has passed; a follower on either process
    makes it yes again."""
    on_a, on_b = two_processes
    on_a.LOOK_EVERY = on_b.LOOK_EVERY = 0.3
    thread = "t-nobody"
    assert on_a.wanted(thread, None)  # never looked
    on_a.publish(thread, None, [{"type": "state", "version": 1}])
    for _ in range(500):  # until the writer has looked: nobody follows it
        if not on_a.wanted(thread, None):
            break
        await anyio.sleep(0.01)
    assert not on_a.wanted(thread, None)
    reader = follow_thread(on_b, thread, None, None, _snapshot)
    try:
        await _take(reader, 1)  # B follows it now: A hears of it at its next look
        await anyio.sleep(0.3)
        assert on_a.wanted(thread, None)
        on_a.publish(thread, None, [{"type": "state", "version": 2}])
        (item,) = await _take(reader, 1)
        assert item[1]["version"] == 2
        assert on_a.wanted(thread, None)  # the look found B: yes, without waiting
    finally:
        await reader.aclose()  # type: ignore[attr-defined]
