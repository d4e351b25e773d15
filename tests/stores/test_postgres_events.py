"""PostgresStore's own side of the run event logs (the rules both backends keep are in
test_shared_events.py): a log is a row with an expiry, and a follower waits on LISTEN."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from pyox_agents.stores.postgres import PostgresStore
from tests.postgres_server import expires_in_ms
from tests.stores.test_shared_events import events, wait_for

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def other(postgres_store: PostgresStore) -> AsyncIterator[PostgresStore]:
    """A second store on the same schema, as another server process would have."""
    async with PostgresStore(postgres_store.url, schema=postgres_store.schema) as store:
        yield store


@pytest.mark.anyio
async def test_a_log_expires_after_its_run_ends(postgres_store: PostgresStore) -> None:
    store = PostgresStore(postgres_store.url, schema=postgres_store.schema, events_ttl=600,
                          done_ttl=60)

    def ttl() -> float | None:
        return expires_in_ms(store.url, store.schema, "event_logs", "run_key", "run-1")

    try:
        await store.aappend_events("run-1", events("start"))
        assert 60_000 < (ttl() or 0) <= 600_000  # while it runs: events_ttl
        await store.amark_done("run-1")
        assert 0 < (ttl() or 0) <= 60_000
        await store.amark_done("run-1", ttl=0.05)
        wait_for(lambda: (ttl() or 0) <= 0)
        assert not await store.ais_done("run-1") and await store.aread_events("run-1") == []
    finally:
        await store.aclose()


def follower_backends(store: PostgresStore) -> list[tuple[Any, ...]]:
    """(pid, state, query_start, query) of the database sessions that follow event logs."""
    import psycopg

    with psycopg.connect(store.url, autocommit=True) as conn:
        return conn.execute(
            "SELECT pid, state, query_start, query FROM pg_stat_activity"
            " WHERE application_name = 'pyox_agents follower'").fetchall()


_APPEND_FROM_ANOTHER_PROCESS = """
import asyncio
import sys
from pyox_agents.stores.postgres import PostgresStore

async def main() -> None:
    async with PostgresStore(sys.argv[1], schema=sys.argv[2]) as store:
        await store.aappend_events("run-1", ['{"type": "text"}'])
        await store.amark_done("run-1")

asyncio.run(main())
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
