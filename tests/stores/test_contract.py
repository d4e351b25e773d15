"""The rules every store keeps, checked against each backend through the `Store` interface only.

The `store` fixture gives each backend in turn; a new backend (Redis, PostgreSQL) joins by adding
a case to it. The tests at the end are SQLite's own: a file that outlives its connection, WAL, and
writers on several connections.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from pyox_agents.state.audit import audit_record, verify_audit
from pyox_agents.state.conversation import State
from pyox_agents.state.history import ImportEntry, RunStartEntry, UserMessageEntry
from pyox_agents.state.messages import File, Image, Message, Reply, ToolCall, Usage
from pyox_agents.state.run import RunState, RunStatus, Spent, Step, StopReason
from pyox_agents.stores import (
    Checkpoint,
    MemoryStore,
    SQLiteStore,
    StepRecord,
    Store,
    StoreConflict,
    ThreadInfo,
    page_key,
)

RUN_ID = "ab" * 32
OTHER_RUN_ID = "cd" * 32

BACKENDS = ["memory", "sqlite", "redis", "postgres"]


def open_store(kind: str, path: Path) -> Store:
    """A new, empty store of backend `kind`, keeping its data under `path` if it needs a place."""
    if kind == "memory":
        return MemoryStore()
    if kind == "sqlite":
        return SQLiteStore(path / "s.db")
    raise ValueError(f"unknown store backend {kind!r}")


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "redis":  # a real redis-server (tests/redis_server.py), fresh key prefix
        yield request.getfixturevalue("redis_store")
        return
    if request.param == "postgres":  # a throwaway cluster (tests/postgres_server.py), own schema
        yield request.getfixturevalue("postgres_store")
        return
    with open_store(request.param, tmp_path) as opened:
        yield opened


# --- building realistic States and runs ---------------------------------------------------------


def think(state: State, *calls: ToolCall, text: str = "", usage: Usage | None = None) -> None:
    """One think as the loop records it: the request, then the model's reply."""
    state._begin_think(len(state.messages), [call.name for call in calls])
    state._end_think(Reply(text, calls, usage=usage or Usage(120, 30, 1, 0.0021)))


def realistic_state(id: str = "bug-hunt-1", *, finish: bool = True) -> State:
    """A State with a history of every kind a run records: messages, a think with parallel tool
    calls answered out of order, a shared-state change, extra_data edits, a message held while
    calls were pending, compact, clear_tool_results, a notice, and (if `finish`) finish."""
    state = State(id=id, messages=[Message.user("Find the bug in this repo")],
                  extra_data={"repo": "api", "tags": ["p1"]})
    state._start_run(run_id=RUN_ID)
    grep = ToolCall("grep", {"pattern": "def pay", "paths": ["src", "lib"]}, id="call_grep")
    read = ToolCall("read", {"path": "b.py", "range": {"from": 1, "to": 40}}, id="call_read")
    think(state, grep, read, text="Looking in two places")
    state.add_message(Message.user("It is in the payment code, I think"))  # held until results
    state._add_tool_result(read, "ok", {"lines": ["def pay(x):", "    return x * 1.1"]},
                           is_error=False)
    state._add_state_change("call_read", [{"op": "add", "path": "/files/-", "value": "b.py"}], 1)
    state._add_tool_result(grep, "error", "grep: src: No such directory", is_error=True)
    with state.edit_extra_data() as data:
        data["suspect"] = {"file": "b.py", "line": 2, "confidence": 0.8}
        data["tags"].append("payments ✓")
    think(state, text="The bug is the float multiplication in b.py line 2.")
    state.compact("Found a float rounding bug in b.py:2 (pay).")
    state.add_message(Message.notice("The tests failed"))
    shot = ToolCall("screenshot", {}, id="call_shot")
    think(state, shot)
    state._add_tool_result(shot, "ok", "see image", is_error=False,
                           images=[Image("data:image/png;base64,iVBORw0KGgo=")])
    state.clear_tool_results(keep_last=0)
    if finish:
        state.finish({"file": "b.py", "line": 2, "fix": "use Decimal"})
    return state


def run_state(steps: int, *, run_id: str = RUN_ID, head: Mapping[str, Any] | None = None,
              status: RunStatus = RunStatus.RUNNING) -> RunState:
    """A RunState after `steps` tool steps, its audit chain ending at `head`."""
    run = RunState(run_id, "find the bug", status=status,
                   stop_reason=StopReason.STEPS if status is RunStatus.STOPPED else None,
                   steps=[Step(i, i, "tool", tool="grep", arguments={"pattern": f"p{i}"},
                               call_id=f"call_{i}", result={"hits": i}) for i in range(steps)],
                   spent=Spent(steps=steps, tool_calls=steps, input_tokens=100 * steps,
                               cost=0.002 * steps),
                   audit_head=dict(head) if head else None)
    run.check()
    return run


def commit_step(store: Store, state: State, audit: list[dict[str, Any]], *,
                run_id: str = RUN_ID, shared: Any = None, version: int | None = None) -> RunState:
    """Commit one step of a run on `state` the way the runtime does: the new entries, the run's
    record, one new audit record, and (if `version` is given) the shared state, in one write."""
    head = {"seq": audit[-1]["seq"], "digest": audit[-1]["digest"]} if audit else None
    record = audit_record(head, "step", {"n": len(audit)})
    audit.append(record)
    run = run_state(len(audit), run_id=run_id, head={"seq": record["seq"],
                                                      "digest": record["digest"]})
    held = store.entry_count(state.id)
    store.write(StepRecord(
        thread_id=state.id, first_seq=held,
        entries=tuple(entry.to_json() for entry in state._entries_since(held)),
        parent_id=state.parent_id, run=run.to_dict(), audit=(record,),
        shared_state=shared, shared_version=version,
    ))
    return run


def saved(store: Store, thread_id: str) -> tuple[Any, ...]:
    """Everything the store holds about `thread_id` and run RUN_ID, to compare before/after."""
    try:
        thread = store.load_thread(thread_id)
        held: Any = (thread.entries, thread.shared_state, thread.shared_version)
    except LookupError:
        held = None
    try:
        run: Any = store.load_run_record(RUN_ID)
    except LookupError:
        run = None
    return store.entry_count(thread_id), held, run, store.load_audit(RUN_ID)


# --- saving and loading States ------------------------------------------------------------------


def test_saving_then_loading_gives_an_equal_state(store: Store) -> None:
    state = realistic_state()
    store.save(state)
    loaded = store.load(state.id)
    assert loaded.id == state.id
    assert loaded.snapshot() == state.snapshot()
    assert loaded.history == state.history
    assert loaded.created_at == state.created_at and loaded.updated_at == state.updated_at
    assert loaded.finished and loaded.answer == {"file": "b.py", "line": 2, "fix": "use Decimal"}


def test_a_user_messages_images_and_files_are_kept_as_sent(store: Store) -> None:
    """A thread reloads with every part of its user messages: images, and files of any media
    type with data or URL sources and their filenames."""
    parts = (Image("https://x.test/a.png", "image/png"),
             File("data:application/pdf;base64,JVBERi0xLjQ=", "application/pdf", "report.pdf"),
             File("https://x.test/voice.mp3", "audio/mpeg"))
    state = State(id="files", messages=[Message.user("Read these", *parts)])
    state.add_message(Message.user("", File("data:text/plain;base64,aGk=", "text/plain",
                                            "note ✓.txt")))
    store.save(state)
    loaded = store.load(state.id)
    assert loaded.messages == state.messages
    assert loaded.messages[0].images == parts[:1] and loaded.messages[0].files == parts[1:]
    assert loaded.messages[1].files[0].filename == "note ✓.txt"
    assert loaded.history == state.history


def test_saving_again_appends_only_the_new_entries(store: Store) -> None:
    state = State(id="t", messages=[Message.user("hi")])
    store.save(state)
    assert store.entry_count("t") == 1
    call = ToolCall("search", {"q": "x"}, id="c1")
    think(state, call)
    store.save(state)
    assert store.entry_count("t") == 3
    store.save(state)  # nothing new: nothing written
    assert store.entry_count("t") == 3
    state._add_tool_result(call, "ok", [1, 2], is_error=False)
    store.save(state)
    assert store.entry_count("t") == len(state.history) == 4
    assert [row["kind"] for row in store.load_thread("t").entries] == [
        "import", "model_request", "model_reply", "tool_result"]
    assert store.load("t").snapshot() == state.snapshot()


def test_a_step_with_no_new_entries_still_writes_its_run(store: Store) -> None:
    state = State(id="t", messages=[Message.user("hi")])
    store.save(state)
    base = store.record_for(state)  # what the runtime builds a step's write on
    assert (base.first_seq, base.entries) == (1, ())
    record = audit_record(None, "approval_answered", {"approved": True})
    run = run_state(0, head={"seq": 0, "digest": record["digest"]})
    store.write(dataclasses.replace(base, run=run.to_dict(), audit=(record,)))
    assert store.entry_count("t") == 1
    assert store.load_run_record(RUN_ID) == run.to_dict() and store.load_audit(RUN_ID) == [record]


def test_a_loaded_state_can_be_continued_and_saved(store: Store) -> None:
    store.save(realistic_state(finish=False))
    loaded = store.load("bug-hunt-1")
    loaded._start_run(run_id=OTHER_RUN_ID)
    think(loaded, text="Fixed it.")
    store.save(loaded)
    assert store.entry_count("bug-hunt-1") == len(loaded.history)
    again = store.load("bug-hunt-1")
    assert again.snapshot() == loaded.snapshot()
    assert again.answer == "Fixed it."


def test_a_new_state_with_the_id_of_a_saved_one_is_refused(store: Store) -> None:
    store.save(realistic_state("t"))
    before = saved(store, "t")
    longer = State(id="t", messages=[Message.user("another conversation")])
    for _ in range(20):
        think(longer, text="...")
    shorter = State(id="t", messages=[Message.user("short")])
    for newcomer in (longer, shorter):
        with pytest.raises(StoreConflict, match=r"'t'.*store\.load\(id\)"):
            store.save(newcomer)
        assert saved(store, "t") == before


def test_a_write_with_a_stale_first_seq_is_refused_and_changes_nothing(store: Store) -> None:
    state = realistic_state("t")
    store.save(state)
    before = saved(store, "t")
    row = state.history[-1].to_json()
    for first_seq in (len(state.history) - 1, len(state.history) + 1, 0):
        with pytest.raises(StoreConflict, match=f"has {len(state.history)} saved history"):
            store.write(StepRecord("t", first_seq, entries=(row,)))
        assert saved(store, "t") == before


def test_two_loaded_copies_cannot_both_continue_a_thread(store: Store) -> None:
    store.save(State(id="t", messages=[Message.user("hi")]))
    first, second = store.load("t"), store.load("t")
    think(first, text="one")
    think(second, text="two")
    store.save(first)
    before = saved(store, "t")
    with pytest.raises(StoreConflict, match=r"store\.load\(id\)"):
        store.save(second)
    assert saved(store, "t") == before
    assert store.load("t").answer == "one"


NOT_JSON: dict[str, dict[str, Any]] = {
    "NaN in the run": {"run": {"answer": math.nan}},
    "a set in the run": {"run": {"answer": {1, 2}}},
    "NaN in an audit record": {"audit": {"data": {"x": math.inf}}},
    "an object in an audit record": {"audit": {"data": object()}},
    "a set in the shared state": {"shared": {"todos": {"a"}}},
    "bytes in an entry": {"entry": {"content": b"x"}},
    "a tuple key in an entry": {"entry": {("a", "b"): "x"}},
}


@pytest.mark.parametrize("bad", NOT_JSON.values(), ids=NOT_JSON.keys())
def test_a_write_is_all_or_nothing(store: Store, bad: dict[str, Any]) -> None:
    state = State(id="t", messages=[Message.user("hi")])
    audit: list[dict[str, Any]] = []
    commit_step(store, state, audit, shared={"todos": []}, version=1)
    before = saved(store, "t")
    think(state, ToolCall("add", {"text": "milk"}, id="c1"))
    head = {"seq": 0, "digest": audit[0]["digest"]}
    record = {**audit_record(head, "step", {"n": 1}), **bad.get("audit", {})}
    run = {**run_state(2, head={"seq": 1, "digest": record["digest"]}).to_dict(),
           **bad.get("run", {})}
    entries = [entry.to_json() for entry in state._entries_since(1)]
    entries[-1] = {**entries[-1], **bad.get("entry", {})}
    with pytest.raises((TypeError, ValueError), match="not JSON"):
        store.write(StepRecord("t", 1, entries=tuple(entries), run=run, audit=(record,),
                               shared_state=bad.get("shared", {"todos": ["milk"]}),
                               shared_version=2))
    assert saved(store, "t") == before
    verify_audit(store, RUN_ID)


def test_a_write_whose_audit_does_not_continue_the_run_changes_nothing(store: Store) -> None:
    state = State(id="t", messages=[Message.user("hi")])
    audit: list[dict[str, Any]] = []
    commit_step(store, state, audit)
    before = saved(store, "t")
    think(state, text="done")
    repeated = audit_record(None, "step", {"n": "again"})  # seq 0 again: another writer's
    with pytest.raises(StoreConflict, match=f"run '{RUN_ID}' has 1 saved audit records"):
        store.write(StepRecord("t", 1, entries=(state.history[-1].to_json(),),
                               run=run_state(1).to_dict(), audit=(repeated,)))
    assert saved(store, "t") == before


def test_audit_records_without_their_run_are_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="audit records but no run"):
        store.write(StepRecord("t", 0, audit=(audit_record(None, "step", {}),)))
    assert store.list_threads() == []


def test_loading_an_unknown_id_raises_lookup_error_naming_it(store: Store) -> None:
    with pytest.raises(LookupError, match="'nobody-1'"):
        store.load("nobody-1")
    with pytest.raises(LookupError, match="'nobody-1'"):
        store.load_thread("nobody-1")
    with pytest.raises(LookupError, match=f"'{RUN_ID}'"):
        store.load_run(RUN_ID)
    assert store.load_audit(RUN_ID) == []
    assert store.entry_count("nobody-1") == 0


def test_delete_removes_a_thread_but_keeps_its_runs(store: Store) -> None:
    state = State(id="t", messages=[Message.user("hi")])
    audit: list[dict[str, Any]] = []
    run = commit_step(store, state, audit)
    store.save(State(id="other", messages=[Message.user("keep me")]))
    store.delete("t")
    store.delete("never-saved")  # unknown ids: nothing happens
    with pytest.raises(LookupError, match="'t'"):
        store.load("t")
    assert store.entry_count("t") == 0
    assert [info.id for info in store.list_threads()] == ["other"]
    assert store.load_run_record(RUN_ID) == run.to_dict()
    assert store.load_audit(RUN_ID) == audit
    store.save(State(id="t", messages=[Message.user("a fresh start")]))  # the id is free again
    assert store.load("t").messages[0].content == "a fresh start"


def test_list_threads_gives_threads_in_first_saved_order(store: Store) -> None:
    parent = State(id="parent", messages=[Message.user("plan")])
    call = ToolCall("research", {}, id="call_r")
    think(parent, call)
    child = State(id="child", messages=[Message.user("research")])
    child._start_run(parent_id="parent", parent_call_id="call_r")
    lone = State(id="lone", messages=[Message.user("alone")])
    for state in (parent, child, lone):
        store.save(state)
    parent._add_tool_result(call, "ok", "notes", is_error=False, child_ids=("child",))
    store.save(parent)  # a later save keeps the thread's place
    infos = store.list_threads()
    assert [(i.id, i.parent_id, i.entries) for i in infos] == [
        ("parent", None, 4), ("child", "parent", 2), ("lone", None, 1)]
    for info, state in zip(infos, (parent, child, lone), strict=True):
        assert info.created_at == state.created_at
        assert info.updated_at == state.updated_at
    assert infos[0].created_at is not None and infos[0].updated_at is not None
    assert infos[0].updated_at > infos[0].created_at


def test_load_run_and_load_audit_give_back_what_each_step_wrote(store: Store) -> None:
    state = State(id="t", messages=[Message.user("hi")])
    audit: list[dict[str, Any]] = []
    for n in range(3):
        think(state, text=f"step {n}")
        run = commit_step(store, state, audit)
        assert store.load_run_record(RUN_ID) == run.to_dict()
    assert store.load_run(RUN_ID).to_dict() == run.to_dict()
    assert store.load_audit(RUN_ID) == audit
    assert [record["seq"] for record in store.load_audit(RUN_ID)] == [0, 1, 2]
    verify_audit(store, RUN_ID)
    assert store.entry_count("t") == len(state.history)


def test_runs_and_their_audit_logs_are_kept_apart(store: Store) -> None:
    one, two = State(id="one"), State(id="two")
    audit_one: list[dict[str, Any]] = []
    audit_two: list[dict[str, Any]] = []
    commit_step(store, one, audit_one)
    commit_step(store, two, audit_two, run_id=OTHER_RUN_ID)
    commit_step(store, one, audit_one)
    assert store.load_audit(RUN_ID) == audit_one and len(audit_one) == 2
    assert store.load_audit(OTHER_RUN_ID) == audit_two and len(audit_two) == 1
    verify_audit(store, RUN_ID)
    verify_audit(store, OTHER_RUN_ID)


def test_what_a_store_gives_back_is_a_copy(store: Store) -> None:
    state = State(id="t", messages=[Message.user("hi")])
    audit: list[dict[str, Any]] = []
    commit_step(store, state, audit, shared={"todos": ["a"]}, version=1)
    run = store.load_run_record(RUN_ID)
    run["goal"] = "changed"  # type: ignore[index]
    store.load_audit(RUN_ID)[0]["kind"] = "changed"  # type: ignore[index]
    store.load_thread("t").shared_state["todos"].append("b")
    assert store.load_run_record(RUN_ID)["goal"] == "find the bug"
    assert store.load_audit(RUN_ID) == audit
    assert store.load_thread("t").shared_state == {"todos": ["a"]}


def test_the_shared_state_and_its_version_are_kept_per_thread(store: Store) -> None:
    one, two = State(id="one"), State(id="two")
    assert store.save(one) is None and store.load_thread("one").shared_version is None
    audit_one: list[dict[str, Any]] = []
    audit_two: list[dict[str, Any]] = []
    commit_step(store, one, audit_one, shared={"todos": ["milk"]}, version=1)
    commit_step(store, two, audit_two, run_id=OTHER_RUN_ID, shared=["other"], version=7)
    commit_step(store, one, audit_one, shared={"todos": ["milk", "eggs"]}, version=2)
    commit_step(store, one, audit_one)  # a step that changed no state keeps the last one
    loaded = store.load_thread("one")
    assert (loaded.shared_state, loaded.shared_version) == ({"todos": ["milk", "eggs"]}, 2)
    loaded = store.load_thread("two")
    assert (loaded.shared_state, loaded.shared_version) == (["other"], 7)
    commit_step(store, two, audit_two, run_id=OTHER_RUN_ID, shared=None, version=8)
    assert (store.load_thread("two").shared_state, store.load_thread("two").shared_version) == (
        None, 8)


@pytest.mark.anyio
async def test_a_threads_owner_is_the_principal_it_was_first_saved_for(store: Store) -> None:
    bobs = State(id="bobs", messages=[Message.user("hi")])
    store.write(dataclasses.replace(store.record_for(bobs), owner="bob"))
    bobs = store.load("bobs")
    bobs.add_message(Message.user("again"))
    store.write(dataclasses.replace(store.record_for(bobs), owner="ann"))  # the first stays
    store.save(State(id="nobodys", messages=[Message.user("hi")]))
    assert store.thread_owner("bobs") == "bob" == await store.athread_owner("bobs")
    assert store.thread_owner("nobodys") is None
    with pytest.raises(LookupError, match="unknown"):
        store.thread_owner("unknown")
    with pytest.raises(LookupError, match="unknown"):
        await store.athread_owner("unknown")


def test_concurrent_saves_to_different_threads_all_land(store: Store) -> None:
    threads, steps = 8, 15
    start = threading.Barrier(threads)
    states = [State(id=f"t{n}", messages=[Message.user(f"task {n}")]) for n in range(threads)]
    errors: list[BaseException] = []

    def work(state: State) -> None:
        try:
            start.wait()
            for step in range(steps):
                think(state, text=f"step {step}")
                store.save(state)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(state,)) for state in states]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    for state in states:
        assert store.entry_count(state.id) == 1 + 2 * steps
        assert store.load(state.id).snapshot() == state.snapshot()


# --- async twins --------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_async_twins_do_what_the_sync_methods_do(store: Store) -> None:
    state = realistic_state("t")
    await store.asave(state)
    assert await store.aentry_count("t") == len(state.history)
    loaded = await store.aload("t")
    assert loaded.snapshot() == state.snapshot()
    assert [info.id for info in await store.alist_threads()] == ["t"]
    record = audit_record(None, "step", {"n": 0})
    run = run_state(1, head={"seq": 0, "digest": record["digest"]})
    await store.awrite(StepRecord("t", len(state.history), run=run.to_dict(), audit=(record,),
                                  shared_state={"x": 1}, shared_version=3))
    assert await store.aload_run_record(RUN_ID) == run.to_dict()
    assert await store.aload_audit(RUN_ID) == [record]
    assert (await store.aload_thread("t")).shared_state == {"x": 1}
    await store.adelete("t")
    with pytest.raises(LookupError, match="'t'"):
        await store.aload("t")


# --- subagents: child / achild from the store ---------------------------------------------------


def parent_with_saved_child(store: Store) -> tuple[State, State]:
    """A parent whose `research` call ran the subagent State `sub-1`; both are saved in `store`
    (the child first, as a subagent finishes before its call's result is recorded)."""
    parent = State(id="parent", messages=[Message.user("research it")])
    call = ToolCall("research", {"topic": "rounding"}, id="call_r")
    think(parent, call)
    child = State(id="sub-1", messages=[Message.user("research rounding")])
    child._start_run(parent_id=parent.id, parent_call_id=call.id)
    think(child, text="use Decimal", usage=Usage(5, 5, 1, 1.0))
    store.save(child)
    parent._add_tool_result(call, "ok", child.answer, is_error=False, child_ids=(child.id,),
                            usage=child.usage)
    store.save(parent)
    return parent, child


def test_a_loaded_state_opens_its_subagents_from_the_store(store: Store) -> None:
    _, child = parent_with_saved_child(store)
    loaded = store.load("parent")
    opened = loaded.child("sub-1")
    assert opened.snapshot() == child.snapshot()
    assert (opened.parent_id, opened.parent_call_id) == ("parent", "call_r")
    assert loaded.child("sub-1") is not opened  # loaded again, not cached
    with pytest.raises(KeyError, match="not a child"):
        loaded.child("parent")


def test_a_child_missing_from_the_store_raises_lookup_error(store: Store) -> None:
    parent = State(id="parent", messages=[Message.user("research it")])
    call = ToolCall("research", {}, id="call_r")
    think(parent, call)
    parent._add_tool_result(call, "ok", "x", is_error=False, child_ids=("elsewhere",))
    store.save(parent)
    with pytest.raises(LookupError, match="'elsewhere'"):
        store.load("parent").child("elsewhere")


class AsyncOnlyMemoryStore(MemoryStore):
    """A store that works only asynchronously, as `State.child` sees one."""

    async_only = True


@pytest.mark.anyio
async def test_an_async_only_store_needs_achild() -> None:
    store = AsyncOnlyMemoryStore()
    _, child = parent_with_saved_child(store)
    loaded = await store.aload("parent")
    with pytest.raises(TypeError, match=r"^The store works only asynchronously\. Use `achild`\.$"):
        loaded.child("sub-1")
    assert (await loaded.achild("sub-1")).snapshot() == child.snapshot()


# --- threads as an owner's resource: listing, titles, checkpoints, erasing ----------------------


def thread_at(store: Store, thread_id: str, minute: int, *, owner: str | None = "ann",
              text: str = "hello", parent: str | None = None) -> None:
    """Save thread `thread_id` for `owner` with one user message, recorded at 10:`minute`."""
    at = datetime.datetime(2025, 5, 1, 10, minute, tzinfo=datetime.UTC)
    entries = [ImportEntry(at=at, content=(Message.user(text),)).to_json()]
    if parent is not None:
        entries.append(RunStartEntry(at=at, content=None, parent_id=parent,
                                     parent_call_id="call_p").to_json())
    store.write(StepRecord(thread_id, 0, entries=tuple(entries), owner=owner, parent_id=parent))


def add_message(store: Store, thread_id: str, minute: int, text: str = "more") -> None:
    """Append a user message recorded at 10:`minute` to thread `thread_id`."""
    at = datetime.datetime(2025, 5, 1, 10, minute, tzinfo=datetime.UTC)
    entry = UserMessageEntry(at=at, content=Message.user(text)).to_json()
    store.write(StepRecord(thread_id, store.entry_count(thread_id), entries=(entry,)))


def ids(infos: list[ThreadInfo]) -> list[str]:
    return [info.id for info in infos]


def test_an_owners_threads_are_listed_newest_change_first_page_by_page(store: Store) -> None:
    for n, minute in enumerate((5, 1, 9, 3, 7)):
        thread_at(store, f"t{n}", minute)
    add_message(store, "t1", 20)  # a later change puts it first
    first = store.list_owned("ann", limit=2)
    assert ids(first) == ["t1", "t2"]
    second = store.list_owned("ann", limit=2, after=page_key(first[-1]))
    third = store.list_owned("ann", limit=2, after=page_key(second[-1]))
    assert ids(second) == ["t4", "t0"] and ids(third) == ["t3"]
    assert store.list_owned("ann", limit=2, after=page_key(third[-1])) == []
    assert first[0].updated_at == datetime.datetime(2025, 5, 1, 10, 20, tzinfo=datetime.UTC)


def test_threads_changed_at_the_same_moment_are_paged_by_id(store: Store) -> None:
    for name in ("b", "d", "a", "c"):
        thread_at(store, name, 4)
    pages, after = [], None
    while page := store.list_owned("ann", limit=1, after=after):
        pages.append(page[0].id)
        after = page_key(page[-1])
    assert pages == ["d", "c", "b", "a"]


def test_an_owners_list_leaves_out_others_subagents_and_archived_threads(store: Store) -> None:
    thread_at(store, "mine", 1)
    thread_at(store, "bobs", 2, owner="bob")
    thread_at(store, "nobodys", 3, owner=None)
    thread_at(store, "sub", 4, parent="mine")
    thread_at(store, "old", 5)
    store.update_thread("old", archived=True)
    assert ids(store.list_owned("ann")) == ["mine"]
    assert ids(store.list_owned("ann", archived=True)) == ["old"]
    assert ids(store.list_owned("bob")) == ["bobs"]
    assert ids(store.list_owned(None)) == ["nobodys"]
    store.update_thread("old", archived=False)
    assert ids(store.list_owned("ann")) == ["old", "mine"]
    assert store.list_owned("ann", archived=True) == []


def test_archived_none_lists_archived_and_other_threads_in_one_order_page_by_page(
        store: Store) -> None:
    for n, minute in enumerate((5, 1, 9, 3, 7)):
        thread_at(store, f"t{n}", minute)
    for name in ("b", "a"):  # changed at the same moment, one of them archived
        thread_at(store, name, 4)
    for thread_id in ("t1", "t4", "a"):
        store.update_thread(thread_id, archived=True)
    thread_at(store, "bobs", 6, owner="bob")
    thread_at(store, "sub", 8, parent="t0")
    both = store.list_owned("ann", archived=None)
    assert [(info.id, info.archived) for info in both] == [
        ("t2", False), ("t4", True), ("t0", False), ("b", False), ("a", True), ("t3", False),
        ("t1", True)]
    pages, after = [], None
    while page := store.list_owned("ann", archived=None, limit=2, after=after):
        pages.append(ids(page))
        after = page_key(page[-1])
    assert pages == [["t2", "t4"], ["t0", "b"], ["a", "t3"], ["t1"]]  # the cursor spans both
    assert ids(store.list_owned("ann")) == ["t2", "t0", "b", "t3"]  # False, the default
    assert ids(store.list_owned("ann", archived=True)) == ["t4", "a", "t1"]


def test_a_thread_saved_for_nobody_then_for_someone_is_listed_as_theirs(store: Store) -> None:
    thread_at(store, "t", 1, owner=None)
    state = store.load("t")
    state.add_message(Message.user("now signed in"))
    store.write(dataclasses.replace(store.record_for(state), owner="ann"))
    assert ids(store.list_owned("ann")) == ["t"]
    assert store.list_owned(None) == []


def test_an_untitled_thread_is_listed_under_its_first_user_message(store: Store) -> None:
    thread_at(store, "t", 1, text="  Plan my\ntrip to Lisbon  ")
    thread_at(store, "long", 2, text="x" * 300)
    store.save(State(id="empty"))
    infos = {info.id: info for info in store.list_owned(None)} | {
        info.id: info for info in store.list_owned("ann")}
    assert infos["t"].title == "Plan my trip to Lisbon"
    assert infos["long"].title == "x" * 79 + "…"
    assert infos["empty"].title is None


def test_a_title_and_the_archive_flag_are_kept_and_leave_the_history_alone(store: Store) -> None:
    thread_at(store, "t", 1)
    before = store.load_thread("t").entries
    store.update_thread("t", title="  Trip  ")
    store.update_thread("t", archived=True)
    (info,) = store.list_owned("ann", archived=True)
    assert (info.title, info.archived) == ("Trip", True)
    assert info.updated_at == datetime.datetime(2025, 5, 1, 10, 1, tzinfo=datetime.UTC)
    assert store.load_thread("t").entries == before
    assert [(i.title, i.archived) for i in store.list_threads()] == [("Trip", True)]
    store.update_thread("t", title="")  # taken away: listed under its first message again
    assert store.list_owned("ann", archived=True)[0].title == "hello"


def test_a_bad_title_or_an_unknown_thread_is_refused(store: Store) -> None:
    thread_at(store, "t", 1)
    with pytest.raises(ValueError, match="at most 80 characters"):
        store.update_thread("t", title="y" * 81)
    with pytest.raises(ValueError, match="one line"):
        store.update_thread("t", title="two\nlines")
    with pytest.raises(LookupError, match="'nobody-1'"):
        store.update_thread("nobody-1", title="x")
    assert store.list_owned("ann")[0].title == "hello"


def checkpoint(run_id: str, status: str, entries: int, state: Any = None) -> Checkpoint:
    kept = None if state is None else {"state": state, "back": [{"op": "remove",
                                                                  "path": "/n"}]}
    return Checkpoint(run_id, {"status": status, "entries": entries, "version": 2,
                               "run_key": f"key-{run_id[:4]}"}, kept)


def test_checkpoints_are_kept_per_run_in_the_order_first_recorded(store: Store) -> None:
    thread_at(store, "t", 1)
    store.write_checkpoint("t", checkpoint(RUN_ID, "paused", 3, {"n": 1}))
    store.write_checkpoint("t", checkpoint(OTHER_RUN_ID, "completed", 5, {"n": 2}))
    store.write_checkpoint("t", checkpoint(RUN_ID, "completed", 4, {"n": 3}))  # resumed, ended
    heads = store.load_checkpoints("t")
    assert [(c.run_id, c.head["entries"], c.state) for c in heads] == [
        (RUN_ID, 4, None), (OTHER_RUN_ID, 5, None)]
    (full,) = store.load_checkpoints("t", [RUN_ID], states=True)
    assert full == checkpoint(RUN_ID, "completed", 4, {"n": 3})
    assert store.load_checkpoints("other") == []
    assert store.list_owned("ann")[0].run_status == "completed"
    store.write_checkpoint("t", checkpoint(OTHER_RUN_ID, "paused", 5))
    assert store.list_threads()[0].run_status == "paused"
    assert store.load_checkpoints("t", [OTHER_RUN_ID], states=True)[0].state is None


def test_a_checkpoint_that_is_not_json_is_refused(store: Store) -> None:
    thread_at(store, "t", 1)
    with pytest.raises(TypeError, match="not JSON"):
        store.write_checkpoint("t", Checkpoint(RUN_ID, {"status": {1, 2}}))
    assert store.load_checkpoints("t") == []


def test_erase_removes_a_thread_its_runs_audit_checkpoints_and_subagents(store: Store) -> None:
    parent, child = parent_with_saved_child(store)
    parent._start_run(run_id=RUN_ID)
    think(parent, text="done")
    audit: list[dict[str, Any]] = []
    commit_step(store, parent, audit, shared={"n": 1}, version=1)
    child._start_run(run_id=OTHER_RUN_ID)
    commit_step(store, child, [], run_id=OTHER_RUN_ID)
    store.write_kept_state("parent", {"version": 1, "state": {"n": 1}, "back": []})
    store.write_checkpoint("parent", checkpoint(RUN_ID, "completed", 5, {"n": 1}))
    thread_at(store, "other", 1, owner=None)
    assert sorted(store.erase("parent")) == sorted([RUN_ID, OTHER_RUN_ID])
    for thread_id in ("parent", "sub-1"):
        with pytest.raises(LookupError):
            store.load(thread_id)
        assert store.load_kept_state(thread_id) is None
        assert store.load_checkpoints(thread_id) == []
    for run_id in (RUN_ID, OTHER_RUN_ID):
        with pytest.raises(LookupError):
            store.load_run_record(run_id)
        assert store.load_audit(run_id) == []
    assert ids(store.list_threads()) == ["other"] and ids(store.list_owned(None)) == ["other"]
    assert store.erase("parent") == []  # gone: nothing happens
    store.save(State(id="parent", messages=[Message.user("a fresh start")]))  # the id is free


def test_delete_forgets_a_threads_listing_and_checkpoints_too(store: Store) -> None:
    thread_at(store, "t", 1)
    store.write_checkpoint("t", checkpoint(RUN_ID, "completed", 1))
    store.delete("t")
    assert store.list_owned("ann") == [] and store.load_checkpoints("t") == []
    thread_at(store, "t", 2, owner="bob")  # the id is free again, for anyone
    assert ids(store.list_owned("bob")) == ["t"] and store.list_owned("ann") == []


@pytest.mark.anyio
async def test_the_async_twins_of_the_thread_records_do_what_the_sync_ones_do(
        store: Store) -> None:
    thread_at(store, "t", 1)
    await store.aupdate_thread("t", title="Trip")
    await store.awrite_checkpoint("t", checkpoint(RUN_ID, "paused", 1, {"n": 1}))
    (info,) = await store.alist_owned("ann")
    assert (info.title, info.run_status) == ("Trip", "paused")
    (found,) = await store.aload_checkpoints("t", states=True)
    assert found.state == {"state": {"n": 1}, "back": [{"op": "remove", "path": "/n"}]}
    assert await store.aerase("t") == []
    assert await store.alist_owned("ann") == []


def test_a_page_size_out_of_bounds_is_refused(store: Store) -> None:
    for limit in (0, 201, 2.5):
        with pytest.raises(ValueError, match="1 to 200"):
            store.list_owned("ann", limit=limit)  # type: ignore[arg-type]


# --- SQLite's own -------------------------------------------------------------------------------


def test_a_sqlite_file_keeps_everything_after_reopening(tmp_path: Path) -> None:
    audit: list[dict[str, Any]] = []
    with SQLiteStore(tmp_path / "s.db") as first:
        first.save(realistic_state("t", finish=False))
        state = first.load("t")
        think(state, text="more")
        run = commit_step(first, state, audit, shared={"n": 1}, version=1)
    with SQLiteStore(tmp_path / "s.db") as second:
        assert second.load("t").snapshot() == state.snapshot()
        assert second.load_run_record(RUN_ID) == run.to_dict()
        assert second.load_audit(RUN_ID) == audit
        assert second.load_thread("t").shared_state == {"n": 1}
        assert [info.id for info in second.list_threads()] == ["t"]


def test_a_sqlite_file_made_before_thread_titles_gets_their_columns(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as first:
        first.save(State(id="t", messages=[Message.user("from before")]))
    db = sqlite3.connect(tmp_path / "s.db")  # as an earlier version left it
    db.executescript("DROP INDEX threads_by_owner; ALTER TABLE threads DROP COLUMN title;"
                     " ALTER TABLE threads DROP COLUMN archived;"
                     " ALTER TABLE threads DROP COLUMN run_status;")
    db.close()
    with SQLiteStore(tmp_path / "s.db") as second:
        second.update_thread("t", title="Older", archived=True)
        assert [(t.id, t.title) for t in second.list_owned(None, archived=True)] == [
            ("t", "Older")]
        assert second.load("t").messages[0].content == "from before"


def test_a_sqlite_store_uses_wal(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        store.save(State(id="t", messages=[Message.user("hi")]))
    db = sqlite3.connect(tmp_path / "s.db")
    try:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        db.close()


def test_a_sqlite_store_makes_its_folder(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "a" / "b" / "s.db") as store:
        store.save(State(id="t", messages=[Message.user("hi")]))
    assert (tmp_path / "a" / "b" / "s.db").is_file()


def test_writers_on_several_connections_to_one_file_all_land(tmp_path: Path) -> None:
    stores = [SQLiteStore(tmp_path / "s.db") for _ in range(4)]
    start = threading.Barrier(len(stores))
    errors: list[BaseException] = []

    def work(n: int, store: Store) -> None:
        try:
            state = State(id=f"t{n}", messages=[Message.user("go")])
            start.wait()
            for step in range(20):
                think(state, text=f"step {step}")
                store.save(state)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=pair) for pair in enumerate(stores)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    try:
        assert errors == []
        assert sorted((i.id, i.entries) for i in stores[0].list_threads()) == [
            (f"t{n}", 41) for n in range(4)]
    finally:
        for store in stores:
            store.close()


def test_two_connections_cannot_both_continue_one_thread(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as one, SQLiteStore(tmp_path / "s.db") as two:
        one.save(State(id="t", messages=[Message.user("hi")]))
        first, second = one.load("t"), two.load("t")
        think(first, text="one")
        think(second, text="two")
        one.save(first)
        with pytest.raises(StoreConflict):
            two.save(second)
        assert two.load("t").answer == "one"
