"""RedisStore's own store tests (the rules both backends keep are in test_shared_steps.py): a
prefix of its own per store, and the real asyncio methods."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from pyox_agents.state.audit import audit_record
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message
from pyox_agents.stores import StepRecord, StoreConflict
from pyox_agents.stores.redis import RedisStore
from tests.stores.test_contract import RUN_ID, run_state


def test_stores_with_other_prefixes_do_not_see_each_other(redis_store: RedisStore) -> None:
    with RedisStore(redis_store.url, prefix=redis_store.prefix + "other:") as other:
        try:
            other.save(State(id="t", messages=[Message.user("elsewhere")]))
            assert redis_store.list_threads() == []
            assert redis_store.entry_count("t") == 0
        finally:
            for key in other.client.scan_iter(match=f"{other.prefix}*"):
                other.client.delete(key)


# --- the real asyncio methods -------------------------------------------------------------------


@pytest.mark.anyio
async def test_awrite_aload_thread_and_aload_run_run_on_the_event_loop(
        redis_store: RedisStore) -> None:
    state = State(id="t", messages=[Message.user("hi")])
    record = audit_record(None, "step", {"n": 0})
    run = run_state(1, head={"seq": 0, "digest": record["digest"]})
    await redis_store.awrite(StepRecord("t", 0, entries=tuple(e.to_json() for e in
                                                              state.history),
                                        run=run.to_dict(), audit=(record,),
                                        shared_state={"todos": ["a"]}, shared_version=4))
    loaded = await redis_store.aload_thread("t")
    assert loaded.entries == tuple(e.to_json() for e in state.history)
    assert (loaded.shared_state, loaded.shared_version) == ({"todos": ["a"]}, 4)
    assert await redis_store.aload_run_record(RUN_ID) == run.to_dict()
    with pytest.raises(StoreConflict, match="has 1 saved history entries"):
        await redis_store.awrite(StepRecord("t", 0))
    with pytest.raises(LookupError, match="'nobody'"):
        await redis_store.aload_thread("nobody")
    with pytest.raises(LookupError, match="'nobody'"):
        await redis_store.aload_run("nobody")


@pytest.mark.anyio
async def test_many_awrites_at_once_all_land(redis_store: RedisStore) -> None:
    async def steps(thread_id: str) -> None:
        for n in range(10):
            await redis_store.awrite(StepRecord(thread_id, n, entries=({"kind": "note",
                                                                        "n": n},)))

    async with anyio.create_task_group() as tg:
        for t in range(20):
            tg.start_soon(steps, f"t{t}")
    assert sorted((i.id, i.entries) for i in redis_store.list_threads()) == sorted(
        (f"t{t}", 10) for t in range(20))


def test_the_async_methods_work_on_each_event_loop(redis_store: RedisStore) -> None:
    async def one_step(n: int) -> int:
        await redis_store.awrite(StepRecord("t", n, entries=({"kind": "note", "n": n},)))
        return len((await redis_store.aload_thread("t")).entries)

    assert asyncio.run(one_step(0)) == 1  # a loop that then closes
    assert asyncio.run(one_step(1)) == 2  # a new loop gets a client of its own


def test_the_async_methods_need_a_running_asyncio_loop(redis_store: RedisStore) -> None:
    pending = redis_store.aload_run_record(RUN_ID)  # a coroutine, driven by hand outside any loop
    with pytest.raises(RuntimeError, match="running asyncio event loop"):
        pending.send(None)
    pending.close()
