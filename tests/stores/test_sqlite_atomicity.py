"""A step lands in SQLite whole or not at all, whichever write point fails.

Two ways to fail: the store's connection is wrapped so that its Nth statement of a write raises
(before it runs, or after it ran, COMMIT included), and triggers make one table's insert or
update raise with each of SQLite's own conflict actions (ABORT, FAIL, ROLLBACK). After each
failure a second connection reloads the file and must see the step before or the step complete,
never a mix, and the store must still take the next write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyox_agents.state.audit import audit_record, verify_audit
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message, Reply, ToolCall, Usage
from pyox_agents.state.run import RunState, Spent, Step
from pyox_agents.stores import SQLiteStore, StepRecord, StoreConflict

RUN_ID = "ef" * 32


class Injected(Exception):
    """The failure these tests inject."""


class FailingConnection:
    """A sqlite3 connection whose statement number `fail_at` (counted from `arm()`) raises.

    With `after=True` the statement runs first, then the error is raised, as when a COMMIT
    reached the disk but the caller never heard back.
    """

    def __init__(self, db: sqlite3.Connection, error: BaseException, after: bool) -> None:
        self._db, self._error, self._after = db, error, after
        self.fail_at = -1
        self.statements: list[str] = []

    def arm(self, fail_at: int) -> None:
        self.fail_at, self.statements = fail_at, []

    @property
    def in_transaction(self) -> bool:
        return self._db.in_transaction

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        return self._run(self._db.execute, sql, params)

    def executemany(self, sql: str, rows: Any) -> sqlite3.Cursor:
        return self._run(self._db.executemany, sql, rows)

    def close(self) -> None:
        self._db.close()

    def _run(self, method: Callable[[str, Any], sqlite3.Cursor], sql: str,
             params: Any) -> sqlite3.Cursor:
        number = len(self.statements)
        self.statements.append(" ".join(sql.split()))
        if number == self.fail_at and not self._after:
            raise self._error
        result = method(sql, params)
        if number == self.fail_at:
            raise self._error
        return result


def think(state: State, *calls: ToolCall, text: str = "") -> None:
    state._begin_think(len(state.messages), [call.name for call in calls])
    state._end_think(Reply(text, calls, usage=Usage(10, 2, 1)))


def run_record(steps: int, head: dict[str, Any]) -> dict[str, Any]:
    run = RunState(RUN_ID, "buy milk", steps=[
        Step(i, i, "tool", tool="add", arguments={"text": "milk"}, call_id=f"c{i}", result=i)
        for i in range(steps)], spent=Spent(steps=steps, tool_calls=steps), audit_head=head)
    run.check()
    return run.to_dict()


def one_step(state: State, held: int, audit: list[dict[str, Any]], step: int) -> StepRecord:
    """The record of step `step` of run RUN_ID on `state`: its new entries (after `held`), the
    run, two audit records and a new shared-state version."""
    call = ToolCall("add", {"text": f"item {step}"}, id=f"c{step}")
    think(state, call)
    state._add_tool_result(call, "ok", step, is_error=False)
    state._add_state_change(call.id, [{"op": "add", "path": "/todos/-", "value": step}], step + 1)
    for kind in ("tool_call", "tool_result"):
        head = {"seq": audit[-1]["seq"], "digest": audit[-1]["digest"]} if audit else None
        audit.append(audit_record(head, kind, {"step": step}))
    return StepRecord(
        thread_id=state.id, first_seq=held,
        entries=tuple(entry.to_json() for entry in state._entries_since(held)),
        parent_id=state.parent_id,
        run=run_record(step + 1, {"seq": audit[-1]["seq"], "digest": audit[-1]["digest"]}),
        audit=tuple(audit[-2:]), shared_state={"todos": list(range(step + 1))},
        shared_version=step + 1,
    )


def scenario() -> tuple[list[StepRecord], StepRecord]:
    """The records of the steps committed before, and the record of the step under test: a
    child thread's second step (its first created the thread, linked to its parent)."""
    state = State(id="sub-1", messages=[Message.user("buy milk")])
    state._start_run(parent_id="parent", parent_call_id="call_p", run_id=RUN_ID)
    audit: list[dict[str, Any]] = []
    first = one_step(state, 0, audit, 0)
    return [first], one_step(state, len(state.history), audit, 1)


def first_step_scenario() -> tuple[list[StepRecord], StepRecord]:
    """Nothing committed before; the step under test creates the thread."""
    state = State(id="sub-1", messages=[Message.user("buy milk")])
    state._start_run(parent_id="parent", parent_call_id="call_p", run_id=RUN_ID)
    return [], one_step(state, 0, [], 0)


SCENARIOS = {"a later step": scenario, "the first step": first_step_scenario}


def view(path: Path) -> tuple[Any, ...]:
    """All a new connection sees in the file: threads, entries, shared state, run and audit."""
    with SQLiteStore(path) as store:
        try:
            thread = store.load_thread("sub-1")
            held: Any = (thread.entries, thread.shared_state, thread.shared_version)
        except LookupError:
            held = None
        try:
            run: Any = store.load_run_record(RUN_ID)
        except LookupError:
            run = None
        return (store.list_threads(), store.entry_count("sub-1"), held, run,
                store.load_audit(RUN_ID))


def prepared(path: Path, before: list[StepRecord]) -> None:
    with SQLiteStore(path) as store:
        for record in before:
            store.write(record)


def expected_views(tmp_path: Path, make: Callable[[], tuple[list[StepRecord], StepRecord]]
                   ) -> tuple[tuple[Any, ...], tuple[Any, ...], list[StepRecord], StepRecord]:
    """The view of the file before the step and after it, written without failures."""
    before, step = make()
    reference = tmp_path / "reference.db"
    prepared(reference, before)
    view_before = view(reference)
    with SQLiteStore(reference) as store:
        store.write(step)
    view_after = view(reference)
    assert view_after != view_before
    assert view_after[1] == view_before[1] + len(step.entries)
    return view_before, view_after, before, step


def count_statements(path: Path, before: list[StepRecord], step: StepRecord) -> list[str]:
    prepared(path, before)
    with SQLiteStore(path) as store:
        spy = FailingConnection(store._db, Injected("unused"), after=False)
        store._db = spy  # type: ignore[assignment]
        spy.arm(-1)
        store.write(step)
        return spy.statements


def check_retry(store: SQLiteStore, path: Path, step: StepRecord, landed: bool,
                view_after: tuple[Any, ...]) -> None:
    """The store takes the next write: the step again if it did not land (else a conflict)."""
    if landed:
        with pytest.raises(StoreConflict):
            store.write(step)
    else:
        store.write(step)
    assert view(path) == view_after
    verify_audit(store, RUN_ID)


@pytest.mark.parametrize("make", SCENARIOS.values(), ids=SCENARIOS.keys())
@pytest.mark.parametrize("after", [False, True], ids=["before it runs", "after it ran"])
@pytest.mark.parametrize("error", [Injected("injected"), KeyboardInterrupt()],
                         ids=["an exception", "KeyboardInterrupt"])
def test_a_failing_statement_leaves_the_step_before_or_the_step_complete(
        tmp_path: Path, make: Callable[[], tuple[list[StepRecord], StepRecord]], after: bool,
        error: BaseException) -> None:
    view_before, view_after, before, step = expected_views(tmp_path, make)
    statements = count_statements(tmp_path / "count.db", before, step)
    assert statements[0].startswith("BEGIN") and statements[-1] == "COMMIT"
    for fail_at, statement in enumerate(statements):
        path = tmp_path / f"fail-{fail_at}.db"
        prepared(path, before)
        with SQLiteStore(path) as store:
            failing = FailingConnection(store._db, error, after=after)
            store._db = failing  # type: ignore[assignment]
            failing.arm(fail_at)
            with pytest.raises(type(error)):
                store.write(step)
            seen = view(path)
            landed = after and statement == "COMMIT"  # the commit ran; only the answer was lost
            assert seen == (view_after if landed else view_before), (
                f"after a failure at statement {fail_at} ({statement}) the file holds a mix")
            assert not failing.in_transaction
            failing.arm(-1)
            check_retry(store, path, step, landed, view_after)


TRIGGERS = {
    "the thread's row": ("INSERT", "threads", "1"),
    "the thread's update": ("UPDATE", "threads", "1"),
    "an entry with more after it": ("INSERT", "entries", "NEW.body LIKE '%model_request%'"),
    "the last entry": ("INSERT", "entries", "NEW.body LIKE '%state_change%'"),
    "the run's row": ("INSERT", "runs", "1"),
    "the run's update": ("UPDATE", "runs", "1"),
    "the second audit record": ("INSERT", "audit", "NEW.seq % 2 = 1"),
}


@pytest.mark.parametrize("make", SCENARIOS.values(), ids=SCENARIOS.keys())
@pytest.mark.parametrize("action", ["ABORT", "FAIL", "ROLLBACK"])
@pytest.mark.parametrize("trigger", TRIGGERS.values(), ids=TRIGGERS.keys())
def test_a_failing_row_leaves_the_step_before(
        tmp_path: Path, make: Callable[[], tuple[list[StepRecord], StepRecord]], action: str,
        trigger: tuple[str, str, str]) -> None:
    view_before, view_after, before, step = expected_views(tmp_path, make)
    path = tmp_path / "s.db"
    prepared(path, before)
    operation, table, when = trigger
    with SQLiteStore(path) as store:
        ddl = sqlite3.connect(path)
        try:
            ddl.execute(f"CREATE TRIGGER fail BEFORE {operation} ON {table} WHEN {when}"
                        f" BEGIN SELECT RAISE({action}, 'injected failure'); END")
            ddl.commit()
        finally:
            ddl.close()
        # A new thread's row is inserted only by its first step, a run's row updated by later ones.
        landed = (operation, table) == (("UPDATE", "runs") if not before else ("INSERT", "threads"))
        if landed:
            store.write(step)
        else:  # SQLite's own error, not one from a ROLLBACK of a transaction it already ended
            with pytest.raises(sqlite3.IntegrityError, match=r"^injected failure$"):
                store.write(step)
        assert view(path) == (view_after if landed else view_before)
        ddl = sqlite3.connect(path)
        try:
            ddl.execute("DROP TRIGGER fail")
            ddl.commit()
        finally:
            ddl.close()
        check_retry(store, path, step, landed, view_after)


def test_every_row_a_write_changes_is_covered_by_a_trigger(tmp_path: Path) -> None:
    for make in SCENARIOS.values():
        before, step = make()
        statements = count_statements(tmp_path / f"{make.__name__}.db", before, step)
        written = {(sql.split()[0], sql.split()[2] if sql.startswith("INSERT") else sql.split()[1])
                   for sql in statements if sql.startswith(("INSERT", "UPDATE", "DELETE"))}
        covered = {(operation, table) for operation, table, _ in TRIGGERS.values()}
        assert written and written <= covered
