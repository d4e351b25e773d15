"""RedisStore's own side of the run event logs (the rules both backends keep are in
test_shared_events.py): a log is a key that Redis expires."""

from __future__ import annotations

import pytest

from pyox_agents.stores.redis import RedisStore
from tests.stores.test_shared_events import events, wait_for


@pytest.mark.anyio
async def test_a_log_expires_after_its_run_ends(redis_store: RedisStore) -> None:
    store = RedisStore(redis_store.url, prefix=redis_store.prefix, events_ttl=600, done_ttl=60)
    key = f"{store.prefix}events:run-1"
    try:
        await store.aappend_events("run-1", events("start"))
        assert 60_000 < store.client.pttl(key) <= 600_000  # while it runs: events_ttl
        await store.amark_done("run-1")
        assert 0 < store.client.pttl(key) <= 60_000
        await store.amark_done("run-1", ttl=0.05)
        wait_for(lambda: not store.client.exists(key))
        assert not await store.ais_done("run-1") and await store.aread_events("run-1") == []
    finally:
        await store.aclose()
