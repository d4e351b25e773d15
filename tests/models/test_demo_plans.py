"""The offline demo model adds a plan's several items in one reply, as parallel tool calls.

The demo's hints promise "plan a trip to Rome" (several todos); it, "plan my week" and "pack for
a beach holiday" each add several items at once, to the todo list rather than the cart.
"""

from __future__ import annotations

import pytest

from pyox_agents import ToolCallStarted, ToolResult
from pyox_agents.demo import demo_agents
from pyox_agents.models import Message
from pyox_agents.models.demo import decide
from tests.models.test_demo import add_item, add_todo

pytestmark = pytest.mark.anyio

REQUESTS = ["plan a trip to Rome", "Please plan my week!", "pack for a beach holiday",
            "can you plan a party?", "packing list for a ski trip"]


@pytest.mark.parametrize("request_text", REQUESTS)
def test_a_plan_is_several_add_calls_in_one_reply(request_text: str) -> None:
    reply = decide([Message.user(request_text)], [add_item.spec, add_todo.spec])
    assert not reply.text
    assert len(reply.tool_calls) >= 3
    assert {call.name for call in reply.tool_calls} == {"add_todo"}
    texts = [call.arguments["text"] for call in reply.tool_calls]
    assert len(set(texts)) == len(texts)


def test_a_trip_plan_names_the_destination() -> None:
    reply = decide([Message.user("plan a trip to Rome")], [add_todo.spec])
    texts = [call.arguments["text"] for call in reply.tool_calls]
    assert "book flights to Rome" in texts and "book a hotel in Rome" in texts


@pytest.mark.parametrize("request_text", ["plan a trip to Rome", "plan my week",
                                          "pack for a beach holiday"])
async def test_the_demo_agent_adds_a_plans_todos_in_one_step(request_text: str) -> None:
    agent = demo_agents()["demo"]
    events = [e async for e in agent.stream(request_text,
                                            state={"todos": [], "cart": [], "orders": []})]
    calls = [e for e in events if isinstance(e, ToolCallStarted)]
    assert len(calls) >= 3 and len({c.message_id for c in calls}) == 1  # one reply, in parallel
    final = events[-1].state  # type: ignore[union-attr]
    assert len(final["todos"]) == len(calls) and final["cart"] == []
    assert events[-1].answer.startswith("Added ")  # type: ignore[union-attr]


@pytest.mark.parametrize(("ticked", "said"), [
    (0, "No todo was ticked."), (2, "Cleared 2 completed todo(s).")])
async def test_the_demo_agent_says_what_its_tools_did_not_what_it_meant_to(
        ticked: int, said: str) -> None:
    """Rule: the offline model's words match its tools' results ("Cleared the list." while
    nothing was cleared misled the person), and a result the person reads names no internal
    id."""
    agent = demo_agents()["demo"]
    todos = [{"id": f"t{i}", "text": f"todo {i}", "done": i < ticked} for i in range(3)]
    result = await agent.arun("clear completed", state={"todos": todos, "cart": [],
                                                          "orders": []})
    assert result.answer == said
    added = await agent.arun("add walk the dog to my todos",
                             state={"todos": [], "cart": [], "orders": []})
    new_id = added.state["todos"][0]["id"]
    results = [str(e.result) for e in added.events if isinstance(e, ToolResult)]
    assert results and not any(new_id in text for text in results), results
