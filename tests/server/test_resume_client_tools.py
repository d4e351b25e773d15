"""A run resumed with a person's answer keeps the page's own tools (AG-UI `tools`, the AI SDK's
client tools), its context and forwarded props, and takes the page's results sent with the
answer.

An outside tester found the resumed run had none of them: after an approval, the model was not
offered the page's tools, and a call of one (made beside the approved one, or after it) got
"there is no tool 'pick_color'"; the page's own result, sent with the answer, was dropped.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.state.messages import Message
from pyox_agents.stores import MemoryStore
from tests.ag_ui.servers import post_run

pytestmark = pytest.mark.anyio

PAGE_TOOLS = [{"name": "pick_color", "description": "The person picks a colour on the page.",
               "parameters": {"type": "object", "properties": {}}}]


@tool(approval=True)
def checkout(ctx: RunContext) -> str:
    """Pay (a person approves first)."""
    return f"paid for {ctx.forwarded_props['shop']}"


def model(messages: list[Message], tools: Any) -> Any:
    """"both": checkout and the page's pick_color at once; "buy": checkout, then pick_color
    when it is offered; then what the tools said."""
    offered = {t.name for t in tools}
    asked = next(m.content for m in reversed(messages) if m.role == "user")
    results = [str(m.content) for m in messages if m.role == "tool"]
    if messages[-1].role == "user":
        return [ToolCall("checkout", {}), ToolCall("pick_color", {})] if asked == "both" \
            else ToolCall("checkout", {})
    if len(results) == 1 and "pick_color" in offered:
        return ToolCall("pick_color", {})
    return f"done: {results}"


def served() -> httpx.AsyncClient:
    app = create_app({"shop": Agent(FunctionModel(model), tools=[checkout])}, store=MemoryStore())
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


async def run(http: httpx.AsyncClient, messages: list[dict[str, Any]],
              **fields: Any) -> list[dict[str, Any]]:
    response, events = await post_run(http, "/agents/shop/ag-ui", {
        "threadId": "t", "runId": "r", "state": {}, "context": [], "tools": PAGE_TOOLS,
        "forwardedProps": {"shop": "the corner shop"}, "messages": messages, **fields})
    assert response.status_code == 200, response.text
    return events


def snapshot(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = [e for e in events
                                   if e["type"] == "MESSAGES_SNAPSHOT"][-1]["messages"]
    return found


def approved(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    (interrupt,) = events[-1]["outcome"]["interrupts"]
    return [{"interruptId": interrupt["id"], "status": "resolved",
             "payload": {"approved": True}}]


def page_result(events: list[dict[str, Any]]) -> dict[str, Any]:
    call = next(c for m in snapshot(events) for c in m.get("toolCalls") or ()
                if c["function"]["name"] == "pick_color")
    return {"id": "tr1", "role": "tool", "toolCallId": call["id"], "content": "red"}


async def said(http: httpx.AsyncClient) -> list[tuple[str, str]]:
    view = (await http.get("/threads/t")).json()
    return [(m["role"], m["content"]) for m in view["messages"]]


async def test_a_page_tool_called_after_an_approval_is_handed_to_the_page() -> None:
    """Rule: the resumed run offers the page's tools, hands their calls over, and the page's
    result is read; the approved tool reads the forwarded props."""
    async with served() as http:
        first = await run(http, [{"id": "u1", "role": "user", "content": "buy"}])
        resumed = await run(http, snapshot(first), resume=approved(first))
        assert resumed[-1]["outcome"]["type"] == "success", resumed[-1]  # the page's turn
        await run(http, [*snapshot(resumed), page_result(resumed)])
        assert (await said(http))[-1] == (
            "assistant", "done: ['paid for the corner shop', 'red']")


async def test_a_page_tools_result_sent_with_the_approval_is_read() -> None:
    """Rule: the page's result for its call made beside the approved one, sent with the
    answer, is that call's result (it was dropped, and the call answered "there is no
    tool")."""
    async with served() as http:
        first = await run(http, [{"id": "u1", "role": "user", "content": "both"}])
        done = await run(http, [*snapshot(first), page_result(first)],
                         resume=approved(first))
        assert done[-1]["outcome"]["type"] == "success", done[-1]
        assert (await said(http))[-1] == (
            "assistant", "done: ['paid for the corner shop', 'red']")
