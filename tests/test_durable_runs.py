"""Durable runs (seed 003): the record of every run, approvals, resume, budgets, planners."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from pyox_agents import (
    Agent,
    ApprovalRequested,
    Ask,
    RunContext,
    RunFinished,
    RunState,
    RunStatus,
    StateChanged,
    StoppedByLimit,
    StopReason,
    ToolResult,
    tool,
    verify_audit,
)
from pyox_agents.models import FunctionModel, ScriptedModel, ToolCall
from pyox_agents.runtime._limits import Limits
from pyox_agents.runtime._planning import Answer, CallTool
from pyox_agents.state.messages import Message
from pyox_agents.stores import MemoryStore, SQLiteStore

pytestmark = pytest.mark.anyio

bodies: list[str] = []


@tool(approval=True)
def pay(ctx: RunContext, amount: int) -> str:
    """Pay an amount."""
    bodies.append(f"pay {amount}")
    ctx.state["paid"] += amount
    return f"paid {amount}"


@tool
def note(ctx: RunContext, text: str) -> str:
    """Write a note."""
    ctx.state["notes"].append(text)
    return "noted"


@pytest.fixture(autouse=True)
def _clear_bodies() -> None:
    bodies.clear()


def paying_agent(store: Any = None, script: Any = None) -> Agent:
    script = script or [ToolCall("pay", {"amount": 5}, id="p1"), "Paid."]
    return Agent(ScriptedModel(script), tools=[pay, note], store=store)


async def test_every_run_has_a_saved_run_state_that_checks() -> None:
    store = MemoryStore()
    agent = Agent(
        ScriptedModel([[ToolCall("note", {"text": "a"}), ToolCall("note", {"text": "b"})], "done"]),
        tools=[note],
        store=store,
    )
    result = await agent.arun("go", state={"notes": []})
    run = store.load_run(result.run_id)
    run.check()
    assert run.status is RunStatus.COMPLETED and run.stop_reason is StopReason.ANSWERED
    assert [s.tool for s in run.steps] == ["note", "note", None]
    assert run.steps[-1].kind == "answer" and run.answer == "done"
    assert run.spent.steps == 2 and run.spent.tool_calls == 2
    assert run.goal == "go" and run.in_flight is None
    verify_audit(store, result.run_id)
    assert store.run_thread(result.run_id) == result.conversation.id


async def test_an_approval_tool_pauses_the_run_and_changes_nothing() -> None:
    store = MemoryStore()
    events = [e async for e in paying_agent(store).stream("buy", state={"paid": 0, "notes": []})]
    assert isinstance(events[-2], ApprovalRequested) and isinstance(events[-1], RunFinished)
    assert events[-1].outcome == "interrupt" and events[-1].state == {"paid": 0, "notes": []}
    request = events[-2].request
    assert (request.tool, request.call_id, dict(request.arguments)) == ("pay", "p1", {"amount": 5})
    assert bodies == [] and not any(isinstance(e, ToolResult | StateChanged) for e in events)
    run_id = events[0].run_id  # type: ignore[attr-defined]
    run = store.load_run(run_id)
    run.check()
    assert run.status is RunStatus.PAUSED and run.stop_reason is StopReason.APPROVAL
    assert run.pending is not None and run.pending.id == request.id


async def test_an_approved_call_runs_from_its_start_and_the_run_goes_on() -> None:
    store = MemoryStore()
    agent = paying_agent(store)
    paused = await agent.arun("buy", state={"paid": 0, "notes": []})
    assert paused.events[-1].outcome == "interrupt"  # type: ignore[union-attr]
    request = next(e for e in paused.events if isinstance(e, ApprovalRequested)).request
    done = await agent.aresume(
        paused.run_id, approve=True, request_id=request.id, arguments_hash=request.arguments_hash
    )
    assert bodies == ["pay 5"] and done.answer == "Paid." and done.state["paid"] == 5
    run = store.load_run(paused.run_id)
    run.check()
    assert run.status is RunStatus.COMPLETED and run.steps[0].outcome == "ok"
    kinds = [record["kind"] for record in store.load_audit(paused.run_id)]
    assert "approval_requested" in kinds and "approval_answered" in kinds
    verify_audit(store, paused.run_id)


async def test_a_denied_call_gives_the_model_a_denied_by_a_person_result() -> None:
    model = ScriptedModel([ToolCall("pay", {"amount": 5}), "Not paid then."])
    agent = Agent(model, tools=[pay], store=MemoryStore())
    paused = await agent.arun("buy", state={"paid": 0})
    done = await agent.aresume(paused.run_id, approve=False, answer="too expensive")
    assert bodies == [] and done.answer == "Not paid then." and done.state == {"paid": 0}
    tool_message = model.requests[1].messages[-1]
    assert tool_message.role == "tool" and tool_message.content == (
        "denied by a person: too expensive"
    )


async def test_edited_arguments_run_instead_of_the_asked_ones() -> None:
    agent = paying_agent(MemoryStore())
    paused = await agent.arun("buy", state={"paid": 0, "notes": []})
    done = await agent.aresume(paused.run_id, approve=True, edited_arguments={"amount": 3})
    assert bodies == ["pay 3"] and done.state["paid"] == 3


async def test_resume_refuses_a_request_that_was_not_issued_and_changes_nothing() -> None:
    store = MemoryStore()
    agent = paying_agent(store)
    paused = await agent.arun("buy", state={"paid": 0, "notes": []})
    before = store.load_run_record(paused.run_id)
    with pytest.raises(ValueError, match="was not issued for run"):
        await agent.aresume(paused.run_id, approve=True, request_id="apr_forged")
    with pytest.raises(ValueError, match="the approval was for other arguments"):
        await agent.aresume(paused.run_id, approve=True, arguments_hash="0" * 64)
    with pytest.raises(ValueError, match=r"resume it with approve=True or approve=False"):
        await agent.aresume(paused.run_id)
    with pytest.raises(ValueError, match="edited_arguments: invalid arguments"):
        await agent.aresume(paused.run_id, approve=True, edited_arguments={"amount": "x"})
    with pytest.raises(LookupError, match="no run"):
        await agent.aresume("ab" * 32, approve=True)
    assert store.load_run_record(paused.run_id) == before and bodies == []


async def test_a_request_of_another_run_is_refused() -> None:
    store = MemoryStore()
    agent = Agent(
        ScriptedModel([ToolCall("pay", {"amount": 1}), ToolCall("pay", {"amount": 2}), "x"]),
        tools=[pay],
        store=store,
    )
    first = await agent.arun("a", state={"paid": 0})
    second = await agent.arun("b", state={"paid": 0})
    other = next(e for e in second.events if isinstance(e, ApprovalRequested)).request
    with pytest.raises(ValueError, match="was not issued for run"):
        await agent.aresume(first.run_id, approve=True, request_id=other.id)


async def test_a_finished_run_cannot_be_resumed() -> None:
    agent = Agent(ScriptedModel(["hi"]), store=MemoryStore())
    result = await agent.arun("x")
    with pytest.raises(ValueError, match="has ended"):
        await agent.aresume(result.run_id)


async def test_without_a_store_a_paused_run_is_kept_in_memory_until_resumed() -> None:
    agent = paying_agent()
    paused = await agent.arun("buy", state={"paid": 0, "notes": []})
    assert (await agent.load_run(paused.run_id)).status is RunStatus.PAUSED
    done = await agent.aresume(paused.run_id, approve=True)
    assert done.answer == "Paid." and bodies == ["pay 5"]
    with pytest.raises(LookupError, match="without a store"):
        await agent.aresume(paused.run_id, approve=True)


async def test_ask_person_pauses_and_returns_the_answer_when_the_tool_runs_again() -> None:
    runs: list[str] = []

    @tool
    async def book(ctx: RunContext, city: str) -> str:
        """Book a hotel, asking which dates."""
        runs.append("start")
        ctx.state["draft"] = "half"
        dates = await ctx.ask_person(f"Which dates in {city}?", schema={"type": "string"})
        ctx.state["booked"] = f"{city} {dates}"
        return "booked"

    agent = Agent(
        ScriptedModel([ToolCall("book", {"city": "Oslo"}), "Booked."]),
        tools=[book],
        store=SQLiteStore(":memory:"),
    )
    paused = await agent.arun("trip", state={})
    request = next(e for e in paused.events if isinstance(e, ApprovalRequested)).request
    assert request.prompt == "Which dates in Oslo?" and request.schema == {"type": "string"}
    assert paused.state == {}  # nothing the paused tool changed is applied
    done = await agent.aresume(paused.run_id, approve=True, answer="May 1-3")
    assert runs == ["start", "start"]
    assert done.state == {"draft": "half", "booked": "Oslo May 1-3"}


async def test_a_permission_answering_ask_pauses_for_a_person() -> None:
    def ask_for_notes(call: ToolCall, ctx: RunContext) -> Any:
        return Ask("may I write notes?") if call.name == "note" else None

    agent = Agent(
        ScriptedModel([ToolCall("note", {"text": "x"}), "ok"]),
        tools=[note],
        permissions=[ask_for_notes],
        store=MemoryStore(),
    )
    paused = await agent.arun("go", state={"notes": []})
    request = next(e for e in paused.events if isinstance(e, ApprovalRequested)).request
    assert request.prompt == "may I write notes?"
    done = await agent.aresume(paused.run_id, approve=True)
    assert done.state == {"notes": ["x"]}


async def test_parallel_calls_run_while_one_waits_for_approval() -> None:
    store = MemoryStore()
    calls = [
        ToolCall("note", {"text": "first"}),
        ToolCall("pay", {"amount": 2}),
        ToolCall("note", {"text": "last"}),
    ]
    agent = paying_agent(store, [calls, "done"])
    paused = await agent.arun("go", state={"paid": 0, "notes": []})
    # the two notes run at once, in worker threads: either may append first
    assert paused.state["paid"] == 0 and sorted(paused.state["notes"]) == ["first", "last"]
    run = store.load_run(paused.run_id)
    run.check()
    assert [s.tool for s in run.steps] == ["note", "note"] and run.pending is not None
    assert run.pending.step == 2
    done = await agent.aresume(paused.run_id, approve=True)
    assert done.state == {"paid": 2, "notes": paused.state["notes"]}
    final = store.load_run(paused.run_id)
    final.check()
    assert [s.tool for s in final.steps] == ["note", "note", "pay", None]


@pytest.mark.parametrize(
    ("limits", "reason"),
    [
        (Limits(steps=2), StopReason.STEPS),
        (Limits(tool_calls=1), StopReason.TOOL_CALLS),
        (Limits(output_tokens=3), StopReason.OUTPUT_TOKENS),
    ],
)
async def test_a_run_stops_when_it_reaches_a_limit(limits: Limits, reason: StopReason) -> None:
    store = MemoryStore()
    script = [ToolCall("note", {"text": str(i)}) for i in range(5)]
    agent = Agent(ScriptedModel(script), tools=[note], store=store, limits=limits)
    result = await agent.arun("go", state={"notes": []})
    run = store.load_run(result.run_id)
    run.check()
    assert run.status is RunStatus.STOPPED and run.stop_reason is reason
    assert run.error is not None and "limit" in run.error.message
    assert isinstance(result.conversation.stopped, StoppedByLimit)


async def test_spend_survives_resume() -> None:
    store = MemoryStore()
    script = [
        ToolCall("pay", {"amount": 1}),
        ToolCall("note", {"text": "a"}),
        ToolCall("note", {"text": "b"}),
        "end",
    ]
    agent = Agent(ScriptedModel(script), tools=[pay, note], store=store, limits=Limits(steps=2))
    paused = await agent.arun("go", state={"paid": 0, "notes": []})
    assert store.load_run(paused.run_id).spent.steps == 1
    await agent.aresume(paused.run_id, approve=True)
    run = store.load_run(paused.run_id)
    assert run.stop_reason is StopReason.STEPS and run.spent.steps == 2


async def test_a_subagents_spend_counts_toward_its_parents_limits() -> None:
    store = MemoryStore()
    sub = Agent(
        ScriptedModel(
            [ToolCall("note", {"text": "s"}), ToolCall("note", {"text": "t"}), "sub done"]
        ),
        tools=[note],
        name="helper",
    ).as_tool(state="write")
    agent = Agent(
        ScriptedModel([ToolCall("helper", {"task": "x"}), ToolCall("note", {"text": "p"}), "end"]),
        tools=[sub, note],
        store=store,
        limits=Limits(tool_calls=3),
    )
    result = await agent.arun("go", state={"notes": []})
    run = store.load_run(result.run_id)
    assert run.spent.tool_calls == 3  # the helper call and the subagent's two
    assert run.stop_reason is StopReason.TOOL_CALLS


async def test_a_planner_decides_from_a_copy_of_the_run_state() -> None:
    seen: list[int] = []

    def planner(run: RunState) -> Any:
        done = [o for o in run.observations() if o["kind"] == "tool"]
        seen.append(len(done))
        run.steps.clear()  # changing the copy cannot change the run
        if len(done) < 2:
            return CallTool("note", {"text": f"n{len(done)}"})
        return Answer({"notes": len(done)})

    store = MemoryStore()
    result = await Agent(planner=planner, tools=[note], store=store).arun("go", state={"notes": []})
    assert result.answer == {"notes": 2} and result.state == {"notes": ["n0", "n1"]}
    assert seen == [0, 1, 2]
    run = store.load_run(result.run_id)
    run.check()
    assert len(run.steps) == 3 and run.answer == {"notes": 2}


async def test_a_model_that_reuses_its_call_ids_keeps_a_true_record_of_the_call_in_flight() -> None:
    """Rule: a decision's calls are its own, however its model names them (a model that numbers
    each reply's calls from `call_0`): the second reply's calls get ids of their own, and the
    record saved while its last call runs names that call as the one in flight (the next
    step, its key), as a crash there would leave it; every call runs once, the record checks."""
    store = MemoryStore()
    seen: list[Any] = []

    @tool
    async def slow_note(ctx: RunContext, text: str) -> str:
        """Write a note, after the other calls of its reply."""
        await anyio.sleep(0.2)
        record = store.load_run(ctx.run_id)  # what a crash now would leave
        in_flight = record.in_flight
        assert in_flight is not None
        seen.append((in_flight["step"], in_flight["key"] == ctx.idempotency_key))
        record.check()
        ctx.state["notes"].append(text)
        return "noted"

    def reply(*texts: str) -> list[ToolCall]:
        return [ToolCall("note", {"text": texts[0]}, id="call_0"),
                ToolCall("slow_note", {"text": texts[1]}, id="call_1")]

    agent = Agent(ScriptedModel([reply("a", "b"), reply("c", "d"), "done"]),
                  tools=[note, slow_note], store=store)
    result = await agent.arun("go", state={"notes": []})
    assert result.state == {"notes": ["a", "b", "c", "d"]}
    assert seen == [(1, True), (3, True)]  # this call, the next step
    run = store.load_run(result.run_id)
    run.check()
    ids = [s.call_id for s in run.steps]
    assert ids[:2] == ["call_0", "call_1"] and ids[4] is None
    assert len(set(ids[:4])) == 4
    assert [s.decision for s in run.steps] == [0, 0, 1, 1, 2]


async def test_calls_a_model_gave_one_id_each_run_once_and_the_model_reads_them_apart() -> None:
    """Rule: calls given one id (twice in a reply, or again in a later reply or run of the
    thread) each run once, with a result of their own; the model reads each call with its
    result under an id no other call of the thread has, and the stream says the same ids."""
    store = MemoryStore()

    def model(messages: list[Any], tools: Any) -> Any:
        last_user = max(i for i, m in enumerate(messages) if m.role == "user")
        replies = sum(1 for m in messages[last_user:] if m.role == "assistant")
        if replies < 2:  # each run: two replies of two calls, all named call_0
            return [ToolCall("note", {"text": f"{messages[last_user].content}{replies}{n}"},
                             id="call_0") for n in "ab"]
        return "done"

    agent = Agent(FunctionModel(model), tools=[note], store=store)
    first = await agent.arun("go", state={"notes": []})
    conversation = first.conversation
    conversation.add_message(Message.user("again"))
    streamed = [event.call_id async for event in agent.stream(conversation, state=first.state)
                if isinstance(event, ToolResult)]
    messages = (await store.aload(conversation.id)).messages
    calls = [c.id for m in messages if m.role == "assistant" for c in m.tool_calls]
    results = [m.call_id for m in messages if m.role == "tool"]
    assert len(calls) == 8 and len(set(calls)) == 8 and sorted(results) == sorted(calls)
    assert sorted(streamed) == sorted(calls[4:])
    assert sorted(first.state["notes"]) == ["go0a", "go0b", "go1a", "go1b"]


async def test_a_call_id_with_a_lone_surrogate_is_kept_as_text() -> None:
    """Rule: what a model sends that is not text (a lone surrogate) gets U+FFFD, in a call's id
    too (it is stored and sent back to the model): the run goes on, and two such ids that
    become one are still two calls."""
    store = SQLiteStore(":memory:")
    calls = [ToolCall("note", {"text": t}, id="call\ud800" + t) for t in "ab"]
    calls.append(ToolCall("note", {"text": "c"}, id="call\ufffda"))  # what the first becomes
    agent = Agent(ScriptedModel([calls, "done"]), tools=[note], store=store)
    result = await agent.arun("go", state={"notes": []})
    assert sorted(result.state["notes"]) == ["a", "b", "c"]
    ids = {step.call_id for step in store.load_run(result.run_id).steps[:3]}  # (any order)
    assert {"call\ufffda", "call\ufffdb"} <= ids and len(ids) == 3
