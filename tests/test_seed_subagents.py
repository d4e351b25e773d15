"""Subagents as seeds 000 and 004 word them: a subagent's State runs again from any entry point
and keeps its parent link; a subagent that waits for a person pauses its parent's run."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from pyox_agents import (
    Agent,
    ApprovalRequested,
    Message,
    RunContext,
    RunFinished,
    State,
    StateChanged,
    SubagentStarted,
    tool,
)
from pyox_agents.events import ToolCallStarted, ToolResult
from pyox_agents.models import FunctionModel, ScriptedModel, ToolCall
from pyox_agents.state.run import RunState, RunStatus
from pyox_agents.stores import MemoryStore, SQLiteStore


def _child_of(parent: State) -> str:
    (entry,) = [e for e in parent.history if e.kind == "tool_result"]
    (child_id,) = entry.child_ids
    return child_id


def _ran_subagent(store: Any = None) -> tuple[State, str]:
    """A parent conversation whose one tool call ran the `researcher` subagent."""
    sub = Agent(ScriptedModel(["found it in b.py"]), name="researcher").as_tool()
    model = ScriptedModel([ToolCall("researcher", {"task": "find the bug"}, id="c1"), "done"])
    parent = Agent(model, tools=[sub], store=store).run("go").conversation
    return parent, _child_of(parent)


def _continue(child: State) -> str:
    child.add_message(Message.user("and the fix?"))
    answer = Agent(ScriptedModel(["change line 3"])).run(child).answer
    assert isinstance(answer, str)
    return answer


def test_a_subagents_state_continues_with_agent_run() -> None:
    """Seed 000: a State is what you "pass to agent.run ... to continue it"; a subagent's State
    (state.child(id)) is one, and keeps its parent link."""
    parent, child_id = _ran_subagent()
    child = parent.child(child_id)
    assert _continue(child) == "change line 3"
    assert (child.parent_id, child.parent_call_id) == (parent.id, "c1")
    assert [e.parent_id for e in child.history if e.kind == "run_start"] == [parent.id] * 2


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_loaded_subagent_state_continues_with_agent_run(kind: str, tmp_path: Any) -> None:
    """Seed 000: "Continue a saved State with store.load(id)"; a subagent's is no exception."""
    store = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "s.db")
    parent, child_id = _ran_subagent(store)
    loaded = store.load(child_id)
    child = Agent(ScriptedModel(["change line 3"]), store=store)
    loaded.add_message(Message.user("and the fix?"))
    assert child.run(loaded).answer == "change line 3"
    again = store.load(child_id)
    assert (again.parent_id, again.parent_call_id) == (parent.id, "c1")
    assert again.answer == "change line 3"


def test_a_fork_of_a_subagents_state_runs() -> None:
    """Seed 000 l.282-290: `attempt = state.fork(); agent.run(attempt)`, here for a subagent's
    State: the fork runs, and the State it was taken from is untouched."""
    parent, child_id = _ran_subagent()
    child = parent.child(child_id)
    before = child.snapshot()
    attempt = child.fork()
    assert _continue(attempt) == "change line 3"
    assert child.snapshot() == before
    assert attempt.parent_id == parent.id


def test_a_subagents_state_retries_after_a_failed_run() -> None:
    """Seed 000 l.13: a State is passed to agent.run "to continue it after Ctrl+C", or after a
    failure: the retry of a subagent's State runs."""
    parent, child_id = _ran_subagent()
    child = parent.child(child_id)
    child.add_message(Message.user("and the fix?"))
    failing = Agent(ScriptedModel([]))
    with pytest.raises(Exception, match="ran out of replies"):
        failing.run(child)
    assert Agent(ScriptedModel(["retried"])).run(child).answer == "retried"


# -- a subagent that waits for a person pauses its parent --------------------------------------


def _paying_agents(store: Any, paid: list[int]) -> tuple[Agent, Any]:
    """A parent whose `buyer` subagent (state="write") calls `pay`, which needs approval; and
    the parent's model, which reads the buyer's result."""

    @tool(approval=True)
    def pay(ctx: RunContext, amount: int) -> str:
        """Pay `amount`."""
        paid.append(amount)
        ctx.state["paid"] += amount
        return f"paid {amount}"

    def buyer_model(messages: list[Message], tools: list[Any]) -> Any:
        results = [m for m in messages if m.role == "tool"]
        if not results:
            return ToolCall("pay", {"amount": 3}, id="pay1")
        return f"buyer saw: {results[-1].content}"

    buyer = Agent(FunctionModel(buyer_model), tools=[pay], name="buyer")

    def parent_model(messages: list[Message], tools: list[Any]) -> Any:
        results = [m for m in messages if m.role == "tool"]
        if not results:
            return ToolCall("buyer", {"task": "buy it"}, id="b1")
        return f"parent saw: {results[-1].content}"

    parent = Agent(FunctionModel(parent_model), tools=[buyer.as_tool(state="write")],
                   store=store)
    return parent, pay


def _store(kind: str, tmp_path: Any) -> Any:
    return {"none": lambda: None, "memory": MemoryStore,
            "sqlite": lambda: SQLiteStore(tmp_path / "s.db")}[kind]()


STORES = ["none", "memory", "sqlite"]


@pytest.mark.parametrize("kind", STORES)
def test_a_subagents_approval_pauses_its_parent(kind: str, tmp_path: Any) -> None:
    """Seed 004: "A tool that fails, or stops to wait for a person, changes nothing: it runs
    again from its start once answered." A subagent's tool that waits for a person pauses the
    parent run, whose pending request is the subagent's; answering it runs the tool once, its
    write lands in the parent's state, and the parent goes on with the subagent's answer."""
    store = _store(kind, tmp_path)
    paid: list[int] = []
    parent, _ = _paying_agents(store, paid)
    paused = parent.run("go", state={"paid": 0})
    assert isinstance(paused.events[-1], RunFinished)
    assert paused.events[-1].outcome == "interrupt"
    assert paid == [] and paused.state == {"paid": 0}
    run = anyio.run(parent.load_run, paused.run_id)
    assert run.status is RunStatus.PAUSED
    assert run.pending is not None
    assert (run.pending.tool, dict(run.pending.arguments)) == ("pay", {"amount": 3})
    run.check()
    requested = [e for e in paused.events if isinstance(e, ApprovalRequested)]
    assert [(e.request.id, e.run_id) for e in requested] == [(run.pending.id, None)]

    if store is not None:  # another process: new agents on the same store
        parent, _ = _paying_agents(store, paid)
    done = parent.resume(paused.run_id, approve=True, request_id=run.pending.id)
    assert paid == [3]  # ran once, from its start
    assert done.state == {"paid": 3}
    assert done.answer == "parent saw: buyer saw: paid 3"
    assert isinstance(done.events[-1], RunFinished) and done.events[-1].outcome == "success"
    changed = [e for e in done.events if isinstance(e, StateChanged)]
    assert [list(e.delta) for e in changed] == [[{"op": "replace", "path": "/paid", "value": 3}]]
    if store is not None:  # a store-less agent keeps only its paused runs
        final = anyio.run(parent.load_run, paused.run_id)
        final.check()
        assert final.status is RunStatus.COMPLETED
    conversation = done.conversation
    (entry,) = [e for e in conversation.history if e.kind == "tool_result"]
    (child_id,) = entry.child_ids
    child = conversation.child(child_id)
    assert (child.parent_id, child.parent_call_id) == (conversation.id, "b1")
    assert child.answer == "buyer saw: paid 3"
    assert [e.content for e in child.history if e.kind == "tool_result"] == ["paid 3"]
    if store is not None:
        saved = store.load(child_id)
        assert saved.answer == "buyer saw: paid 3"
        (sub_run_id,) = {e.run_id for e in done.events if isinstance(e, SubagentStarted)}
        saved_run = store.load_run(sub_run_id)
        sub_run = saved_run if isinstance(saved_run, RunState) else RunState.from_dict(saved_run)
        sub_run.check()
        assert sub_run.status is RunStatus.COMPLETED
        assert [s.outcome for s in sub_run.steps] == ["ok", "answer"]


@pytest.mark.parametrize("kind", STORES)
def test_a_subagents_denied_approval_reaches_its_model(kind: str, tmp_path: Any) -> None:
    """Seed 004: a tool that waits for a person "changes nothing"; denied, the subagent's model
    reads "denied by a person" and the parent goes on with the subagent's answer."""
    store = _store(kind, tmp_path)
    paid: list[int] = []
    parent, _ = _paying_agents(store, paid)
    paused = parent.run("go", state={"paid": 0})
    done = parent.resume(paused.run_id, approve=False)
    assert paid == [] and done.state == {"paid": 0}
    assert done.answer == "parent saw: buyer saw: denied by a person"
    if store is not None:
        anyio.run(parent.load_run, paused.run_id).check()


@pytest.mark.parametrize("kind", ["none", "memory"])
def test_a_grandchilds_approval_pauses_the_top_run(kind: str, tmp_path: Any) -> None:
    """Seed 004, through two levels: the top run pauses with the grandchild's request, and the
    answer resumes the grandchild inside its parent inside the top run."""
    store = _store(kind, tmp_path)
    paid: list[int] = []
    inner, _ = _paying_agents(None, paid)  # its tool `buyer` is a subagent that pays

    def middle_model(messages: list[Message], tools: list[Any]) -> Any:
        results = [m for m in messages if m.role == "tool"]
        if not results:
            return ToolCall("buyer", {"task": "buy it"}, id="m1")
        return f"middle saw: {results[-1].content}"

    middle = Agent(FunctionModel(middle_model), tools=list(inner.tools.values()), name="middle")

    def top_model(messages: list[Message], tools: list[Any]) -> Any:
        results = [m for m in messages if m.role == "tool"]
        if not results:
            return ToolCall("middle", {"task": "get it bought"}, id="t1")
        return f"top saw: {results[-1].content}"

    top = Agent(FunctionModel(top_model), tools=[middle.as_tool(state="write")], store=store)
    paused = top.run("go", state={"paid": 0})
    run = anyio.run(top.load_run, paused.run_id)
    assert run.pending is not None and run.pending.tool == "pay"
    done = top.resume(paused.run_id, approve=True)
    assert paid == [3] and done.state == {"paid": 3}
    assert done.answer == "top saw: middle saw: buyer saw: paid 3"


@pytest.mark.anyio
async def test_a_subagents_calls_have_ids_apart_from_its_parents_in_one_stream() -> None:
    """Rule: one stream says each call once under its id: a subagent's model that names its call
    `call_0`, as the parent's did for the call that runs the subagent, gets an id of its own
    (else a client would take the subagent's result for the parent's call)."""

    @tool
    def note(ctx: RunContext, text: str) -> str:
        """Write a note."""
        return "noted"

    helper = Agent(ScriptedModel([ToolCall("note", {"text": "c"}, id="call_0"), "helped"]),
                   tools=[note], name="helper").as_tool()
    parent = Agent(ScriptedModel([ToolCall("helper", {"task": "x"}, id="call_0"), "done"]),
                   tools=[helper])
    started: list[str] = []
    results: list[tuple[str, Any]] = []
    async for event in parent.stream("go"):
        if isinstance(event, ToolCallStarted):
            started.append(event.call_id)
        elif isinstance(event, ToolResult):
            results.append((event.call_id, event.result))
    assert started[0] == "call_0" and len(started) == 2 and started[1] != "call_0"
    assert dict(results) == {started[1]: "noted", "call_0": "helped"}
