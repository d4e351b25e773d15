"""Runtime events survive JSON: what a process following another's run reads back is equal."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents import Agent, RunContext, RuntimeEvent, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.service._event_json import event_from_json, event_to_json

pytestmark = pytest.mark.anyio


@tool
def add(ctx: RunContext, text: str) -> str:
    """Add."""
    ctx.state["items"].append(text)
    return "ok"


@tool(approval=True)
def pay(amount: int) -> str:
    """Pay."""
    return "paid"


def round_trip(event: RuntimeEvent) -> RuntimeEvent:
    return event_from_json(json.loads(json.dumps(event_to_json(event))))


async def test_every_event_of_a_run_round_trips() -> None:
    sub = Agent(ScriptedModel([ToolCall("add", {"text": "sub"}), "sub done"]), tools=[add],
                name="helper").as_tool(state="write")
    script: list[Any] = [[ToolCall("add", {"text": "a"}), ToolCall("helper", {"task": "t"})],
                         ToolCall("pay", {"amount": 3})]
    agent = Agent(ScriptedModel(script), tools=[add, sub, pay])
    events = [e async for e in agent.stream("go", state={"items": []})]
    assert {type(e).__name__ for e in events} >= {
        "RunStarted", "ToolResult", "StateChanged", "SubagentStarted", "SubagentFinished",
        "ApprovalRequested", "RunFinished"}
    for event in events:
        assert round_trip(event) == event


async def test_a_failed_run_round_trips() -> None:
    events = [e async for e in Agent(ScriptedModel([])).stream("go")]
    assert round_trip(events[-1]) == events[-1]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=8), min_size=1, max_size=4))
def test_state_changes_of_any_items_round_trip(items: list[str]) -> None:
    import anyio

    script = [ToolCall("add", {"text": item}) for item in items]
    agent = Agent(ScriptedModel([*script, "done"]), tools=[add])

    async def collect() -> list[RuntimeEvent]:
        return [e async for e in agent.stream("go", state={"items": []})]

    for event in anyio.run(collect):
        assert round_trip(event) == event


def test_an_unknown_type_is_refused() -> None:
    with pytest.raises(ValueError, match="not a runtime event"):
        event_from_json({"type": "Nope"})
