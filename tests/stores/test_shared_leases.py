"""The per-thread lease of RedisStore and PostgresStore (each test runs once per backend): one
holder at a time, fencing tokens that only grow, and writes refused once the writer's token is not
the holder's."""

from __future__ import annotations

import time
from typing import Any

import pytest

from pyox_agents.state.audit import audit_record
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message
from pyox_agents.stores import StepRecord, StoreConflict
from tests.stores.conftest import SharedStore, expires_in_ms, snapshot
from tests.stores.test_contract import RUN_ID, run_state, think


def wait_until_expired(store: SharedStore, thread_id: str, within: float = 5.0) -> None:
    """Wait for the lease of `thread_id` to expire (the backend's clock decides when)."""
    deadline = time.monotonic() + within
    while store.lease_holder(thread_id) is not None:
        assert time.monotonic() < deadline, f"the lease of {thread_id!r} did not expire"
        time.sleep(0.01)


def first_step(thread_id: str = "t") -> StepRecord:
    """The write that starts thread `thread_id`: one message, one run with one audit record."""
    state = State(id=thread_id, messages=[Message.user("hi")])
    record = audit_record(None, "step", {"n": 0})
    run = run_state(1, head={"seq": 0, "digest": record["digest"]})
    return StepRecord(thread_id, 0, entries=tuple(e.to_json() for e in state.history),
                      run=run.to_dict(), audit=(record,), shared_state={"n": 0},
                      shared_version=1)


@pytest.mark.anyio
async def test_a_second_owner_is_refused_while_the_lease_is_held(shared_store: SharedStore) -> None:
    token = await shared_store.aacquire_lease("t", "process-a", ttl=30)
    assert isinstance(token, int)
    assert await shared_store.aacquire_lease("t", "process-b", ttl=30) is None
    assert shared_store.lease_holder("t") == ("process-a", token)
    assert await shared_store.aacquire_lease("other-thread", "process-b", ttl=30) is not None


@pytest.mark.anyio
async def test_every_acquisition_gets_a_greater_token(shared_store: SharedStore) -> None:
    first = await shared_store.aacquire_lease("t", "a", ttl=30)
    again = await shared_store.aacquire_lease("t", "a", ttl=30)  # the same owner starting over
    assert first is not None and again is not None and again > first
    assert await shared_store.arelease_lease("t", "a", again)
    taken = await shared_store.aacquire_lease("t", "b", ttl=30)
    assert taken is not None and taken > again


@pytest.mark.anyio
async def test_an_expired_lease_goes_to_the_next_owner_with_a_greater_token(
        shared_store: SharedStore) -> None:
    dead = await shared_store.aacquire_lease("t", "died", ttl=0.05)
    assert dead is not None
    wait_until_expired(shared_store, "t")
    taken = await shared_store.aacquire_lease("t", "alive", ttl=30)
    assert taken is not None and taken > dead
    assert not await shared_store.arenew_lease("t", "died", dead, ttl=30)
    assert shared_store.lease_holder("t") == ("alive", taken)


@pytest.mark.anyio
async def test_renewing_keeps_the_lease_only_for_its_holder(shared_store: SharedStore) -> None:
    token = await shared_store.aacquire_lease("t", "a", ttl=0.5)
    assert token is not None
    assert await shared_store.arenew_lease("t", "a", token, ttl=30)
    ms = expires_in_ms(shared_store, "lease", "t")
    assert ms is not None and 1000 < ms <= 30_000
    assert not await shared_store.arenew_lease("t", "b", token, ttl=30)
    assert not await shared_store.arenew_lease("t", "a", token - 1, ttl=30)
    assert not await shared_store.arenew_lease("never-leased", "a", token, ttl=30)


@pytest.mark.anyio
async def test_only_the_holder_can_release_the_lease(shared_store: SharedStore) -> None:
    token = await shared_store.aacquire_lease("t", "a", ttl=30)
    assert token is not None
    assert not await shared_store.arelease_lease("t", "b", token)
    assert not await shared_store.arelease_lease("t", "a", token + 1)
    assert shared_store.lease_holder("t") == ("a", token)
    assert await shared_store.arelease_lease("t", "a", token)
    assert shared_store.lease_holder("t") is None
    assert not await shared_store.arelease_lease("t", "a", token)  # released already


@pytest.mark.anyio
async def test_a_ttl_must_be_positive(shared_store: SharedStore) -> None:
    with pytest.raises(ValueError, match="ttl must be a positive number of seconds, got 0"):
        await shared_store.aacquire_lease("t", "a", ttl=0)


@pytest.mark.anyio
async def test_the_holders_fenced_write_lands(shared_store: SharedStore) -> None:
    token = await shared_store.aacquire_lease("t", "a", ttl=30)
    assert token is not None
    shared_store.write_fenced(first_step(), "t", token)
    assert shared_store.entry_count("t") == 1
    assert shared_store.load_thread("t").shared_state == {"n": 0}
    assert len(shared_store.load_audit(RUN_ID)) == 1


@pytest.mark.anyio
async def test_a_stale_tokens_write_is_refused_and_changes_nothing(
        shared_store: SharedStore) -> None:
    stale = await shared_store.aacquire_lease("t", "died", ttl=0.05)
    assert stale is not None
    wait_until_expired(shared_store, "t")
    before = snapshot(shared_store)
    with pytest.raises(StoreConflict, match=r"lease of thread 't' is held by nobody"):
        shared_store.write_fenced(first_step(), "t", stale)  # expired, nobody took it yet
    assert snapshot(shared_store) == before
    fresh = await shared_store.aacquire_lease("t", "alive", ttl=30)
    assert fresh is not None
    before = snapshot(shared_store)
    with pytest.raises(StoreConflict, match=f"held by token {fresh}, not by token {stale}"):
        shared_store.write_fenced(first_step(), "t", stale)
    assert snapshot(shared_store) == before
    assert shared_store.list_threads() == []
    with pytest.raises(LookupError):
        shared_store.load_run(RUN_ID)
    shared_store.write_fenced(first_step(), "t", fresh)
    assert shared_store.entry_count("t") == 1


@pytest.mark.anyio
async def test_a_subagents_thread_is_fenced_by_its_parents_lease(shared_store: SharedStore) -> None:
    token = await shared_store.aacquire_lease("parent", "a", ttl=30)
    assert token is not None
    child = State(id="child", messages=[Message.user("research")])
    think(child, text="done")
    record = StepRecord("child", 0, entries=tuple(e.to_json() for e in child.history))
    shared_store.write_fenced(record, "parent", token)
    assert shared_store.entry_count("child") == len(child.history)
    with pytest.raises(StoreConflict, match="lease of thread 'parent'"):
        shared_store.write_fenced(StepRecord("child2", 0, entries=record.entries), "parent",
                                 token + 1)
    assert shared_store.entry_count("child2") == 0


@pytest.mark.anyio
async def test_a_fenced_write_still_checks_the_entry_count(shared_store: SharedStore) -> None:
    token = await shared_store.aacquire_lease("t", "a", ttl=30)
    assert token is not None
    shared_store.write_fenced(first_step(), "t", token)
    before = snapshot(shared_store)
    with pytest.raises(StoreConflict, match="has 1 saved history entries"):
        shared_store.write_fenced(first_step(), "t", token)
    assert snapshot(shared_store) == before


@pytest.mark.anyio
async def test_a_lease_is_taken_renewed_fenced_and_released(shared_store: SharedStore) -> None:
    token = await shared_store.aacquire_lease("t", "a", ttl=30)
    assert token is not None
    assert await shared_store.aacquire_lease("t", "b", ttl=30) is None
    assert await shared_store.arenew_lease("t", "a", token, ttl=30)
    await shared_store.awrite_fenced(first_step(), "t", token)
    with pytest.raises(StoreConflict, match="lease of thread 't'"):
        await shared_store.awrite_fenced(first_step(), "t", token + 1)
    assert await shared_store.arelease_lease("t", "a", token)
    later: Any = await shared_store.aacquire_lease("t", "b", ttl=30)
    assert later > token
