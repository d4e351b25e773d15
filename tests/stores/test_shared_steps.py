"""The one-transaction-per-step guarantee of RedisStore and PostgresStore, beyond the contract
(each test runs once per backend): a refused write leaves every key or row as it was, racing
writers never both land, and big steps land whole."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from pyox_agents.state.audit import audit_record, verify_audit
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message
from pyox_agents.stores import StepRecord, StoreConflict
from pyox_agents.stores.postgres import PostgresStore
from pyox_agents.stores.redis import RedisStore
from tests.stores import conftest
from tests.stores.conftest import SharedStore
from tests.stores.test_contract import RUN_ID, commit_step, run_state, think


def snapshot(store: SharedStore) -> dict[str, Any]:
    """Every key the RedisStore holds; every row the PostgresStore holds, but the schema
    version."""
    held = conftest.snapshot(store)
    if isinstance(store, PostgresStore):
        return {table: rows for table, rows in held.items() if rows and table != "schema_version"}
    return held


def another_client(store: SharedStore) -> SharedStore:
    """A second store on the same keys or schema, as another process would have."""
    if isinstance(store, RedisStore):
        return RedisStore(store.url, prefix=store.prefix)
    assert isinstance(store, PostgresStore)
    return PostgresStore(store.url, schema=store.schema, pool_size=2)


def test_a_stale_first_seq_changes_nothing(shared_store: SharedStore) -> None:
    state = State(id="t", messages=[Message.user("hi")])
    audit: list[dict[str, Any]] = []
    commit_step(shared_store, state, audit, shared={"n": 1}, version=1)
    before = snapshot(shared_store)
    think(state, text="more")
    record = audit_record({"seq": 0, "digest": audit[0]["digest"]}, "step", {"n": 1})
    for first_seq in (0, 2):
        with pytest.raises(StoreConflict, match="has 1 saved history entries"):
            shared_store.write(StepRecord(
                "t", first_seq, entries=(state.history[-1].to_json(),),
                run=run_state(2).to_dict(), audit=(record,), shared_state={"n": 2},
                shared_version=2))
        assert snapshot(shared_store) == before


def test_an_audit_seq_that_does_not_continue_changes_nothing(shared_store: SharedStore) -> None:
    state = State(id="t", messages=[Message.user("hi")])
    audit: list[dict[str, Any]] = []
    commit_step(shared_store, state, audit)
    commit_step(shared_store, state, audit)
    before = snapshot(shared_store)
    think(state, text="more")
    for seq in (1, 3):
        record = {**audit_record(None, "step", {}), "seq": seq}
        with pytest.raises(StoreConflict, match=f"has 2 saved audit records.*seq {seq}"):
            shared_store.write(StepRecord("t", 1, entries=(state.history[-1].to_json(),),
                                         run=run_state(3).to_dict(), audit=(record,),
                                         shared_state=[1], shared_version=9))
        assert snapshot(shared_store) == before


def test_a_refused_first_write_leaves_no_thread_behind(shared_store: SharedStore) -> None:
    with pytest.raises(StoreConflict):
        shared_store.write(StepRecord("new", 3, entries=({"kind": "import"},)))
    assert snapshot(shared_store) == {}
    assert shared_store.list_threads() == []


def test_racing_writers_of_one_thread_never_both_land(shared_store: SharedStore) -> None:
    stores = [another_client(shared_store) for _ in range(6)]
    shared_store.save(State(id="t", messages=[Message.user("go")]))
    start = threading.Barrier(len(stores))
    landed: list[int] = []
    refused: list[int] = []

    def work(n: int, store: SharedStore) -> None:
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
    assert shared_store.entry_count("t") == 1 + len(landed)
    assert len(landed) + len(refused) == 60


def test_a_big_step_lands_whole(shared_store: SharedStore) -> None:
    entries = tuple({"kind": "note", "n": n, "text": "é" * (n % 7)} for n in range(5000))
    records = [audit_record(None, "step", {"n": 0})]
    for n in range(1, 2500):
        records.append(audit_record({"seq": n - 1, "digest": records[-1]["digest"]}, "step",
                                    {"n": n}))
    run = run_state(1, head={"seq": 2499, "digest": records[-1]["digest"]})
    shared_store.write(StepRecord("t", 0, entries=entries, run=run.to_dict(),
                                 audit=tuple(records)))
    assert shared_store.load_thread("t").entries == entries
    assert shared_store.load_audit(RUN_ID) == records
    verify_audit(shared_store, RUN_ID)
