"""A tool's live events and `PredictState`, through a real server to the real `@ag-ui/client`
(1.0 and 0.0.59): the client accepts every event, builds the activity message from the
snapshot and its deltas, and sees `PredictState` just before the tool call it announces."""

from __future__ import annotations

from typing import Any

import pytest

from pyox_agents import Agent, RunContext, ToolCall, tool
from pyox_agents.models import ScriptedModel
from tests.e2e.test_ag_ui_e2e import CLIENTS, RunNode, Serve, drive, start


@pytest.fixture(params=CLIENTS)
def client(request: pytest.FixtureRequest) -> str:
    """The npm package of the AG-UI client that drives the run."""
    return str(request.param)


@tool(predict_state={"document": "text"})
def write_document(ctx: RunContext, text: str) -> str:
    """Write the whole document."""
    ctx.state["document"] = text
    return "written"


@tool
async def research(ctx: RunContext, topic: str) -> str:
    """Research a topic, showing the steps live."""
    ctx.progress("steps", {"done": [], "topic": topic})
    ctx.emit("status", {"phase": "reading"})
    ctx.cite("https://example.com/a", title="A")
    ctx.progress("steps", {"done": ["read"], "topic": topic})
    ctx.attach_file("data:text/plain;base64,aGk=", "text/plain", filename="notes.txt")
    ctx.progress("steps", {"done": ["read", "wrote"], "topic": topic})
    return "found"


def _agent() -> Agent:
    return Agent(model=ScriptedModel([
        ToolCall("research", {"topic": "tides"}, id="c-research"),
        ToolCall("write_document", {"text": "Tides rise twice a day."}, id="c-write"),
        "Done.",
    ]), tools=[research, write_document])


@pytest.mark.parametrize("variant", ["server", "standalone"])
def test_tool_events_and_predict_state_reach_both_clients(serve: Serve, run_node: RunNode,
                                                         variant: str, client: str) -> None:
    base = start(serve, variant, _agent())
    result = drive(run_node, base, {"initialState": {"document": ""}, "message": "write"},
                   client)
    events: list[dict[str, Any]] = result["events"]
    kinds = [e["type"] for e in events]
    customs = [(e["name"], e["value"]) for e in events if e["type"] == "CUSTOM"]
    assert ("status", {"phase": "reading"}) in customs
    assert ("source", {"sourceId": "c-research-source-1", "url": "https://example.com/a",
                       "title": "A", "toolCallId": "c-research"}) in customs
    assert [name for name, _ in customs].count("file") == 1
    start_write = next(i for i, e in enumerate(events)
                       if e["type"] == "TOOL_CALL_START" and e["toolCallId"] == "c-write")
    assert events[start_write - 1]["type"] == "CUSTOM"
    assert (events[start_write - 1]["name"], events[start_write - 1]["value"]) == (
        "PredictState", [{"state_key": "document", "tool": "write_document",
                          "tool_argument": "text"}])
    assert kinds.count("ACTIVITY_SNAPSHOT") == 1 and kinds.count("ACTIVITY_DELTA") == 2
    activity = [m for m in result["messages"] if m["role"] == "activity"]
    assert [(m["activityType"], m["content"]) for m in activity] == [
        ("steps", {"done": ["read", "wrote"], "topic": "tides"})]
    assert result["state"] == {"document": "Tides rise twice a day."}
