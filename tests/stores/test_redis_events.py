"""RedisStore's own side of the run event logs (the rules both backends keep are in
test_shared_events.py): a log is a key that Redis expires."""

from __future__ import annotations

from pyox_agents.stores.redis import RedisStore
from tests.stores.test_shared_events import events, wait_for


def test_a_log_expires_after_its_run_ends(redis_store: RedisStore) -> None:
    store = RedisStore(redis_store.url, prefix=redis_store.prefix, events_ttl=600, done_ttl=60)
    key = f"{store.prefix}events:run-1"
    try:
        store.append_events("run-1", events("start"))
        assert 60_000 < store.client.pttl(key) <= 600_000  # while it runs: events_ttl
        store.mark_done("run-1")
        assert 0 < store.client.pttl(key) <= 60_000
        store.mark_done("run-1", ttl=0.05)
        wait_for(lambda: not store.client.exists(key))
        assert not store.is_done("run-1") and store.read_events("run-1") == []
    finally:
        store.close()
