"""A subagent's approval answered by the real `ai` 7 client (seed 004): the approval request
lands on the subagent's nested tool part, `addToolApprovalResponse` answers it, and the
continuation resumes the subagent in place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, Message, RunContext, ToolCall, tool
from pyox_agents.models import FunctionModel
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore

Serve = Callable[[Any], str]
RunNode = Callable[..., dict[str, Any]]


def shop(paid: list[int]) -> Agent:
    @tool(approval=True)
    def pay(ctx: RunContext, amount: int) -> str:
        """Pay `amount`."""
        paid.append(amount)
        ctx.state["paid"] += amount
        return f"paid {amount}"

    def buyer_model(messages: list[Message], tools: list[Any]) -> Any:
        results = [m for m in messages if m.role == "tool"]
        return f"buyer saw: {results[-1].content}" if results else ToolCall("pay", {"amount": 3})

    def parent_model(messages: list[Message], tools: list[Any]) -> Any:
        results = [m for m in messages if m.role == "tool" and m.name == "buyer"]
        if results:
            return f"parent saw: {results[-1].content}"
        return ToolCall("buyer", {"task": "buy it"})

    buyer = Agent(FunctionModel(buyer_model), tools=[pay], name="buyer")
    return Agent(FunctionModel(parent_model), tools=[buyer.as_tool(state="write")])


@pytest.mark.parametrize("approved", [True, False])
def test_a_subagents_approval_is_answered_by_the_ai_7_client(
    serve: Serve, run_node: RunNode, approved: bool
) -> None:
    """Seed 004: the subagent's tool "runs again from its start once answered"; denied, the
    subagent's model reads "denied by a person". The client continues on its own."""
    paid: list[int] = []
    base = serve(create_app({"shop": shop(paid)}, store=MemoryStore()))
    out = run_node("aisdk_chat.mjs", f"{base}/agents/shop/ai-sdk", {
        "chatId": "chat-sub", "body": {"state": {"paid": 0}},
        "messages": [{"text": "buy it", "approvals": [{"approved": approved}]}]})
    assert out["chunkErrors"] == []
    assert out["status"] == "ready", out["error"]
    assert len(out["requests"]) == 2  # the question, then the continuation with the answer
    assert paid == ([3] if approved else [])
    thread = httpx.get(f"{base}/threads/chat-sub", timeout=10).json()
    assert thread["state"] == {"paid": 3 if approved else 0}
    (message,) = [m for m in out["messages"] if m["role"] == "assistant"]
    calls = {p.get("toolName", p["type"]): p for p in message["parts"] if "toolCallId" in p}
    seen = "paid 3" if approved else "denied by a person"
    assert (calls["tool-buyer"]["state"], calls["tool-buyer"]["output"]) == (
        "output-available", f"buyer saw: {seen}")
    assert calls["pay"]["type"] == "dynamic-tool"
    assert calls["pay"]["state"] == ("output-available" if approved else "output-denied")
    texts = "".join(p["text"] for p in message["parts"] if p["type"] == "text")
    assert texts == f"parent saw: buyer saw: {seen}"


@pytest.mark.parametrize("client", ["@ag-ui/client", "agui0059"])
@pytest.mark.parametrize("approved", [True, False])
def test_a_subagents_approval_is_answered_by_the_ag_ui_client(
    serve: Serve, run_node: RunNode, approved: bool, client: str
) -> None:
    """Seed 004, with the real @ag-ui/client (1.0, and 0.0.59 as CopilotKit bundles it): the
    parent's run ends with the subagent's interrupt, and `resume` answers it."""
    paid: list[int] = []
    base = serve(create_app({"shop": shop(paid)}, store=MemoryStore()))
    result = run_node("agui_run.mjs", f"{base}/agents/shop/ag-ui", {
        "client": client, "threadId": "t-sub", "initialState": {"paid": 0},
        "runs": [{"message": "buy it"},
                 {"resume": {"status": "resolved", "payload": {"approved": approved}}}]})
    first, second = result["runs"]
    for run in (first, second):
        assert run["resolved"], run["error"]
        assert run["warnings"] == []
    assert first["outcome"]["type"] == "interrupt" and first["state"] == {"paid": 0}
    (interrupt,) = first["pendingInterrupts"]
    assert interrupt["reason"] == "approval"
    assert interrupt["metadata"] == {"tool": "pay", "arguments": {"amount": 3}}
    assert second["outcome"]["type"] == "success" and second["pendingInterrupts"] == []
    assert paid == ([3] if approved else [])
    assert second["state"] == {"paid": 3 if approved else 0}
    seen = "paid 3" if approved else "denied by a person"
    answers = [m.get("content") for m in second["messages"] if m["role"] == "assistant"]
    assert answers[-1] == f"parent saw: buyer saw: {seen}"
