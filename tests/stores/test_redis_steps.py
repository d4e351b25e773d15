"""RedisStore's one-transaction-per-step guarantee, beyond the contract: a refused write leaves
every key as it was, racing writers never both land, and big steps land whole; plus the real
asyncio methods."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import anyio
import pytest

from pyox_agents.state.audit import audit_record, verify_audit
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message
from pyox_agents.stores import StepRecord, StoreConflict
from pyox_agents.stores.redis import RedisStore
from tests.redis_server import redis_snapshot
from tests.stores.test_contract import RUN_ID, commit_step, run_state, think


def snapshot(store: RedisStore) -> dict[str, Any]:
    return redis_snapshot(store.client, store.prefix)


def test_a_stale_first_seq_changes_no_key(redis_store: RedisStore) -> None:
    state = State(id="t", messages=[Message.user("hi")])
    audit: list[dict[str, Any]] = []
    commit_step(redis_store, state, audit, shared={"n": 1}, version=1)
    before = snapshot(redis_store)
    think(state, text="more")
    record = audit_record({"seq": 0, "digest": audit[0]["digest"]}, "step", {"n": 1})
    for first_seq in (0, 2):
        with pytest.raises(StoreConflict, match="has 1 saved history entries"):
            redis_store.write(StepRecord(
                "t", first_seq, entries=(state.history[-1].to_json(),),
                run=run_state(2).to_dict(), audit=(record,), shared_state={"n": 2},
                shared_version=2))
        assert snapshot(redis_store) == before


def test_an_audit_seq_that_does_not_continue_changes_no_key(redis_store: RedisStore) -> None:
    state = State(id="t", messages=[Message.user("hi")])
    audit: list[dict[str, Any]] = []
    commit_step(redis_store, state, audit)
    commit_step(redis_store, state, audit)
    before = snapshot(redis_store)
    think(state, text="more")
    for seq in (1, 3):
        record = {**audit_record(None, "step", {}), "seq": seq}
        with pytest.raises(StoreConflict, match=f"has 2 saved audit records.*seq {seq}"):
            redis_store.write(StepRecord("t", 1, entries=(state.history[-1].to_json(),),
                                         run=run_state(3).to_dict(), audit=(record,),
                                         shared_state=[1], shared_version=9))
        assert snapshot(redis_store) == before


def test_a_refused_first_write_leaves_no_thread_behind(redis_store: RedisStore) -> None:
    with pytest.raises(StoreConflict):
        redis_store.write(StepRecord("new", 3, entries=({"kind": "import"},)))
    assert snapshot(redis_store) == {}
    assert redis_store.list_threads() == []


def test_racing_writers_of_one_thread_never_both_land(redis_store: RedisStore) -> None:
    stores = [RedisStore(redis_store.url, prefix=redis_store.prefix) for _ in range(6)]
    redis_store.save(State(id="t", messages=[Message.user("go")]))
    start = threading.Barrier(len(stores))
    landed: list[int] = []
    refused: list[int] = []

    def work(n: int, store: RedisStore) -> None:
        start.wait()
        for step in range(10):
            held = store.entry_count("t")
            try:
                store.write(StepRecord("t", held, entries=({"kind": "note", "by": n,
                                                             "step": step},)))
                landed.append(held)
            except StoreConflict:
                refused.append(held)

    workers = [threading.Thread(target=work, args=pair) for pair in enumerate(stores)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for store in stores:
        store.close()
    assert sorted(landed) == list(range(1, 1 + len(landed)))  # one writer per seq, no gaps
    assert redis_store.entry_count("t") == 1 + len(landed)
    assert len(landed) + len(refused) == 60


def test_a_big_step_lands_whole(redis_store: RedisStore) -> None:
    entries = tuple({"kind": "note", "n": n, "text": "é" * (n % 7)} for n in range(5000))
    records = [audit_record(None, "step", {"n": 0})]
    for n in range(1, 2500):
        records.append(audit_record({"seq": n - 1, "digest": records[-1]["digest"]}, "step",
                                    {"n": n}))
    run = run_state(1, head={"seq": 2499, "digest": records[-1]["digest"]})
    redis_store.write(StepRecord("t", 0, entries=entries, run=run.to_dict(),
                                 audit=tuple(records)))
    assert redis_store.load_thread("t").entries == entries
    assert redis_store.load_audit(RUN_ID) == records
    verify_audit(redis_store, RUN_ID)


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
