"""A step is committed whole or not at all, whichever store write of a run fails.

A run of parallel tool calls that change the shared state makes WRITES store writes. For every k
the k-th write fails: once (`OSError`, then the disk has room again), or from then on (`OSError`
every time, or a trigger that makes SQLite abort inside the transaction). Afterwards a fresh
`SQLiteStore` on the file must show a consistent picture: the thread loads, the run record checks,
its audit chain verifies, its steps and `spent.steps` agree with the history, and the saved shared
state is the one the history rebuilds. When nothing could be written after the failure, the file
holds exactly what it held after write k - 1 of a run without failures: never half of a step.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from pyox_agents import (
    Agent,
    RunContext,
    RunFailed,
    RunFailedError,
    RunFinished,
    RunState,
    RuntimeEvent,
    ToolCall,
    tool,
    verify_audit,
)
from pyox_agents.models import ScriptedModel
from pyox_agents.state.conversation import State
from pyox_agents.stores import SQLiteStore, StepRecord

pytestmark = pytest.mark.anyio

WRITES = 10
"""Writes of a run of SCRIPT: its start, then per decision with calls one when it is made (the
calls in flight), one as each of its calls, which all change the shared state, closes (before
its change is shown) and one at the step's end, and the last decision with the answer."""

START = {"todos": [], "title": ""}
FINAL = {"todos": ["milk", "eggs"], "title": "Groceries"}


@tool(idempotent=True)
async def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo.

    Args:
        text: what to do.
    """
    ctx.state["todos"].append(text)
    return f"added {text}"


@tool
async def set_title(ctx: RunContext, title: str) -> str:
    """Name the list.

    Args:
        title: the list's name.
    """
    await anyio.sleep(0.05)  # closes after add_todo's save: the writes come in one order
    ctx.state["title"] = title
    return f"the title is {title}"


def script() -> ScriptedModel:
    """Two decisions of two parallel calls each, then the answer."""
    return ScriptedModel([
        [ToolCall("add_todo", {"text": "milk"}), ToolCall("set_title", {"title": "Shopping"})],
        [ToolCall("add_todo", {"text": "eggs"}), ToolCall("set_title", {"title": "Groceries"})],
        "Done.",
    ])


def picture(path: Path) -> dict[str, Any] | None:
    """What a fresh store sees of the one run in `path` (None if nothing was saved)."""
    with SQLiteStore(path) as store:
        threads = store.list_threads()
        if not threads:
            return None
        (info,) = threads
        thread = store.load(info.id)
        run_id = next(e.content for e in thread.history if e.kind == "run_start")
        assert isinstance(run_id, str)
        run = store.load_run(run_id)
        return {
            "history": [entry.kind for entry in thread.history],
            "shared": store.load_thread(info.id).shared_state,
            "status": run.status.value,
            "steps": [(s.index, s.decision, s.kind, s.tool, s.outcome, s.result)
                      for s in run.steps],
            "spent": (run.spent.steps, run.spent.tool_calls),
            "in_flight": None if run.in_flight is None else run.in_flight["decision"]["index"],
            "audit": [record["kind"] for record in store.load_audit(run_id)],
        }


class RecordingStore(SQLiteStore):
    """A SQLiteStore that keeps each write's audit kinds and the file's picture after it."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.file = path
        self.audits: list[list[str]] = []
        self.pictures: list[dict[str, Any] | None] = [None]

    def write(self, record: StepRecord) -> None:
        super().write(record)
        self.audits.append([str(item["kind"]) for item in record.audit])
        self.pictures.append(picture(self.file))


class FailingStore(SQLiteStore):
    """A SQLiteStore whose write number `fail_at` fails (and every later one, unless `how` is
    "once"); with `how` a table name, a trigger makes SQLite abort inside the transaction."""

    def __init__(self, path: Path, fail_at: int, how: str) -> None:
        super().__init__(path)
        self.file, self.fail_at, self.how = path, fail_at, how
        self.writes = 0

    def write(self, record: StepRecord) -> None:
        self.writes += 1
        if self.writes == self.fail_at and self.how in TABLES:
            install_failing_trigger(self.file, self.how)
        failing = self.writes == self.fail_at or (self.how != "once" and self.writes > self.fail_at)
        if failing and self.how in ("once", "from then on"):
            raise OSError(28, "disk full")
        super().write(record)


TABLES = ("entries", "runs", "audit")
WAYS = ("once", "from then on", *TABLES)
"""How the k-th write fails: an OSError once, an OSError from then on, or, from then on, SQLite
aborting the transaction when it inserts into (or, for runs, updates) that table."""


def install_failing_trigger(path: Path, table: str) -> None:
    ddl = sqlite3.connect(path)
    try:
        for operation in ("INSERT", "UPDATE") if table == "runs" else ("INSERT",):
            ddl.execute(f"CREATE TRIGGER fail_{operation.lower()} BEFORE {operation} ON {table}"
                        " BEGIN SELECT RAISE(ABORT, 'injected failure: disk full'); END")
        ddl.commit()
    finally:
        ddl.close()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> RecordingStore:
    """A run of SCRIPT without failures, with the file's picture after each of its writes."""
    path = tmp_path_factory.mktemp("reference") / "runs.sqlite"
    store = RecordingStore(path)
    result = Agent(script(), tools=[add_todo, set_title], store=store).run("shop", state=START)
    assert result.answer == "Done." and result.state == FINAL
    store.close()
    return store


def test_a_run_writes_at_its_start_per_decision_per_call_that_changed_the_state_and_step_end(
        reference: RecordingStore) -> None:
    assert reference.audits == [
        ["run_started"],
        ["decision"],
        ["tool_result"],
        ["tool_result"],
        [],
        ["decision"],
        ["tool_result"],
        ["tool_result"],
        [],
        ["decision", "run_end"],
    ]
    assert len(reference.audits) == WRITES
    assert_consistent(reference.file)


async def run_failing(path: Path, fail_at: int, how: str
                      ) -> tuple[list[RuntimeEvent], BaseException | None]:
    """Stream a run on a FailingStore: its events, and the error the stream raised, if any."""
    agent = Agent(script(), tools=[add_todo, set_title], store=FailingStore(path, fail_at, how))
    events: list[RuntimeEvent] = []
    try:
        async for event in agent.stream("shop", state=START):
            events.append(event)
    except (OSError, sqlite3.Error) as exc:
        return events, exc
    return events, None


def every_failure() -> pytest.MarkDecorator:
    return pytest.mark.parametrize(
        ("how", "fail_at"), [(how, k) for how in WAYS for k in range(1, WRITES + 1)],
        ids=[f"{how}-write{k}" for how in WAYS for k in range(1, WRITES + 1)])


@every_failure()
async def test_a_failed_write_leaves_a_consistent_run_on_disk(
        tmp_path: Path, reference: RecordingStore, how: str, fail_at: int) -> None:
    path = tmp_path / "runs.sqlite"
    await run_failing(path, fail_at, how)
    assert_consistent(path)
    if how != "once":  # nothing was written after the failure: the step before, whole
        assert picture(path) == reference.pictures[fail_at - 1]


@every_failure()
async def test_a_failed_write_ends_the_run_with_run_failed_or_raises(
        tmp_path: Path, how: str, fail_at: int) -> None:
    events, error = await run_failing(tmp_path / "runs.sqlite", fail_at, how)
    ends = [event for event in events if isinstance(event, RunFinished | RunFailed)]
    if error is None:
        assert len(ends) == 1 and events[-1] is ends[0] and isinstance(ends[0], RunFailed)
        assert "disk full" in ends[0].error.message
    else:
        assert not ends and "disk full" in str(error)


@pytest.mark.parametrize("fail_at", range(1, WRITES + 1))
def test_run_raises_run_failed_error_or_the_store_error_when_a_write_fails(
        tmp_path: Path, fail_at: int) -> None:
    store = FailingStore(tmp_path / "runs.sqlite", fail_at, "once")
    agent = Agent(script(), tools=[add_todo, set_title], store=store)
    with pytest.raises((RunFailedError, OSError), match="disk full"):
        agent.run("shop", state=START)


class BrokenReporter:
    """A reporter with a bug: it raises when a tool starts, in the middle of a step."""

    def on_tool_start(self, ctx: RunContext, call: ToolCall) -> None:
        raise RuntimeError("the reporter broke")


def test_a_run_that_fails_inside_a_step_saves_that_step_whole(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    agent = Agent(script(), tools=[add_todo, set_title], store=SQLiteStore(path),
                  reporters=[BrokenReporter()])
    with pytest.raises(RunFailedError, match="internal_error"):
        agent.run("shop", state=START)
    saved = picture(path)
    assert saved is not None and saved["status"] == "failed"
    assert_consistent(path)


# -- what a consistent file is ----------------------------------------------------------------


def assert_consistent(path: Path) -> None:
    """Everything a fresh store sees of the one run in `path` fits together."""
    with SQLiteStore(path) as store:
        threads = store.list_threads()
        if not threads:  # the first write failed: nothing at all, not a thread without its run
            return
        (info,) = threads
        thread = store.load(info.id)
        run_ids = [e.content for e in thread.history if e.kind == "run_start"]
        assert len(run_ids) == 1 and isinstance(run_ids[0], str)
        run = store.load_run(run_ids[0])
        run.check()
        verify_audit(store, run.run_id)
        assert_steps_match_history(run, thread)
        kept = store.load_thread(info.id).shared_state
        assert kept == (None if run.done else state_after(run))  # kept only to resume


def state_after(run: RunState) -> dict[str, Any]:
    """The shared state SCRIPT's tools make from START with the steps `run` has saved."""
    state: dict[str, Any] = {"todos": [], "title": ""}
    for step in run.steps:
        if step.kind == "tool" and step.outcome == "ok" and step.arguments is not None:
            if step.tool == "add_todo":
                state["todos"].append(step.arguments["text"])
            else:
                state["title"] = step.arguments["title"]
    return state


def assert_steps_match_history(run: RunState, thread: State) -> None:
    """Each decision counted has its model reply, each tool Step its tool_result, and back."""
    history = thread.history
    replies = [e for e in history if e.kind == "model_reply" and e.purpose == "think"]
    assert len(replies) == run.spent.steps, "decisions counted and model replies saved differ"
    calls = {call.id: (index, call) for index, reply in enumerate(replies)
             for call in reply.content.tool_calls}
    results = {e.call.id: e for e in history if e.kind == "tool_result"}
    tool_steps = [step for step in run.steps if step.kind == "tool"]
    assert {step.call_id for step in tool_steps} == set(results), (
        "a tool_result entry without its Step, or a Step without its tool_result entry")
    for step in tool_steps:
        assert step.call_id is not None
        decision, call = calls[step.call_id]
        result = results[step.call_id]
        assert (step.decision, step.tool, dict(step.arguments or {})) == (
            decision, call.name, dict(call.arguments))
        assert step.outcome == result.outcome
    assert not [e for e in history if e.kind == "state_change"], "the shared state is the app's"
    if run.in_flight is not None:  # a decision whose calls have not all closed
        assert run.in_flight["decision"]["index"] == len(replies) - 1
        decided = [item["call_id"] for item in run.in_flight["decision"]["calls"]]
        assert decided == [call.id for call in replies[-1].content.tool_calls]
        assert set(decided) - set(results), "in flight, yet every call of it has its result"
    answers = [step for step in run.steps if step.kind == "answer"]
    if answers:
        assert [step.decision for step in answers] == [len(replies) - 1]
        assert not replies[-1].content.tool_calls

