"""A server's kept state of a thread, written fenced by the thread's lease token: the holder's
write lands, a stale token's is refused and changes nothing (RedisStore, PostgresStore); a
store without leases refuses a token, saying what to do."""

from __future__ import annotations

import pytest

from pyox_agents.stores import StoreConflict
from pyox_agents.stores.base import SharedRuns, Store
from tests.stores.conftest import SharedStore
from tests.stores.test_contract import store  # noqa: F401 - a fixture, used by name
from tests.stores.test_shared_leases import wait_until_expired

B_KEPT = {"version": 2, "state": {"by": "B"}, "back": [[]]}
A_KEPT = {"version": 2, "state": {"by": "A"}, "back": [[]]}


@pytest.mark.anyio
async def test_the_lease_holders_kept_state_lands(shared_store: SharedStore) -> None:
    token = await shared_store.aacquire_lease("t", "a", ttl=30)
    assert token is not None
    shared_store.write_kept_state("t", A_KEPT, token)
    assert shared_store.load_kept_state("t") == A_KEPT


@pytest.mark.anyio
async def test_a_stale_token_cannot_overwrite_the_kept_state_of_the_new_holder(
        shared_store: SharedStore) -> None:
    """A process whose lease expired (it was stopped) and was taken by another cannot replace
    the state the new holder kept."""
    stale = await shared_store.aacquire_lease("t", "a", ttl=0.05)
    assert stale is not None
    wait_until_expired(shared_store, "t")
    with pytest.raises(StoreConflict, match=r"lease of thread 't' is held by nobody"):
        shared_store.write_kept_state("t", A_KEPT, stale)
    assert shared_store.load_kept_state("t") is None
    fresh = await shared_store.aacquire_lease("t", "b", ttl=30)
    assert fresh is not None
    shared_store.write_kept_state("t", B_KEPT, fresh)
    with pytest.raises(StoreConflict, match=f"held by token {fresh}, not by token {stale}"):
        shared_store.write_kept_state("t", A_KEPT, stale)
    assert shared_store.load_kept_state("t") == B_KEPT


@pytest.mark.anyio
async def test_a_stale_tokens_async_kept_state_write_is_refused(
        shared_store: SharedStore) -> None:
    stale = await shared_store.aacquire_lease("t", "a", ttl=0.05)
    assert stale is not None
    wait_until_expired(shared_store, "t")
    fresh = await shared_store.aacquire_lease("t", "b", ttl=30)
    assert fresh is not None
    await shared_store.awrite_kept_state("t", B_KEPT, fresh)
    with pytest.raises(StoreConflict, match=f"held by token {fresh}, not by token {stale}"):
        await shared_store.awrite_kept_state("t", A_KEPT, stale)
    assert await shared_store.aload_kept_state("t") == B_KEPT


def test_a_kept_state_write_without_a_token_lands_on_every_store(store: Store) -> None:  # noqa: F811
    store.write_kept_state("t", A_KEPT)
    store.write_kept_state("t", B_KEPT)
    assert store.load_kept_state("t") == B_KEPT


def test_a_store_without_leases_refuses_a_token_saying_what_to_do(store: Store) -> None:  # noqa: F811
    if isinstance(store, SharedRuns):
        pytest.skip("this store has leases")
    with pytest.raises(NotImplementedError, match=r"has no leases.*without a token"):
        store.write_kept_state("t", A_KEPT, 1)
    assert store.load_kept_state("t") is None
