"""Fixtures of the store tests: a real redis-server, and a fresh RedisStore on it per test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest

from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name

if TYPE_CHECKING:
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
