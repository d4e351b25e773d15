"""The rules of seed 004 (shared state), each checked through a whole agent run."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from pyox_agents import (
    Agent,
    FrozenDict,
    Message,
    RunContext,
    RunFinished,
    StateChanged,
    ToolResult,
    tool,
)
from pyox_agents.models import FunctionModel, ScriptedModel, ToolCall, ToolSpec

from .runs import collect, deltas, finished, replay, results, run_script

pytestmark = pytest.mark.anyio


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo to the list."""
    ctx.state["todos"].append(text)
    return f"Added {text!r}"


async def test_seed_example_streams_the_documented_delta() -> None:
    agent = Agent(
        model=ScriptedModel([ToolCall("add_todo", {"text": "Book the flight"}), "Planned."]),
        tools=[add_todo],
    )
    printed = []
    async for event in agent.stream("Plan my trip", state={"todos": []}):
        if isinstance(event, StateChanged):
            printed.append(event.delta)
    assert printed == [[{"op": "add", "path": "/todos/0", "value": "Book the flight"}]]


async def test_delta_is_a_list_of_plain_dicts() -> None:
    events = await run_script([add_todo], [ToolCall("add_todo", {"text": "a"})], {"todos": []})
    (change,) = deltas(events)
    assert type(change.delta) is list
    assert all(type(op) is dict for op in change.delta)
    assert json.loads(json.dumps(change.delta)) == change.delta


async def test_callers_dict_is_never_changed() -> None:
    given = {"todos": ["x"], "meta": {"n": 1}}
    before = json.loads(json.dumps(given))
    events = await run_script([add_todo], [ToolCall("add_todo", {"text": "a"})], given)
    assert given == before
    assert finished(events).state == {"todos": ["x", "a"], "meta": {"n": 1}}


async def test_ctx_state_reads_the_given_state() -> None:
    @tool
    def count(ctx: RunContext) -> int:
        """Count todos."""
        return len(ctx.state["todos"])

    events = await run_script([count], [ToolCall("count", {})], {"todos": [1, 2, 3]})
    (result,) = results(events).values()
    assert result.result == 3


async def test_replacing_ctx_state_replaces_the_document() -> None:
    @tool
    def reset(ctx: RunContext) -> str:
        """Start over."""
        ctx.state = {"todos": ["fresh"], "version": 2}
        return "reset"

    given = {"todos": ["old", "older"], "owner": "ann"}
    events = await run_script([reset], [ToolCall("reset", {})], given)
    assert finished(events).state == {"todos": ["fresh"], "version": 2}
    assert replay(given, events) == finished(events).state


async def test_state_changed_carries_the_whole_new_state() -> None:
    events = await run_script(
        [add_todo],
        [ToolCall("add_todo", {"text": "a"}), ToolCall("add_todo", {"text": "b"})],
        {"todos": [], "title": "trip"},
    )
    first, second = deltas(events)
    assert first.state == {"todos": ["a"], "title": "trip"}
    assert second.state == {"todos": ["a", "b"], "title": "trip"}
    assert (first.version, second.version) == (1, 2)


async def test_run_finished_state_is_the_state_at_the_end() -> None:
    events = await run_script([add_todo], [ToolCall("add_todo", {"text": "a"})], {"todos": []})
    assert finished(events).state == deltas(events)[-1].state == {"todos": ["a"]}


async def test_changes_apply_when_the_tool_finishes() -> None:
    wrote = anyio.Event()
    seen: list[Any] = []

    @tool
    async def slow_writer(ctx: RunContext) -> str:
        """Write, then wait."""
        ctx.state["todos"].append("from writer")
        wrote.set()
        await anyio.sleep(0.05)
        return "written"

    @tool
    async def reader(ctx: RunContext) -> str:
        """Read after the writer wrote but before it finished."""
        await wrote.wait()
        seen.append(list(ctx.state["todos"]))
        return "read"

    call = [ToolCall("slow_writer", {}), ToolCall("reader", {})]
    events = await run_script([slow_writer, reader], [call], {"todos": []})
    assert seen == [[]]
    assert finished(events).state == {"todos": ["from writer"]}


async def test_state_changed_comes_right_after_its_tool_result() -> None:
    events = await run_script(
        [add_todo],
        [[ToolCall("add_todo", {"text": "a"}), ToolCall("add_todo", {"text": "b"})]],
        {"todos": []},
    )
    for index, event in enumerate(events):
        if isinstance(event, StateChanged):
            previous = events[index - 1]
            assert isinstance(previous, ToolResult) and previous.call_id == event.call_id


async def test_failed_tool_changes_nothing() -> None:
    @tool
    def append_then_raise(ctx: RunContext) -> str:
        """Append, then fail."""
        ctx.state["todos"].append("half-done")
        raise RuntimeError("disk full")

    events = await run_script(
        [append_then_raise], [ToolCall("append_then_raise", {})], {"todos": []}
    )
    assert finished(events).state == {"todos": []}
    assert not deltas(events)
    (result,) = results(events).values()
    assert result.error == ("the tool failed with an unexpected RuntimeError; the server's log "
                            "has the details")


async def test_a_tool_that_puts_a_set_in_the_state_fails_naming_the_path() -> None:
    @tool
    def tag(ctx: RunContext) -> str:
        """Tag the cart."""
        ctx.state["cart"].append({"tags": {"a", "b"}})
        return "tagged"

    events = await run_script([tag], [ToolCall("tag", {})], {"cart": []})
    (result,) = results(events).values()
    assert result.error is not None and 'ctx.state["cart"][0]["tags"]' in result.error
    assert "set" in result.error
    assert finished(events).state == {"cart": []} and not deltas(events)


@pytest.mark.parametrize(
    ("value", "kind"),
    [(float("nan"), "NaN"), ({1: "x"}, "key"), (object(), "object")],
)
async def test_a_tool_that_puts_non_json_in_the_state_commits_nothing(
    value: Any, kind: str
) -> None:
    @tool
    def put(ctx: RunContext) -> str:
        """Put a value."""
        ctx.state["x"] = value
        return "put"

    events = await run_script([put], [ToolCall("put", {})], {})
    (result,) = results(events).values()
    assert result.error is not None and "state" in result.error
    assert finished(events).state == {} and not deltas(events)


async def test_tools_running_at_the_same_time_keep_each_others_changes() -> None:
    b_done = anyio.Event()

    @tool
    async def set_a(ctx: RunContext) -> str:
        """Set a after b committed."""
        ctx.state["a"] = 1
        ctx.state["todos"].append("from a")
        await b_done.wait()
        return "a"

    @tool
    async def set_b(ctx: RunContext) -> str:
        """Set b."""
        ctx.state["b"] = 2
        ctx.state["todos"].append("from b")
        return "b"

    class Signal:
        def on_tool_end(self, ctx: RunContext, call: ToolCall, result: ToolResult) -> None:
            if call.name == "set_b":
                b_done.set()

    agent = Agent(
        model=ScriptedModel([[ToolCall("set_a", {}), ToolCall("set_b", {})], "ok"]),
        tools=[set_a, set_b],
        reporters=[Signal()],
    )
    given = {"todos": []}
    events = await collect(agent, state=given)
    assert finished(events).state == {"a": 1, "b": 2, "todos": ["from b", "from a"]}
    assert replay(given, events) == finished(events).state


async def test_writing_the_same_path_the_later_tool_is_refused() -> None:
    first_done = anyio.Event()

    @tool
    async def set_title(ctx: RunContext, title: str, wait: bool) -> str:
        """Set the title."""
        ctx.state["title"] = title
        if wait:
            await first_done.wait()
        else:
            first_done.set()
        return title

    calls = [
        ToolCall("set_title", {"title": "late", "wait": True}, id="late"),
        ToolCall("set_title", {"title": "early", "wait": False}, id="early"),
    ]
    events = await run_script([set_title], [calls], {"title": ""})
    refused = results(events)["late"]
    assert refused.error is not None
    assert "the shared state changed at /title while this tool ran" in refused.error
    assert results(events)["early"].error is None
    assert finished(events).state == {"title": "early"}


async def test_writing_inside_a_replaced_ancestor_is_refused() -> None:
    parent_done = anyio.Event()

    @tool
    async def edit_item(ctx: RunContext) -> str:
        """Edit inside the cart."""
        ctx.state["cart"]["items"].append("pen")
        await parent_done.wait()
        return "edited"

    @tool
    async def reset_cart(ctx: RunContext) -> str:
        """Replace the cart."""
        ctx.state["cart"] = {"items": []}
        parent_done.set()
        return "reset"

    calls = [ToolCall("edit_item", {}, id="child"), ToolCall("reset_cart", {}, id="parent")]
    events = await run_script([edit_item, reset_cart], [calls], {"cart": {"items": ["ink"]}})
    assert results(events)["child"].error is not None
    assert finished(events).state == {"cart": {"items": []}}


async def test_idempotent_tool_is_rerun_on_conflict_and_increments_converge() -> None:
    start = anyio.Event()
    arrived = 0

    @tool(idempotent=True)
    async def increment(ctx: RunContext) -> int:
        """Add one to the counter."""
        nonlocal arrived
        value = ctx.state["counter"] + 1
        arrived += 1
        if arrived == 20:
            start.set()
        await start.wait()  # all 20 read the same version before any commits
        ctx.state["counter"] = value
        return value

    calls = [ToolCall("increment", {}) for _ in range(20)]
    events = await run_script([increment], [calls], {"counter": 0})
    assert finished(events).state == {"counter": 20}
    assert all(r.error is None for r in results(events).values())
    assert replay({"counter": 0}, events) == {"counter": 20}


async def test_parallel_tool_calls_run_concurrently() -> None:
    a_started, b_started = anyio.Event(), anyio.Event()

    @tool
    async def a() -> str:
        """Needs b to be running."""
        a_started.set()
        with anyio.fail_after(5):
            await b_started.wait()
        return "a"

    @tool
    async def b() -> str:
        """Needs a to be running."""
        b_started.set()
        with anyio.fail_after(5):
            await a_started.wait()
        return "b"

    events = await run_script([a, b], [[ToolCall("a", {}), ToolCall("b", {})]], {})
    assert [r.result for r in results(events).values()] in (["a", "b"], ["b", "a"])
    assert all(r.error is None for r in results(events).values())


async def test_tool_results_reach_the_model_in_the_order_it_asked() -> None:
    b_done = anyio.Event()

    @tool
    async def first() -> str:
        """Finishes last."""
        await b_done.wait()
        return "first result"

    @tool
    async def second() -> str:
        """Finishes first."""
        b_done.set()
        return "second result"

    model = ScriptedModel([[ToolCall("first", {}), ToolCall("second", {})], "ok"])
    events = await collect(Agent(model=model, tools=[first, second]))
    finish_order = [e.result for e in events if isinstance(e, ToolResult)]
    assert finish_order == ["second result", "first result"]
    tool_messages = [m.content for m in model.requests[1].messages if m.role == "tool"]
    assert tool_messages == ["first result", "second result"]


async def test_hooks_read_a_copy() -> None:
    attempts: list[str] = []

    def instructions(ctx: RunContext) -> str:
        try:
            ctx.state["todos"].append("from a hook")
        except TypeError as exc:
            attempts.append(str(exc))
        try:
            ctx.state = {}
        except TypeError as exc:
            attempts.append(str(exc))
        return "Plan trips."

    class Reporter:
        def on_tool_end(self, ctx: RunContext, call: ToolCall, result: ToolResult) -> None:
            assert isinstance(ctx.state, FrozenDict)
            with pytest.raises(TypeError, match="read-only"):
                ctx.state["todos"].clear()

    agent = Agent(
        model=ScriptedModel([ToolCall("add_todo", {"text": "a"}), "ok"]),
        tools=[add_todo],
        instructions=instructions,
        reporters=[Reporter()],
    )
    events = await collect(agent, state={"todos": []})
    assert len(attempts) == 4
    assert "read-only" in attempts[0] and "only tools change it" in attempts[1]
    assert finished(events).state == {"todos": ["a"]}


async def test_the_model_does_not_see_the_state_unless_a_tool_returns_it() -> None:
    seen: list[list[Message]] = []

    def model(messages: list[Message], tools: list[ToolSpec]) -> Any:
        seen.append(messages)
        return ToolCall("add_todo", {"text": "x"}) if len(seen) == 1 else "done"

    agent = Agent(model=FunctionModel(model), tools=[add_todo], instructions="Help.")
    await collect(agent, state={"todos": ["SECRET-TODO"]})
    assert all("SECRET-TODO" not in m.content for messages in seen for m in messages)


async def test_the_model_sees_the_state_an_instructions_callable_adds() -> None:
    seen: list[list[Message]] = []

    def model(messages: list[Message], tools: list[ToolSpec]) -> Any:
        seen.append(messages)
        return "done"

    agent = Agent(
        model=FunctionModel(model),
        instructions=lambda ctx: f"The todos are {json.dumps(ctx.state['todos'])}",
    )
    await collect(agent, state={"todos": ["SECRET-TODO"]})
    system = seen[0][0]
    assert system.role == "system" and "SECRET-TODO" in system.content


async def test_the_model_sees_the_state_a_tool_returns() -> None:
    @tool
    def show(ctx: RunContext) -> Any:
        """Show the todos."""
        return ctx.state["todos"]

    model = ScriptedModel([ToolCall("show", {}), "ok"])
    events = await collect(Agent(model=model, tools=[show]), state={"todos": ["VISIBLE"]})
    (result,) = results(events).values()
    assert result.result == ["VISIBLE"]
    assert any("VISIBLE" in m.content for m in model.requests[1].messages)


async def test_instructions_callable_sees_the_latest_state_each_step() -> None:
    prompts: list[str] = []

    def model(messages: list[Message], tools: list[ToolSpec]) -> Any:
        prompts.append(messages[0].content)
        return ToolCall("add_todo", {"text": "a"}) if len(prompts) == 1 else "done"

    agent = Agent(
        model=FunctionModel(model),
        tools=[add_todo],
        instructions=lambda ctx: str(len(ctx.state["todos"])),
    )
    await collect(agent, state={"todos": []})
    assert prompts == ["0", "1"]


async def test_run_finished_is_the_last_event_of_a_run() -> None:
    events = await run_script([add_todo], [ToolCall("add_todo", {"text": "a"})], {"todos": []})
    assert isinstance(events[-1], RunFinished)
    assert sum(isinstance(e, RunFinished) for e in events) == 1
