"""A kept state written as its changes (`append_kept_changes`), on every store: a load gives
what a whole write would have kept; an append that does not extend the version the store holds,
or whose lease token is stale, is refused and changes nothing; a compaction changes nothing a
load gives; a Store subclass without its own append still works (by whole writes)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyox_agents.state.patch import apply_json
from pyox_agents.stores import MemoryStore, SQLiteStore, Store, StoreConflict
from pyox_agents.stores._kept_changes import MAX_CHANGES
from pyox_agents.stores.base import SharedRuns
from tests.stores.conftest import SharedStore, snapshot
from tests.stores.test_contract import store  # noqa: F401 - a fixture, used by name
from tests.stores.test_shared_leases import wait_until_expired

PAD = "x" * 4000  # a base large enough that a few small changes are appended, not compacted


def first(items: list[int] | None = None) -> dict[str, Any]:
    """A kept state at version 1."""
    return {"version": 1, "state": {"todos": items or [], "pad": PAD}, "back": []}


def change(version: int, *ops: dict[str, Any]) -> dict[str, Any]:
    """Version `version`'s change: its number, then `ops` on the state."""
    return {"version": version, "ops": [{"op": "replace", "path": "/version", "value": version},
                                        *ops]}


def todo(version: int, value: Any) -> dict[str, Any]:
    """A change that appends `value` to the todos."""
    return change(version, {"op": "add", "path": "/state/todos/-", "value": value})


def whole(kept: dict[str, Any], *changes: dict[str, Any]) -> dict[str, Any]:
    """What a whole write of the latest version would have kept."""
    for one in changes:
        kept = json.loads(json.dumps(apply_json(kept, one["ops"])))
    return kept


def held_changes(held_by: Store, thread_id: str) -> int:
    """How many appended changes the store holds apart from its base (its own records)."""
    if isinstance(held_by, MemoryStore):
        kept = held_by._kept.get(thread_id)
        return 0 if kept is None else len(kept.changes)
    if isinstance(held_by, SQLiteStore):
        return int(held_by._query("SELECT count(*) FROM kept_changes WHERE thread_id = ?",
                                  thread_id)[0][0])
    from pyox_agents.stores.redis import RedisStore

    if isinstance(held_by, RedisStore):
        return int(held_by.client.llen(held_by.key("kept-changes", thread_id)))
    from pyox_agents.stores.postgres_connection import Query

    sql = "SELECT count(*) FROM {s}.kept_changes WHERE thread_id = %s"
    rows = held_by.run(Query(sql, (thread_id,)))  # type: ignore[attr-defined]
    return int(rows[0][0])


def test_appended_changes_load_as_the_whole_write_would_have_kept(
        store: Store) -> None:  # noqa: F811
    store.write_kept_state("t", first([1]))
    store.append_kept_changes("t", 1, [todo(2, 2)])
    store.append_kept_changes("t", 2, [todo(3, 3), todo(5, {"n": 4})])  # several at once
    assert store.load_kept_state("t") == whole(first([1]), todo(2, 2), todo(3, 3),
                                               todo(5, {"n": 4}))
    assert held_changes(store, "t") == 3  # appended, not written whole
    store.write_kept_state("t", first([9]))  # a whole write replaces them
    assert store.load_kept_state("t") == first([9]) and held_changes(store, "t") == 0


@pytest.mark.anyio
async def test_an_async_append_loads_as_the_whole_write_would_have_kept(
        store: Store) -> None:  # noqa: F811
    await store.awrite_kept_state("t", first())
    await store.aappend_kept_changes("t", 1, [todo(2, "a")])
    await store.aappend_kept_changes("t", 2, [todo(3, "b")])
    assert await store.aload_kept_state("t") == whole(first(), todo(2, "a"), todo(3, "b"))


def test_an_append_on_a_version_the_store_is_not_at_is_refused_and_changes_nothing(
        store: Store) -> None:  # noqa: F811
    with pytest.raises(StoreConflict, match=r"thread 't' is at no kept state, not at version "
                                            r"1 .*write the whole state"):
        store.append_kept_changes("t", 1, [todo(2, 2)])
    assert store.load_kept_state("t") is None
    store.write_kept_state("t", first())
    store.append_kept_changes("t", 1, [todo(2, "mine")])
    with pytest.raises(StoreConflict, match=r"is at version 2, not at version 1 that these"):
        store.append_kept_changes("t", 1, [todo(2, "theirs")])  # a writer on a stale base
    with pytest.raises(StoreConflict, match=r"is at version 2, not at version 3"):
        store.append_kept_changes("t", 3, [todo(4, "ahead")])
    assert store.load_kept_state("t") == whole(first(), todo(2, "mine"))
    assert held_changes(store, "t") == 1


def test_changes_whose_versions_do_not_follow_are_refused_before_anything_is_written(
        store: Store) -> None:  # noqa: F811
    store.write_kept_state("t", first())
    with pytest.raises(ValueError, match=r"changes\[1\] has version 2; each change's version"):
        store.append_kept_changes("t", 1, [todo(2, "a"), todo(2, "b")])
    with pytest.raises(ValueError, match="at least one change"):
        store.append_kept_changes("t", 1, [])
    assert store.load_kept_state("t") == first()


@pytest.mark.anyio
async def test_the_lease_holders_append_lands_and_a_stale_tokens_changes_nothing(
        shared_store: SharedStore) -> None:
    stale = await shared_store.aacquire_lease("t", "a", ttl=0.05)
    assert stale is not None
    shared_store.write_kept_state("t", first(), stale)
    wait_until_expired(shared_store, "t")
    fresh = await shared_store.aacquire_lease("t", "b", ttl=30)
    assert fresh is not None
    shared_store.append_kept_changes("t", 1, [todo(2, "new holder")], fresh)
    before = snapshot(shared_store)
    with pytest.raises(StoreConflict, match=f"held by token {fresh}, not by token {stale}"):
        shared_store.append_kept_changes("t", 2, [todo(3, "stale")], stale)
    assert snapshot(shared_store) == before
    assert shared_store.load_kept_state("t") == whole(first(), todo(2, "new holder"))


@pytest.mark.anyio
async def test_a_stale_tokens_async_append_is_refused(shared_store: SharedStore) -> None:
    stale = await shared_store.aacquire_lease("t", "a", ttl=0.05)
    assert stale is not None
    wait_until_expired(shared_store, "t")
    fresh = await shared_store.aacquire_lease("t", "b", ttl=30)
    assert fresh is not None
    await shared_store.awrite_kept_state("t", first(), fresh)
    with pytest.raises(StoreConflict, match=f"held by token {fresh}, not by token {stale}"):
        await shared_store.aappend_kept_changes("t", 1, [todo(2, "stale")], stale)
    await shared_store.aappend_kept_changes("t", 1, [todo(2, "fresh")], fresh)
    assert await shared_store.aload_kept_state("t") == whole(first(), todo(2, "fresh"))


def compaction_read_now(shared: SharedStore, thread_id: str) -> Callable[[], None]:
    """Read the kept state as a compaction does, now; give the write of what it folded."""
    from pyox_agents.stores.redis import RedisStore

    if isinstance(shared, RedisStore):
        with shared.client.pipeline(transaction=True) as pipe:
            shared.kept_reads(pipe, thread_id)
            pipe.hget(shared.key("kept-meta", thread_id), "generation")
            read = pipe.execute()
        call = shared._compaction(thread_id, *read)
        assert call is not None
        return lambda: shared.run_script(call)
    from pyox_agents.stores import postgres_kept
    from pyox_agents.stores.postgres_connection import Query

    query = postgres_kept._compaction(thread_id, shared.run(Query(postgres_kept._LOAD,
                                                                  (thread_id,))))
    assert query is not None
    return lambda: shared.run(query)


def test_a_compaction_read_before_other_writes_loses_none_of_them(
        shared_store: SharedStore) -> None:
    """Another process may write between a compaction's read and its write: the changes it
    appends meanwhile stay after the folded base, and a whole write meanwhile stands."""
    kept = first()
    shared_store.write_kept_state("t", kept)
    shared_store.append_kept_changes("t", 1, [todo(2, "a")])
    folded = compaction_read_now(shared_store, "t")
    shared_store.append_kept_changes("t", 2, [todo(3, "b")])  # meanwhile
    folded()
    assert shared_store.load_kept_state("t") == whole(kept, todo(2, "a"), todo(3, "b"))
    assert held_changes(shared_store, "t") == 1  # "b", after the folded base
    folded = compaction_read_now(shared_store, "t")
    shared_store.write_kept_state("t", first(["whole"]))  # meanwhile
    folded()
    assert shared_store.load_kept_state("t") == first(["whole"])


def test_a_store_without_leases_refuses_an_appends_token(store: Store) -> None:  # noqa: F811
    if isinstance(store, SharedRuns):
        pytest.skip("this store has leases")
    store.write_kept_state("t", first())
    with pytest.raises(NotImplementedError, match=r"has no leases"):
        store.append_kept_changes("t", 1, [todo(2, 2)], 1)
    assert store.load_kept_state("t") == first()


@pytest.mark.anyio
async def test_many_changes_are_compacted_and_load_the_same(store: Store) -> None:  # noqa: F811
    """Past `MAX_CHANGES` appends, the store writes the whole state again: a load gives the
    same before and after (the base is big enough that their size never is the reason)."""
    kept, version = {**first(), "state": {"todos": [], "pad": PAD * 100}}, 1
    store.write_kept_state("t", kept)
    most = 0
    for value in range(MAX_CHANGES + 5):
        one = todo(version + 1, value)
        if value % 2:
            await store.aappend_kept_changes("t", version, [one])
        else:
            store.append_kept_changes("t", version, [one])
        kept, version = whole(kept, one), version + 1
        most = max(most, held_changes(store, "t"))
        assert store.load_kept_state("t") == kept
    assert most == MAX_CHANGES - 1 and held_changes(store, "t") < most  # compacted


def test_a_small_state_is_written_whole_again_after_a_few_changes(
        store: Store) -> None:  # noqa: F811
    """A change as big as half its base makes the store write the whole state again."""
    small = {"version": 1, "state": {"todos": []}, "back": []}
    store.write_kept_state("t", small)
    store.append_kept_changes("t", 1, [todo(2, "an item as long as the state")])
    assert held_changes(store, "t") == 0
    assert store.load_kept_state("t") == whole(small, todo(2, "an item as long as the state"))


class UsersStore(Store):
    """A user's Store of kept states only, written before stores could append."""

    def __init__(self) -> None:
        self.kept: dict[str, str] = {}

    def write_kept_state(self, thread_id: str, kept: Any, token: int | None = None) -> None:
        self.kept[thread_id] = json.dumps(kept)

    def load_kept_state(self, thread_id: str) -> Any:
        text = self.kept.get(thread_id)
        return None if text is None else json.loads(text)


def test_a_users_store_without_an_append_takes_changes_by_whole_writes() -> None:
    users = UsersStore()
    users.write_kept_state("t", first())
    users.append_kept_changes("t", 1, [todo(2, "a")])
    assert json.loads(users.kept["t"]) == whole(first(), todo(2, "a"))  # written whole
    with pytest.raises(StoreConflict, match="is at version 2, not at version 1"):
        users.append_kept_changes("t", 1, [todo(2, "b")])
    assert users.load_kept_state("t") == whole(first(), todo(2, "a"))


def test_a_kept_state_an_earlier_sqlite_file_holds_loads_and_is_then_written_whole(
        tmp_path: Path) -> None:
    """A file made before kept states had versions: its kept state loads as it was; an append
    to it is refused (the store cannot tell its version) until it is written whole."""
    db = sqlite3.connect(tmp_path / "old.db")
    db.execute("CREATE TABLE kept_states (thread_id TEXT PRIMARY KEY, body TEXT NOT NULL)")
    db.execute("INSERT INTO kept_states VALUES ('t', ?)", (json.dumps(first()),))
    db.commit()
    db.close()
    with SQLiteStore(tmp_path / "old.db") as upgraded:
        assert upgraded.load_kept_state("t") == first()
        with pytest.raises(StoreConflict, match="is at no kept state, not at version 1"):
            upgraded.append_kept_changes("t", 1, [todo(2, "a")])
        upgraded.write_kept_state("t", first())
        upgraded.append_kept_changes("t", 1, [todo(2, "a")])
        assert upgraded.load_kept_state("t") == whole(first(), todo(2, "a"))


def test_a_sqlite_append_writes_the_change_not_the_whole_state(tmp_path: Path) -> None:
    """SQLite rewrites a whole row when one of its columns changes: an append must not touch
    the row of the whole state, or each one would write its megabytes again. Counted in the
    pages the appends add to the write-ahead log, against the pages of the state."""
    with SQLiteStore(tmp_path / "s.db") as sqlite:
        big = {**first(), "state": {"todos": [], "pad": PAD * 250}}  # ~1 MB
        sqlite.write_kept_state("t", big)
        db = sqlite._db
        db.execute("PRAGMA wal_autocheckpoint=0")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = db.execute("PRAGMA page_size").fetchone()[0]
        for version in range(1, 21):
            sqlite.append_kept_changes("t", version, [todo(version + 1, version)])
        _, logged, _ = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert logged < len(PAD * 250) / page / 2  # 20 appends: less than half the state
        assert sqlite.load_kept_state("t")["state"]["todos"] == list(range(1, 21))


# --- random sequences against whole writes -------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "c"])
STEPS = st.lists(st.one_of(
    st.tuples(st.just("append"), st.lists(st.tuples(KEYS, st.integers(0, 9) | st.none()),
                                          min_size=1, max_size=3)),
    st.tuples(st.just("whole"), st.integers(0, 3000)),
    st.tuples(st.just("stale"), st.just(None)),
), max_size=40)


def changes_of(kept: dict[str, Any], writes: list[tuple[str, int | None]]
               ) -> list[dict[str, Any]]:
    """One change per write: set a key of the state (None: remove it, if it is there)."""
    out, state, version = [], dict(kept["state"]), kept["version"]
    for key, value in writes:
        version += 1
        if value is None and key not in state:
            out.append(change(version))
            continue
        op = ({"op": "remove", "path": f"/state/{key}"} if value is None else
              {"op": "add", "path": f"/state/{key}", "value": value})
        state = apply_json(state, [{**op, "path": op["path"][len("/state"):]}])
        out.append(change(version, op))
    return out


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_random_appends_and_whole_writes_load_as_whole_writes_alone(
        kind: str, tmp_path: Path, steps: list[tuple[str, Any]]) -> None:
    with (MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / f"{id(steps)}.db")
          ) as tried:
        kept: dict[str, Any] = {"version": 1, "state": {"pad": ""}, "back": []}
        tried.write_kept_state("t", kept)
        for step, arg in steps:
            if step == "whole":  # a whole write, of a base of any size
                kept = {**kept, "version": kept["version"] + 1, "state": {"pad": "p" * arg}}
                tried.write_kept_state("t", kept)
            elif step == "stale":  # an append on the version before: refused
                with pytest.raises(StoreConflict):
                    tried.append_kept_changes("t", kept["version"] - 1,
                                              changes_of(kept, [("a", 1)]))
            else:
                changes = changes_of(kept, arg)
                tried.append_kept_changes("t", kept["version"], changes)
                kept = whole(kept, *changes)
            assert tried.load_kept_state("t") == kept
