"""PostgresStore's run event logs and active-run records: what lets any server process replay and
follow a run that another process executes (the same rules as RedisStore's)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from pyox_agents.stores.postgres import PostgresStore
from tests.postgres_server import expires_in_ms

ROOT = Path(__file__).resolve().parents[2]


def events(*names: str) -> list[str]:
    return [json.dumps({"type": name}) for name in names]


@pytest.fixture
async def other(postgres_store: PostgresStore) -> AsyncIterator[PostgresStore]:
    """A second store on the same schema, as another server process would have."""
    async with PostgresStore(postgres_store.url, schema=postgres_store.schema) as store:
        yield store


def wait_for(done: Callable[[], bool], within: float = 5.0) -> None:
    """Wait for `done()` to be true: for the database's clock to expire a row."""
    deadline = time.monotonic() + within
    while not done():
        assert time.monotonic() < deadline, "the key did not expire"
        time.sleep(0.01)


def test_events_appended_by_one_client_are_read_in_order_by_another(
        postgres_store: PostgresStore, other: PostgresStore) -> None:
    ids = postgres_store.append_events("run-1", events("start", "text"))
    ids += postgres_store.append_events("run-1", events("end"))
    assert other.read_events("run-1") == list(zip(ids, events("start", "text", "end"),
                                                  strict=True))
    assert other.read_events("run-1", after_id=ids[0]) == list(
        zip(ids[1:], events("text", "end"), strict=True))
    assert other.read_events("run-1", after_id=ids[-1]) == []
    assert other.read_events("never-ran") == []


def test_runs_have_separate_logs(postgres_store: PostgresStore) -> None:
    postgres_store.append_events("run-1", events("a"))
    postgres_store.append_events("run-2", events("b"))
    assert [e for _, e in postgres_store.read_events("run-2")] == events("b")


def test_a_done_log_ends_and_takes_no_more_events(postgres_store: PostgresStore,
                                                  other: PostgresStore) -> None:
    postgres_store.append_events("run-1", events("start"))
    assert not other.is_done("run-1")
    postgres_store.mark_done("run-1")
    postgres_store.mark_done("run-1")  # again: only its expiry is set again
    assert other.is_done("run-1")
    assert [e for _, e in other.read_events("run-1")] == events("start")  # no done mark
    with pytest.raises(ValueError, match="'run-1' was marked done"):
        other.append_events("run-1", events("late"))
    assert [e for _, e in other.read_events("run-1")] == events("start")
    assert not other.is_done("never-ran")


def test_a_log_expires_after_its_run_ends(postgres_store: PostgresStore) -> None:
    store = PostgresStore(postgres_store.url, schema=postgres_store.schema, events_ttl=600,
                          done_ttl=60)

    def ttl() -> float | None:
        return expires_in_ms(store.url, store.schema, "event_logs", "run_key", "run-1")

    try:
        store.append_events("run-1", events("start"))
        assert 60_000 < (ttl() or 0) <= 600_000  # while it runs: events_ttl
        store.mark_done("run-1")
        assert 0 < (ttl() or 0) <= 60_000
        store.mark_done("run-1", ttl=0.05)
        wait_for(lambda: (ttl() or 0) <= 0)
        assert not store.is_done("run-1") and store.read_events("run-1") == []
    finally:
        store.close()


def test_append_events_wants_a_list_of_texts(postgres_store: PostgresStore) -> None:
    with pytest.raises(TypeError, match=r"wrap it: \[event_json\]"):
        postgres_store.append_events("run-1", '{"type": "start"}')


@pytest.mark.anyio
async def test_a_follower_replays_then_sees_events_appended_after_it_started(
        postgres_store: PostgresStore, other: PostgresStore) -> None:
    await postgres_store.aappend_events("run-1", events("start"))
    seen: list[str] = []
    replayed = anyio.Event()

    async def follow() -> None:
        async for _, event in other.follow_events("run-1", block_ms=100):
            seen.append(event)
            replayed.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(follow)
        await replayed.wait()  # it has replayed the log: what comes now, it must wait for
        await postgres_store.aappend_events("run-1", events("text"))
        await postgres_store.aappend_events("run-1", events("end"))
        await postgres_store.amark_done("run-1")
    assert seen == events("start", "text", "end")


@pytest.mark.anyio
async def test_two_followers_see_the_same_events(postgres_store: PostgresStore,
                                                 other: PostgresStore) -> None:
    seen: dict[str, list[tuple[str, str]]] = {"one": [], "two": []}
    started = {"one": anyio.Event(), "two": anyio.Event()}

    async def follow(name: str, store: PostgresStore) -> None:
        await store.aappend_events(f"hello-{name}", events("x"))  # its client is connected
        started[name].set()
        async for item in store.follow_events("run-1", block_ms=50):
            seen[name].append(item)

    async with anyio.create_task_group() as tg:
        tg.start_soon(follow, "one", postgres_store)
        tg.start_soon(follow, "two", other)
        await started["one"].wait()
        await started["two"].wait()
        for n in range(5):
            await postgres_store.aappend_events("run-1", events(f"e{n}"))
        await other.amark_done("run-1")
    assert seen["one"] == seen["two"] == await other.aread_events("run-1")
    assert [e for _, e in seen["one"]] == events(*(f"e{n}" for n in range(5)))


@pytest.mark.anyio
async def test_following_from_an_id_gives_only_what_came_after(
        postgres_store: PostgresStore) -> None:
    ids = await postgres_store.aappend_events("run-1", events("a", "b", "c"))
    await postgres_store.amark_done("run-1")
    assert await postgres_store.ais_done("run-1")
    after = [item async for item in postgres_store.follow_events("run-1", after_id=ids[0])]
    assert after == list(zip(ids[1:], events("b", "c"), strict=True))
    assert [item async for item in postgres_store.follow_events("run-1", after_id=ids[-1])] == []


def test_the_active_run_of_a_thread_is_seen_by_every_client(postgres_store: PostgresStore,
                                                            other: PostgresStore) -> None:
    assert other.get_active("t") is None
    postgres_store.set_active("t", "run-1", ttl=30)
    assert other.get_active("t") == "run-1"
    assert not other.clear_active("t", "run-0")  # an older run's clear leaves it
    assert other.get_active("t") == "run-1"
    assert other.clear_active("t", "run-1")
    assert postgres_store.get_active("t") is None


def test_an_active_record_expires_unless_set_again(postgres_store: PostgresStore) -> None:
    postgres_store.set_active("t", "run-1", ttl=0.05)
    postgres_store.set_active("t", "run-1", ttl=30)
    ms = expires_in_ms(postgres_store.url, postgres_store.schema, "active_runs", "thread_id", "t")
    assert ms is not None and 1000 < ms <= 30_000
    postgres_store.set_active("t", "run-2", ttl=0.05)
    wait_for(lambda: postgres_store.get_active("t") is None)


@pytest.mark.anyio
async def test_the_async_active_run_methods_do_what_the_sync_ones_do(
        postgres_store: PostgresStore) -> None:
    await postgres_store.aset_active("t", "run-1", ttl=30)
    assert await postgres_store.aget_active("t") == "run-1"
    assert not await postgres_store.aclear_active("t", "run-0")
    assert await postgres_store.aclear_active("t", "run-1")
    assert await postgres_store.aget_active("t") is None


def follower_backends(store: PostgresStore) -> list[tuple[Any, ...]]:
    """(pid, state, query_start, query) of the database sessions that follow event logs."""
    import psycopg

    with psycopg.connect(store.url, autocommit=True) as conn:
        return conn.execute(
            "SELECT pid, state, query_start, query FROM pg_stat_activity"
            " WHERE application_name = 'pyox_agents follower'").fetchall()


_APPEND_FROM_ANOTHER_PROCESS = """
import sys
from pyox_agents.stores.postgres import PostgresStore
with PostgresStore(sys.argv[1], schema=sys.argv[2]) as store:
    store.append_events("run-1", ['{"type": "text"}'])
    store.mark_done("run-1")
"""


@pytest.mark.anyio
async def test_a_follower_is_woken_by_the_append_not_by_polling(
        postgres_store: PostgresStore, other: PostgresStore) -> None:
    """The follower waits on LISTEN: while nothing is appended it sends no query, and an event
    appended by another process reaches it at once although its only timer (`block_ms`) is a
    minute away."""
    await postgres_store.aappend_events("run-1", events("start"))
    seen: list[str] = []
    replayed = anyio.Event()

    async def follow() -> None:
        async for _, event in other.follow_events("run-1", block_ms=60_000):
            seen.append(event)
            replayed.set()

    with anyio.fail_after(10):  # far below block_ms: only a notification can wake it in time
        async with anyio.create_task_group() as tg:
            tg.start_soon(follow)
            await replayed.wait()
            (waiting,) = follower_backends(postgres_store)
            assert waiting[1] == "idle" and "LISTEN" not in waiting[3]  # read, then waits
            await anyio.sleep(0.5)  # a polling follower would query again meanwhile
            assert follower_backends(postgres_store) == [waiting]
            done = await anyio.run_process(
                [sys.executable, "-c", _APPEND_FROM_ANOTHER_PROCESS, postgres_store.url,
                 postgres_store.schema], cwd=ROOT, check=False,
                env={**os.environ, "PYTHONPATH": str(ROOT)})
            assert done.returncode == 0, done.stderr.decode()
    assert seen == events("start", "text")
    wait_for(lambda: follower_backends(postgres_store) == [])  # it closed its connection
