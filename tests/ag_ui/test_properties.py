"""Any run of a ScriptedModel agent gives a stream `@ag-ui/client` accepts, whose state events
replay to the run's final state."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents import Agent, RunContext, RunFinished, RuntimeEvent, State, StateChanged, tool
from pyox_agents.adapters.ag_ui import encode_event, translate
from pyox_agents.models import FunctionModel, ScriptedModel
from pyox_agents.state.frozen import thaw
from pyox_agents.state.messages import Message, ToolCall
from tests.ag_ui.helpers import run_input
from tests.ag_ui.verify import check_stream


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Append a todo."""
    ctx.state["todos"].append(text)
    return "added"


@tool
def set_key(ctx: RunContext, key: str, value: int) -> dict[str, int]:
    """Set a key of the state."""
    ctx.state[key] = value
    return {key: value}


@tool
def broken(ctx: RunContext, text: str) -> str:
    """Change the state, then fail."""
    ctx.state["todos"].append(text)
    raise ValueError("broken on purpose")


@tool(approval=True)
def wipe(ctx: RunContext, reason: str) -> str:
    """Wipe the todos (a person approves first)."""
    ctx.state["todos"] = []
    return "wiped"


def _helper_reply(messages: list[Message], tools: list[Any]) -> Any:
    if messages[-1].role == "user":
        return ToolCall("add_todo", {"text": "from helper"})
    return "helper done"


HELPER = Agent(FunctionModel(_helper_reply), tools=[add_todo], name="helper").as_tool(
    state="write", description="A helper that adds a todo.")

KEYS = st.sampled_from(["a", "b/c", "~d", "e f"])
CALLS = st.one_of(
    st.builds(lambda t: ToolCall("add_todo", {"text": t}), st.text(max_size=5)),
    st.builds(lambda k, v: ToolCall("set_key", {"key": k, "value": v}), KEYS, st.integers()),
    st.builds(lambda t: ToolCall("broken", {"text": t}), st.text(max_size=3)),
    st.builds(lambda: ToolCall("wipe", {"reason": "clean"})),
    st.builds(lambda: ToolCall("helper", {"task": "add one"})),
    st.builds(lambda: ToolCall("no_such_tool", {})),
    st.builds(lambda: ToolCall("add_todo", {}, raw_arguments="{not json")),
)
STEP = st.one_of(st.text(min_size=1, max_size=20), st.lists(CALLS, min_size=1, max_size=3),
                 st.tuples(st.text(min_size=1, max_size=10), CALLS).map(list))
SCRIPTS = st.tuples(st.lists(STEP, max_size=4), st.booleans())
STATES = st.fixed_dictionaries({"todos": st.lists(st.text(max_size=3), max_size=3)},
                               optional={"a": st.integers()})


async def _run(script: list[Any], state: dict[str, Any]) -> tuple[list[dict[str, Any]],
                                                                  list[RuntimeEvent]]:
    agent = Agent(ScriptedModel(script), tools=[add_todo, set_key, broken, wipe, HELPER])
    runtime: list[RuntimeEvent] = []

    async def tee() -> AsyncIterator[RuntimeEvent]:
        async for event in agent.stream(State(messages=[Message.user("go")]), state=state):
            runtime.append(event)
            yield event

    given = run_input(state=state)
    out = [json.loads(encode_event(event)) async for event in translate(given, tee())]
    return out, runtime


@settings(max_examples=60, deadline=None)
@given(script=SCRIPTS, state=STATES)
def test_any_scripted_run_satisfies_the_clients_rules_and_replays_to_its_state(
        script: tuple[list[Any], bool], state: dict[str, Any]) -> None:
    steps, answers = script
    out, runtime = anyio.run(_run, [*steps, *(["The end."] if answers else [])], state)
    replayed = check_stream(out, state=state)
    last = runtime[-1]
    if isinstance(last, RunFinished):
        assert replayed.terminal["type"] == "RUN_FINISHED"
        assert replayed.state == thaw(last.state)
        assert replayed.messages is not None
    else:
        assert replayed.terminal["type"] == "RUN_ERROR"
        changes = [e for e in runtime if isinstance(e, StateChanged)]
        assert replayed.state == (thaw(changes[-1].state) if changes else state)
    arguments: dict[str, str] = {}
    for event in out:
        if event["type"] == "TOOL_CALL_ARGS":
            arguments[event["toolCallId"]] = arguments.get(event["toolCallId"], "") + event["delta"]
    ids = [event["toolCallId"] for event in out if event["type"] == "TOOL_CALL_START"]
    assert len(ids) == len(set(ids)), "a toolCallId was started twice"
    streamed = [event["messageId"] for event in out if event["type"] == "TEXT_MESSAGE_START"]
    assert len(streamed) == len(set(streamed)), "a messageId was started twice"
