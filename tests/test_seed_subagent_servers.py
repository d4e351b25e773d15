"""A subagent's approval through both web endpoints, on a real uvicorn server: the parent's
AG-UI interrupt and AI SDK approval request show the subagent's request, and answering it the
way each client does resumes the subagent in place (seed 004)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, Message, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore, SQLiteStore
from tests.ag_ui.servers import post_run, serving
from tests.ag_ui.verify import check_stream
from tests.ai_sdk.helpers import check_stream_rules

pytestmark = pytest.mark.anyio


def shop(paid: list[int]) -> Agent:
    """A parent whose `buyer` subagent (state="write") calls `pay`, which needs approval."""

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

    def parent_model(messages: list[Message], tools: list[Any]) -> Any:
        results = [m for m in messages if m.role == "tool" and m.name == "buyer"]
        if not results:
            return ToolCall("buyer", {"task": "buy it"}, id="b1")
        return f"parent saw: {results[-1].content}"

    buyer = Agent(FunctionModel(buyer_model), tools=[pay], name="buyer")
    return Agent(FunctionModel(parent_model), tools=[buyer.as_tool(state="write")])


def make_store(kind: str, tmp_path: Path) -> Any:
    return MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "s.db")


# -- AG-UI ---------------------------------------------------------------------------------------


def ag_ui_body(**fields: Any) -> dict[str, Any]:
    """A RunAgentInput as @ag-ui/client 1.0 sends it (it declares protocolVersion 1.0)."""
    return {"threadId": "t1", "runId": "r1", "protocolVersion": "1.0", "state": {"paid": 0},
            "messages": [{"id": "u1", "role": "user", "content": "buy"}], **fields}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("approved", [True, False])
async def test_ag_ui_a_subagents_approval_is_the_parents_interrupt(
    kind: str, approved: bool, tmp_path: Path
) -> None:
    """Seed 004: a tool that "stops to wait for a person ... runs again from its start once
    answered"; inside a subagent too: RUN_FINISHED carries the interrupt, and
    `RunAgentInput.resume` answers it."""
    paid: list[int] = []
    app = create_app({"shop": shop(paid)}, store=make_store(kind, tmp_path))
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        response, first = await post_run(http, "/agents/shop/ag-ui", ag_ui_body())
        assert response.status_code == 200, response.text
        check_stream(first, state={"paid": 0}, thread_id="t1", run_id="r1")
        outcome = first[-1]["outcome"]
        assert (first[-1]["type"], outcome["type"]) == ("RUN_FINISHED", "interrupt")
        (interrupt,) = outcome["interrupts"]
        assert interrupt["toolCallId"] == "pay1"
        assert interrupt["metadata"] == {"tool": "pay", "arguments": {"amount": 3}}
        assert paid == []
        resume = [{"interruptId": interrupt["id"], "status": "resolved",
                   "payload": {"approved": approved}}]
        response, second = await post_run(http, "/agents/shop/ag-ui",
                                          ag_ui_body(runId="r2", resume=resume, state=None))
        assert response.status_code == 200, response.text
    replayed = check_stream(second, state={"paid": 0}, thread_id="t1", run_id="r2")
    assert replayed.state == {"paid": 3 if approved else 0}
    last = second[-1]
    assert (last["type"], last["outcome"]["type"]) == ("RUN_FINISHED", "success")
    if approved:
        assert paid == [3]
        assert last["result"] == "parent saw: buyer saw: paid 3"
        deltas = [f["delta"] for f in second if f["type"] == "STATE_DELTA"]
        assert deltas == [[{"op": "replace", "path": "/paid", "value": 3}]]
    else:
        assert paid == []
        assert last["result"] == "parent saw: buyer saw: denied by a person"
        assert not [f for f in second if f["type"] == "STATE_DELTA"]


# -- AI SDK --------------------------------------------------------------------------------------


def ai_sdk_body(*messages: dict[str, Any], **extra: Any) -> bytes:
    return json.dumps({"id": "chat-1", "trigger": "submit-message", "messages": list(messages),
                       **extra}).encode()


USER = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "buy"}]}


def chunks_of(text: str) -> list[dict[str, Any]]:
    datas = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
    assert datas[-1] == "[DONE]"
    return [json.loads(d) for d in datas[:-1]]


def assistant_from(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant UIMessage the `ai` client builds from `chunks` (its tool parts)."""
    parts: dict[str, dict[str, Any]] = {}
    for c in chunks:
        if c["type"] == "tool-input-available":
            kind = "dynamic-tool" if c.get("dynamic") else f"tool-{c['toolName']}"
            parts[c["toolCallId"]] = {"type": kind, "toolName": c["toolName"],
                                      "toolCallId": c["toolCallId"], "state": "input-available",
                                      "input": c["input"],
                                      **({"providerExecuted": True}
                                         if c.get("providerExecuted") else {})}
        elif c["type"] == "tool-approval-request":
            parts[c["toolCallId"]].update(state="approval-requested",
                                          approval={"id": c["approvalId"]})
    return {"id": chunks[0]["messageId"], "role": "assistant", "parts": list(parts.values())}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("approved", [True, False])
async def test_ai_sdk_a_subagents_approval_is_the_parents_approval_request(
    kind: str, approved: bool, tmp_path: Path
) -> None:
    """Seed 004: a subagent's tool that waits for a person waits for the parent's client: the
    stream ends with a `tool-approval-request` for it, and the next request's
    `approval-responded` part answers it."""
    paid: list[int] = []
    app = create_app({"shop": shop(paid)}, store=make_store(kind, tmp_path))
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        response = await http.post("/agents/shop/ai-sdk",
                                   content=ai_sdk_body(USER, state={"paid": 0}))
        assert response.status_code == 200, response.text
        first = chunks_of(response.text)
        check_stream_rules(first)
        requests = [c for c in first if c["type"] == "tool-approval-request"]
        # the subagent's call, then the parent's call that waits on it: one approval for both
        assert [c["toolCallId"] for c in requests] == ["pay1", "b1"]
        assert len({c["approvalId"] for c in requests}) == 1
        request = requests[0]
        assert first[-1]["type"] == "finish" and first[-1]["finishReason"] == "tool-calls"
        assert paid == []
        message = assistant_from(first)
        for part in message["parts"]:  # as addToolApprovalResponse does: each part it names
            if part.get("approval", {}).get("id") == request["approvalId"]:
                part.update(state="approval-responded",
                            approval={"id": request["approvalId"], "approved": approved})
        response = await http.post("/agents/shop/ai-sdk", content=ai_sdk_body(USER, message))
        assert response.status_code == 200, response.text
        second = chunks_of(response.text)
    check_stream_rules(second, parts={"b1", "pay1"})
    assert second[0]["type"] == "start" and second[0]["messageId"] == first[0]["messageId"]
    outputs = {c["toolCallId"]: c for c in second if c["type"].startswith("tool-output")}
    states = [c["data"] for c in second if c["type"] == "data-state"]
    if approved:
        assert paid == [3]
        assert outputs["pay1"]["output"] == "paid 3"
        assert outputs["b1"]["output"] == "buyer saw: paid 3"
        assert states[-1] == {"paid": 3}
    else:
        assert paid == []
        assert outputs["pay1"]["type"] == "tool-output-denied"
        assert outputs["b1"]["type"] == "tool-output-available"
        assert outputs["b1"]["output"] == "buyer saw: denied by a person"
        assert states[-1] == {"paid": 0}
    assert second[-1]["type"] == "finish"
