"""A thread whose run was killed during a tool call is continued the ordinary way: next message.

What a frontend does after a crash is not `agent.resume(run_id)`: it loads the thread and sends
the next user message. Each test kills `crash_child.py` (a real process, SIGKILL) during its
`charge` call, on a SQLite file or a real Redis, then continues the thread from new processes
with `add_message` and `agent.stream(thread)` (or `agent.arun(thread)`). The rule of durable runs
holds on that path too: the cut run goes on (the same run id), an idempotent call runs again with
the same idempotency key, any other call is put to a person, and the new message waits for the
calls' results (seed 000: "While tool calls are pending ... add_message waits (the message goes
into messages right after the results)").
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from pyox_agents import (
    Agent,
    Message,
    RunContext,
    RunState,
    RunStatus,
    State,
    ToolCall,
    tool,
    verify_audit,
)
from pyox_agents.models import ScriptedModel
from pyox_agents.stores import MemoryStore, SQLiteStore
from pyox_agents.stores.redis import RedisStore
from tests.durable.crash_child import NEXT_TEXT, make_charge
from tests.durable.test_crash_recovery import CRASH_PROMPT, FINAL_TEXT, Child
from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name


@pytest.fixture(params=["sqlite", "redis"])
def child(request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[Child]:
    """A `Child` on SQLite or on Redis; its `mode` is set by the test."""
    markers = tmp_path / "markers"
    markers.mkdir()
    if request.param == "redis":
        url = request.getfixturevalue("redis_server")
        monkeypatch.setenv("PYOX_TEST_PREFIX", f"crash-{uuid.uuid4().hex[:12]}:")
        made = Child(Path(url), markers, "")
        made.db = url  # type: ignore[assignment]  # crash_child takes a URL in place of a file
    else:
        made = Child(tmp_path / "runs.sqlite", markers, "")
    yield made
    for process in made.started:
        if process.poll() is None:
            process.kill()
            process.communicate()


def store_of(child: Child) -> Any:
    db = str(child.db)
    if db.startswith("redis://"):
        return RedisStore(db, prefix=os.environ["PYOX_TEST_PREFIX"])
    return SQLiteStore(db)


def saved(child: Child, run_id: str) -> RunState:
    """The run as a fresh store sees it, after checking it and its audit chain."""
    store = store_of(child)
    try:
        run = store.load_run(run_id)
        run.check()
        verify_audit(store, run_id)
        return run
    finally:
        store.close()


def runs_of_thread(child: Child, run_id: str) -> list[str]:
    """The run ids the thread of `run_id` records (its run_start entries, in order)."""
    store = store_of(child)
    try:
        entries = store.load_thread(store.run_thread(run_id)).entries
        return [str(e["content"]) for e in entries if e.get("kind") == "run_start"]
    finally:
        store.close()


def crashed(child: Child, mode: str) -> tuple[str, str]:
    """Kill a new run during its `charge` call; its run id and the call's idempotency key."""
    child.mode = mode
    run_id = child.kill_during_call("start")
    run = saved(child, run_id)
    assert run.status is RunStatus.RUNNING and run.in_flight is not None
    (call,) = run.in_flight["decision"]["calls"]
    return run_id, str(call["key"])


def answered_after_result(said: dict[str, Any]) -> None:
    """The model's last request had the call's result, then the new message."""
    roles = [role for role, _ in said["last_request"]]
    tool_at = roles.index("tool")
    assert said["last_request"][tool_at + 1:] == [["user", NEXT_TEXT]]


@pytest.mark.parametrize("action", ["message", "message-arun"])
def test_the_next_message_reruns_a_cut_idempotent_call_with_its_key_then_is_answered(
        child: Child, action: str) -> None:
    """An idempotent call cut by a crash "re-runs with the same idempotency key" when the
    thread is continued with a new message, which is answered after the call's result."""
    run_id, key = crashed(child, "idempotent")
    said = child.finish(action, run_id)  # the cut run goes on: its run id comes first
    assert said["status"] == "completed" and said["answer"] == FINAL_TEXT
    first, second = child.bodies()
    assert first["key"] == second["key"] == key and first["pid"] != second["pid"]
    assert said["tool_messages"] == ["charged 5"]
    answered_after_result(said)
    assert set(runs_of_thread(child, run_id)) == {run_id}  # no second run ran the call anew
    run = saved(child, run_id)
    assert [(s.kind, s.outcome) for s in run.steps] == [("tool", "ok"), ("answer", "answer")]


def question_after_crash(child: Child) -> str:
    """Crash a plain call, send the next message: the run asks the person, runs nothing, and the
    model is not asked anything while the message waits."""
    run_id, key = crashed(child, "plain")
    said = child.finish("message", run_id)
    assert said["status"] == "paused" and said["outcome"] == "interrupt"
    assert said["last_request"] == [], "the model was asked before the question was settled"
    assert len(child.bodies()) == 1, "a plain call ran again after a crash without a person"
    run = saved(child, run_id)
    assert run.pending is not None and run.pending.prompt == CRASH_PROMPT
    assert run.in_flight is not None and run.in_flight["decision"]["calls"][0]["key"] == key
    return run_id


def test_the_next_message_puts_a_cut_plain_call_to_a_person_who_approves(child: Child) -> None:
    """"a non-idempotent call is put to a person ("outcome unknown after a crash: run
    again?") and runs only if approved; the new user message waits"."""
    run_id = question_after_crash(child)
    said = child.finish("approve", run_id)
    assert said["status"] == "completed" and said["answer"] == FINAL_TEXT
    first, second = child.bodies()
    assert first["key"] == second["key"]
    answered_after_result(said)


def test_the_next_message_puts_a_cut_plain_call_to_a_person_who_denies(child: Child) -> None:
    """Denied, the call does not run again, and the message is answered after the denial."""
    run_id = question_after_crash(child)
    said = child.finish("deny", run_id)
    assert said["status"] == "completed"
    assert said["tool_messages"] == ["denied by a person"]
    assert len(child.bodies()) == 1
    answered_after_result(said)


def test_another_message_instead_of_an_answer_asks_the_question_again(child: Child) -> None:
    """A message sent while the question is open does not run the call: it is asked again."""
    run_id = question_after_crash(child)
    first_request = saved(child, run_id).pending
    said = child.finish("message", run_id)
    assert said["status"] == "paused" and said["last_request"] == []
    assert len(child.bodies()) == 1
    again = saved(child, run_id).pending
    assert again is not None and first_request is not None
    assert again.prompt == CRASH_PROMPT and again.id != first_request.id
    said = child.finish("approve", run_id)
    assert said["status"] == "completed" and len(child.bodies()) == 2
    roles = [role for role, _ in said["last_request"]]
    assert said["last_request"][roles.index("tool") + 1:] == [["user", NEXT_TEXT]] * 2


@pytest.mark.anyio
async def test_the_next_message_on_a_thread_whose_run_runs_in_this_process_is_refused() -> None:
    """A run saved with a call in flight that is still running here was not cut by a crash:
    another State of its thread may not take it over, and nothing runs twice."""
    store = MemoryStore()
    entered, release = anyio.Event(), anyio.Event()
    bodies: list[str | None] = []

    @tool
    async def slow(ctx: RunContext) -> str:
        """Wait until the test lets it end."""
        bodies.append(ctx.idempotency_key)
        entered.set()
        await release.wait()
        return "slow done"

    agent = Agent(ScriptedModel([ToolCall("slow", {}), "first done"]), tools=[slow],
                  store=store)
    thread = State(messages=[Message.user("go")])
    async with anyio.create_task_group() as group:
        group.start_soon(agent.arun, thread)
        await entered.wait()
        other = store.load(thread.id)
        other.add_message(Message.user("and more"))
        with pytest.raises(ValueError, match="is still running in this process"):
            async for _ in agent.stream(other):
                pass
        release.set()
    assert len(bodies) == 1


@pytest.mark.parametrize("child", ["redis"], indirect=True)
def test_the_next_message_on_a_thread_leased_by_another_process_is_refused(
        child: Child) -> None:
    """With Redis, a run whose thread's lease is held runs in another process: the next
    message is refused with who holds it, and the cut call does not run."""
    run_id, _ = crashed(child, "plain")
    store = store_of(child)
    try:
        thread_id = store.run_thread(run_id)
        # (this test stays sync, no event loop running: `agent.run` below runs its own)
        assert anyio.run(store.aacquire_lease, thread_id, "server-b:42", 30.0) is not None
        thread = store.load(thread_id)
        thread.add_message(Message.user(NEXT_TEXT))
        agent = Agent(ScriptedModel(["unused"]), tools=[make_charge(child.markers, False)],
                      store=store)
        with pytest.raises(ValueError, match="server-b:42 holds the thread's lease"):
            agent.run(thread)
        assert len(child.bodies()) == 1
        assert saved(child, run_id).status is RunStatus.RUNNING
    finally:
        store.close()


@pytest.mark.parametrize("child", ["sqlite"], indirect=True)
def test_a_thread_whose_cut_calls_were_closed_by_hand_starts_a_new_run(child: Child) -> None:
    """Calls a custom loop closed itself (`agent.use_tools`) have nothing left to recover: the
    next run is a new one, and it asks nobody about calls of its own."""
    run_id, _ = crashed(child, "plain")
    store = store_of(child)
    try:
        thread = store.load(store.run_thread(run_id))
        charge = make_charge(child.markers, False)
        Agent(ScriptedModel([]), tools=[charge], store=store).use_tools(thread)
        assert len(child.bodies()) == 2 and not thread.pending_calls
        thread.add_message(Message.user(NEXT_TEXT))
        agent = Agent(ScriptedModel([ToolCall("charge", {"amount": 1}), FINAL_TEXT]),
                      tools=[charge], store=store)
        result = agent.run(thread)
        assert result.run_id != run_id and result.answer == FINAL_TEXT
        assert len(child.bodies()) == 3  # its own plain call ran, unasked, as any new call
    finally:
        store.close()
