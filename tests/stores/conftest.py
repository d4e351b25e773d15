"""Fixtures of the store tests: a real redis-server and a real PostgreSQL, and a fresh RedisStore
or PostgresStore on them per test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Union

import pytest

from tests.postgres_server import (
    drop_schema,
    fresh_schema,
    postgres_server,  # noqa: F401 - a fixture, used by name
)
from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name

if TYPE_CHECKING:
    from pyox_agents.stores.postgres import PostgresStore
    from pyox_agents.stores.redis import RedisStore


def open_redis_store(url: str) -> RedisStore:
    """A RedisStore at `url` whose keys live under a prefix of its own (so tests never meet)."""
    from pyox_agents.stores.redis import RedisStore

    return RedisStore(url, prefix=f"test-{uuid.uuid4().hex[:12]}:")


def drop_keys(store: RedisStore) -> None:
    """Delete every key under `store.prefix`."""
    keys = list(store.client.scan_iter(match=f"{store.prefix}*", count=1000))
    if keys:
        store.client.delete(*keys)


@pytest.fixture
async def redis_store(
    redis_server: str, anyio_backend: str  # noqa: F811 - redis_server is the fixture above
) -> AsyncIterator[RedisStore]:
    """An empty RedisStore on the session's redis-server; its keys are deleted afterwards.

    An async fixture, so that the test's event loop is still open at the end and the store's
    asyncio client is closed on it (sync tests may use it too).
    """
    store = open_redis_store(redis_server)
    try:
        yield store
    finally:
        drop_keys(store)
        await store.aclose()


@pytest.fixture
async def postgres_store(
    postgres_server: str, anyio_backend: str  # noqa: F811 - postgres_server is the fixture above
) -> AsyncIterator[PostgresStore]:
    """An empty PostgresStore on the session's PostgreSQL, in a schema of its own that is dropped
    afterwards (an async fixture, so its asyncio pool is closed on the test's loop)."""
    from pyox_agents.stores.postgres import PostgresStore

    store = PostgresStore(postgres_server, schema=fresh_schema())
    try:
        yield store
    finally:
        await store.aclose()
        drop_schema(postgres_server, store.schema)


SHARED_BACKENDS = ["redis", "postgres"]
SharedStore = Union["RedisStore", "PostgresStore"]  # what `shared_store` gives


@pytest.fixture(params=SHARED_BACKENDS)
def shared_store(request: pytest.FixtureRequest) -> SharedStore:
    """A fresh RedisStore or PostgresStore (the `redis_store` / `postgres_store` fixture)."""
    store: SharedStore = request.getfixturevalue(f"{request.param}_store")
    return store


def snapshot(store: SharedStore) -> dict[str, Any]:
    """Everything `store` holds, to compare before and after a refused write."""
    from pyox_agents.stores.redis import RedisStore

    if isinstance(store, RedisStore):
        from tests.redis_server import redis_snapshot

        return redis_snapshot(store.client, store.prefix)
    from tests.postgres_server import postgres_snapshot

    return postgres_snapshot(store.url, store.schema)


# where each backend keeps a lease and an active-run record: Redis key prefix, PostgreSQL table
# and key column
_WHERE = {"lease": ("lease:", "leases", "thread_id"),
          "active": ("active:", "active_runs", "thread_id")}


def expires_in_ms(store: SharedStore, kind: str, key: str) -> float | None:
    """How many milliseconds the `kind` ("lease" or "active") of `key` has left, as the
    backend counts them (Redis's PTTL; the row's expiry in PostgreSQL, None if it has none)."""
    from pyox_agents.stores.redis import RedisStore

    prefix, table, column = _WHERE[kind]
    if isinstance(store, RedisStore):
        return store.client.pttl(f"{store.prefix}{prefix}{key}")
    from tests.postgres_server import expires_in_ms as row_expires_in_ms

    return row_expires_in_ms(store.url, store.schema, table, column, key)
