"""The agent loop on a conversation `State` (seed 000): runs, turns, ask, compact, @loop."""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
import anyio.lowlevel
import pydantic
import pytest

from pyox_agents import (
    Agent,
    Message,
    RunContext,
    State,
    StoppedByFinish,
    StoppedByLimit,
    StoppedByPermission,
    StoppedByUntil,
    ToolCallEnded,
    loop,
    tool,
)
from pyox_agents.models import FunctionModel, ScriptedModel, ToolCall, ToolSpec
from pyox_agents.runtime._permissions import Deny
from pyox_agents.stores import MemoryStore

pytestmark = pytest.mark.anyio


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo."""
    ctx.state["todos"].append(text)
    return f"Added {text!r}"


@tool
def submit(ctx: RunContext, answer: str) -> str:
    """Submit the final answer."""
    ctx.finish(answer)
    return "submitted"


def test_run_records_the_conversation_in_the_state() -> None:
    state = State(messages=[Message.user("Plan my trip")])
    agent = Agent(
        ScriptedModel([ToolCall("add_todo", {"text": "fly"}), "Planned."]), tools=[add_todo]
    )
    result = agent.run(state, state={"todos": []})
    assert result.conversation is state
    assert state.answer == "Planned." and result.answer == "Planned."
    assert [m.role for m in state.messages] == ["user", "assistant", "tool", "assistant"]
    kinds = [entry.kind for entry in state.history]
    assert kinds[:2] == ["import", "run_start"]
    assert "tool_result" in kinds and "state_change" not in kinds  # the state is not recorded
    assert state.turn == 2 and state.usage.requests == 2


def test_a_prompt_string_starts_a_new_state() -> None:
    result = Agent(ScriptedModel(["hi"])).run("hello")
    assert isinstance(result.conversation, State)
    assert result.conversation.messages[0] == Message.user("hello")


def test_a_second_run_continues_the_conversation_with_the_state_it_is_given() -> None:
    agent = Agent(
        ScriptedModel(
            [ToolCall("add_todo", {"text": "a"}), "one", ToolCall("add_todo", {"text": "b"}), "two"]
        ),
        tools=[add_todo],
    )
    first = agent.run("start", state={"todos": []})
    first.conversation.add_message(Message.user("more"))
    second = agent.run(first.conversation, state=first.state)  # the app gives it again
    assert second.state == {"todos": ["a", "b"]}
    assert second.answer == "two"
    assert [m.content for m in second.conversation.messages if m.role == "user"] == [
        "start",
        "more",
    ]


async def test_a_run_after_cancellation_continues_the_same_state() -> None:
    @tool
    async def slow() -> str:
        """Never finishes on its own."""
        await anyio.sleep_forever()
        return "x"

    state = State(messages=[Message.user("go")])
    agent = Agent(ScriptedModel([ToolCall("slow", {}), "recovered"]), tools=[slow])
    stream = agent.stream(state)
    async for event in stream:
        if isinstance(event, ToolCallEnded):
            break
    await stream.aclose()
    await anyio.lowlevel.checkpoint()
    assert state.pending_calls == ()
    closed = [e for e in state.history if e.kind == "tool_result"]
    assert closed[-1].outcome == "cancelled"
    result = await agent.arun(state)
    assert result.answer == "recovered"


async def test_think_and_use_tools_make_the_seeds_hand_written_loop() -> None:
    def my_loop(agent: Agent, state: State) -> None:
        while state.stopped is None and not state.finished:
            agent.think(state)
            if state.pending_calls:
                agent.use_tools(state)

    agent = Agent(
        ScriptedModel([ToolCall("add_todo", {"text": "a"}), ToolCall("submit", {"answer": "ok"})]),
        tools=[add_todo, submit],
    )
    state = State(messages=[Message.user("go")])
    await anyio.to_thread.run_sync(my_loop, agent, state)
    assert state.finished and state.answer == "ok"
    assert isinstance(state.stopped, StoppedByFinish)


def test_the_seeds_first_example_runs() -> None:
    agent = Agent(ScriptedModel(["The bug is in b.py"]))
    state = State(messages=[Message.user("Find the bug in this repo")], extra_data={"repo": "api"})
    agent.run(state)
    assert (state.answer, state.stopped) == ("The bug is in b.py", None)
    assert state.usage.cost == 0.0


def test_the_seeds_restore_example_undoes_a_runs_effect_on_the_context() -> None:
    agent = Agent(ScriptedModel(["first", "second"]))
    state = State(messages=[Message.user("hi")])
    agent.run(state)
    before = state.snapshot()
    agent.run(state)
    if before.usage != state.usage:
        state.restore(before)
    assert state.messages == before.messages and state.answer == "first"
    assert state.usage.requests == 2  # usage stays cumulative


def test_the_seeds_fork_example_leaves_the_original_untouched() -> None:
    agent = Agent(ScriptedModel(["one", "two"]))
    state = State(messages=[Message.user("hi")])
    agent.run(state)
    before = state.snapshot()
    attempt = state.fork()
    agent.run(attempt)
    assert state.snapshot() == before
    assert attempt.answer == "two" and attempt.id != state.id


def test_a_reporter_can_fork_between_turns() -> None:
    forks: list[State] = []

    class Forker:
        def on_think_end(self, ctx: RunContext, reply: Any) -> None:
            forks.append(ctx.conversation.fork())

    agent = Agent(
        ScriptedModel([ToolCall("add_todo", {"text": "a"}), "done"]),
        tools=[add_todo],
        reporters=[Forker()],
    )
    agent.run("go", state={"todos": []})
    assert len(forks) == 2
    assert forks[0].pending_calls and forks[0].pending_calls[0].name == "add_todo"


def test_loop_runs_turns_until_an_until_function_is_true() -> None:
    def waiting_for_user(state: State) -> bool:
        return (
            bool(state.messages)
            and state.messages[-1].role == "assistant"
            and not state.pending_calls
        )

    @loop(until=waiting_for_user, limit=10)
    def turn(agent: Agent, state: State) -> None:
        agent.think(state)
        if state.pending_calls:
            agent.use_tools(state)

    agent = Agent(
        ScriptedModel([ToolCall("add_todo", {"text": "a"}), "Anything else?"]), tools=[add_todo]
    )
    state = State(messages=[Message.user("go")])
    turn(agent, state)
    assert state.stopped == StoppedByUntil("waiting_for_user")
    assert state.turn == 2 and not state.finished


def test_loop_stops_at_its_limit_and_a_new_call_runs_again() -> None:
    @loop(limit=2)
    def turn(agent: Agent, state: State) -> None:
        agent.think(state)
        if state.pending_calls:
            agent.use_tools(state)

    agent = Agent(
        ScriptedModel([ToolCall("add_todo", {"text": str(i)}) for i in range(4)]), tools=[add_todo]
    )
    state = State(messages=[Message.user("go")])
    turn(agent, state)
    assert state.stopped == StoppedByLimit(2) and state.turn == 2
    turn(agent, state)
    assert state.stopped == StoppedByLimit(2) and state.turn == 4


def test_loop_stops_when_a_tool_finishes_the_state() -> None:
    @loop(limit=10)
    def turn(agent: Agent, state: State) -> None:
        agent.think(state)
        if state.pending_calls:
            agent.use_tools(state)

    agent = Agent(ScriptedModel([ToolCall("submit", {"answer": "42"})]), tools=[submit])
    state = State(messages=[Message.user("go")])
    turn(agent, state)
    assert state.finished and state.answer == "42" and state.turn == 1


async def test_an_async_loop_body_makes_an_async_loop() -> None:
    @loop(limit=1)
    async def turn(agent: Agent, state: State) -> None:
        await agent.athink(state)

    state = State(messages=[Message.user("go")])
    await turn(Agent(ScriptedModel(["hi"])), state)
    assert state.answer == "hi"


def test_a_finish_tool_ends_the_run_with_its_answer() -> None:
    agent = Agent(
        ScriptedModel([ToolCall("submit", {"answer": "the answer"}), "never"]), tools=[submit]
    )
    result = agent.run("go")
    assert result.answer == "the answer" and result.conversation.finished
    with pytest.raises(ValueError, match="finished"):
        agent.run(result.conversation)


def test_a_denied_call_gets_a_denied_result_and_the_run_goes_on() -> None:
    def no_deletes(call: ToolCall, ctx: RunContext) -> Any:
        return Deny("deleting is not allowed") if call.name == "delete_all" else None

    @tool
    def delete_all() -> str:
        """Delete everything."""
        raise AssertionError("must not run")

    model = ScriptedModel([ToolCall("delete_all", {}), "ok"])
    result = Agent(model, tools=[delete_all], permissions=[no_deletes]).run("go")
    (entry,) = [e for e in result.conversation.history if e.kind == "tool_result"]
    assert entry.outcome == "denied"
    assert entry.text == "denied by permission no_deletes: deleting is not allowed"
    assert result.answer == "ok" and result.conversation.stopped is None


def test_a_denial_with_stop_sets_stopped_by_permission_and_leaves_the_state_unfinished() -> None:
    def stop_on_pay(call: ToolCall, ctx: RunContext) -> Any:
        return Deny("ask a human", stop=True) if call.name == "pay" else True

    @tool
    def pay(amount: int) -> str:
        """Pay."""
        return "paid"

    model = ScriptedModel([ToolCall("pay", {"amount": 5}), "never asked"])
    result = Agent(model, tools=[pay], permissions=[stop_on_pay]).run("go")
    stopped = result.conversation.stopped
    assert isinstance(stopped, StoppedByPermission)
    assert stopped.call.name == "pay" and stopped.permission == "stop_on_pay"
    assert not result.conversation.finished
    assert len(model.requests) == 1  # the model was not asked again


def test_ask_returns_a_validated_structured_answer_and_retries_once() -> None:
    class Review(pydantic.BaseModel):
        verdict: str
        score: int

    replies = iter(['{"verdict": "good"}', '```json\n{"verdict": "good", "score": 9}\n```'])
    seen: list[list[Message]] = []

    def model(messages: list[Message], tools: list[ToolSpec]) -> str:
        seen.append(messages)
        return next(replies)

    state = State(messages=[Message.user("Here is my essay")])
    review = Agent(FunctionModel(model)).ask(state, "Review it", returns=Review)
    assert review == Review(verdict="good", score=9)
    assert "score: Field required" in seen[1][-1].content
    assert state.messages == (Message.user("Here is my essay"),)  # asking adds nothing
    assert state.usage.requests == 2


def test_ask_gives_up_after_two_invalid_answers() -> None:
    state = State(messages=[Message.user("x")])
    agent = Agent(ScriptedModel(["not json", "still not"]))
    with pytest.raises(ValueError, match="did not match list twice"):
        agent.ask(state, "List them", returns=list[int])


def test_compact_asks_the_model_for_a_summary() -> None:
    agent = Agent(ScriptedModel(["long answer", "SUMMARY: user wants a trip"]))
    state = State(messages=[Message.user("Plan a trip")])
    agent.run(state)
    summary = agent.compact(state)
    assert summary == "SUMMARY: user wants a trip"
    assert state.messages[0] == Message.user("Plan a trip")
    assert "SUMMARY" in state.messages[-1].content and len(state.messages) == 2
    assert state.usage.requests == 2


def test_the_store_saves_after_every_step_and_load_gives_an_equal_snapshot() -> None:
    store = MemoryStore()
    saved_counts: list[int] = []

    class Watch:
        def on_think_start(self, ctx: RunContext) -> None:
            saved_counts.append(store.entry_count(ctx.conversation.id))

    agent = Agent(
        ScriptedModel([ToolCall("add_todo", {"text": "a"}), "done", "again"]),
        tools=[add_todo],
        store=store,
        reporters=[Watch()],
    )
    result = agent.run("go", state={"todos": []})
    assert saved_counts[0] > 0 and saved_counts[1] > saved_counts[0]  # saved between steps
    loaded = store.load(result.conversation.id)
    assert loaded.snapshot() == result.conversation.snapshot()
    loaded.add_message(Message.user("more"))
    assert agent.run(loaded).answer == "again"
    assert store.load(loaded.id).snapshot() == loaded.snapshot()


# -- subagents -------------------------------------------------------------------------------


def researcher(script: list[Any], state: Any = None, tools: Any = ()) -> Any:
    return Agent(ScriptedModel(script), tools=tools, name="researcher").as_tool(state=state)


def test_a_subagent_runs_as_a_child_state_of_the_tool_call() -> None:
    sub = researcher(["found it in b.py"])
    model = ScriptedModel([ToolCall("researcher", {"task": "find the bug"}, id="c1"), "done"])
    parent = Agent(model, tools=[sub]).run("go").conversation
    (entry,) = [e for e in parent.history if e.kind == "tool_result"]
    (child_id,) = entry.child_ids
    child = parent.child(child_id)
    assert child is parent.child(child_id)
    assert (child.parent_id, child.parent_call_id) == (parent.id, "c1")
    assert child.answer == "found it in b.py" and entry.content == "found it in b.py"
    assert parent.usage.requests == 3  # two of the parent, one of the subagent


def test_a_subagents_child_loads_from_the_store_after_the_process() -> None:
    store = MemoryStore()
    sub = researcher(["found"])
    model = ScriptedModel([ToolCall("researcher", {"task": "t"}), "done"])
    parent = Agent(model, tools=[sub], store=store).run("go").conversation
    loaded = store.load(parent.id)
    (entry,) = [e for e in loaded.history if e.kind == "tool_result"]
    child = loaded.child(entry.child_ids[0])
    assert child.answer == "found" and child.parent_id == parent.id
    assert child is not loaded.child(entry.child_ids[0])  # loaded each time, not cached


@tool
def bump(ctx: RunContext) -> str:
    """Bump the counter."""
    ctx.state["n"] += 1
    return "bumped"


@tool
def peek(ctx: RunContext) -> int:
    """Read the counter."""
    return int(ctx.state["n"])


@pytest.mark.parametrize(
    ("access", "expected_n", "error"),
    [
        (None, 0, "this subagent has no access"),
        ("read", 0, "read-only"),
        ("write", 1, None),
    ],
)
def test_a_subagents_access_to_the_shared_state(
    access: Any, expected_n: int, error: str | None
) -> None:
    sub = researcher([[ToolCall("bump", {}, id="b")], "ok"], state=access, tools=[bump])
    model = ScriptedModel([ToolCall("researcher", {"task": "t"}), "done"])
    result = Agent(model, tools=[sub]).run("go", state={"n": 0})
    assert result.state == {"n": expected_n}
    child_id = next(e for e in result.conversation.history if e.kind == "tool_result").child_ids[0]
    child = result.conversation.child(child_id)
    (bumped,) = [e for e in child.history if e.kind == "tool_result"]
    if error is None:
        assert bumped.outcome == "ok"
    else:
        assert bumped.outcome == "error" and error in str(bumped.text)


def test_a_read_subagent_can_read_the_state() -> None:
    sub = researcher([ToolCall("peek", {}), "ok"], state="read", tools=[peek])
    model = ScriptedModel([ToolCall("researcher", {"task": "t"}), "done"])
    result = Agent(model, tools=[sub]).run("go", state={"n": 7})
    child_id = next(e for e in result.conversation.history if e.kind == "tool_result").child_ids[0]
    (read,) = [e for e in result.conversation.child(child_id).history if e.kind == "tool_result"]
    assert read.content == 7


async def test_a_write_subagents_changes_stream_live_in_the_parent() -> None:
    from pyox_agents import StateChanged, SubagentFinished, SubagentStarted

    sub = researcher([ToolCall("bump", {}), "ok"], state="write", tools=[bump])
    agent = Agent(ScriptedModel([ToolCall("researcher", {"task": "t"}), "done"]), tools=[sub])
    events = [e async for e in agent.stream("go", state={"n": 0})]
    kinds = [type(e) for e in events]
    started, change, ended = (
        kinds.index(SubagentStarted),
        kinds.index(StateChanged),
        kinds.index(SubagentFinished),
    )
    assert started < change < ended
    sub_run = events[started]
    assert isinstance(sub_run, SubagentStarted)
    assert events[change].run_id == sub_run.run_id and events[change].state == {"n": 1}
    assert all(dataclasses.is_dataclass(e) for e in events)


def test_the_seeds_history_example_reads_replies_and_results(capsys: Any) -> None:
    agent = Agent(ScriptedModel([ToolCall("add_todo", {"text": "a"}), "done"]), tools=[add_todo])
    state = agent.run("go", state={"todos": []}).conversation
    for entry in state.history:
        if entry.kind == "model_reply":
            print(entry.content.tool_calls)  # a Reply
        elif entry.kind == "tool_result":
            print(entry.call.name, entry.outcome)
    out = capsys.readouterr().out
    assert "add_todo ok" in out and "ToolCall(name='add_todo'" in out


async def test_the_seeds_achild_example_loads_a_subagent_from_an_async_store() -> None:
    store = MemoryStore()
    sub = researcher(["found"])
    model = ScriptedModel([ToolCall("researcher", {"task": "t"}), "done"])
    state = State(id="bug-hunt-1", messages=[Message.user("hunt")])
    await Agent(model, tools=[sub], store=store).arun(state)
    state = await store.aload("bug-hunt-1")
    child_id = next(e for e in state.history if e.kind == "tool_result").child_ids[0]
    researcher_state = await state.achild(child_id)
    assert researcher_state.answer == "found"
