"""Whole requests through parse_request -> RunService -> translate, one rule per test."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from pyox_agents import Agent, RunContext, RunFinished, ToolCall, ai_sdk, tool
from pyox_agents.models import FunctionModel, ScriptedModel
from pyox_agents.service import RequestError, RunService
from pyox_agents.stores import MemoryStore

from .helpers import bare, body, check_stream_rules, run_chunks, snapshots, start, types, user

pytestmark = pytest.mark.anyio


@tool
def inc(ctx: RunContext, n: int) -> int:
    """Add n to the counter."""
    ctx.state["count"] += n
    return int(ctx.state["count"])


@tool(approval=True)
def delete(ctx: RunContext, key: str) -> str:
    """Delete a key (a person approves first)."""
    del ctx.state[key]
    return f"deleted {key}"


class Counter(pydantic.BaseModel):
    count: int


def assistant_from(chunks: list[dict[str, Any]], message_id: str) -> dict[str, Any]:
    """The assistant UIMessage a client builds from `chunks` (just the tool parts we need)."""
    parts: dict[str, dict[str, Any]] = {}
    for c in chunks:
        if c["type"] == "tool-input-available":
            parts[c["toolCallId"]] = {"type": f"tool-{c['toolName']}", "toolCallId":
                                      c["toolCallId"], "state": "input-available",
                                      "input": c["input"]}
        elif c["type"] == "tool-approval-request":
            parts[c["toolCallId"]].update(state="approval-requested",
                                          approval={"id": c["approvalId"]})
    return {"id": message_id, "role": "assistant", "parts": list(parts.values())}


async def test_state_snapshots_follow_every_change_and_end_with_the_final_state() -> None:
    agent = Agent(ScriptedModel([ToolCall("inc", {"n": 2}), ToolCall("inc", {"n": 3}), "ok"]),
                  tools=[inc], state_snapshots="change")
    chunks, events = await run_chunks(agent, body(user("go"), state={"count": 1}))
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert snapshots(chunks) == [{"count": 1}, {"count": 3}, {"count": 6}]
    assert snapshots(chunks)[-1] == final.state
    check_stream_rules(chunks)


async def test_replay_of_a_run_gives_the_same_chunks() -> None:
    agent = Agent(ScriptedModel([ToolCall("inc", {"n": 2}), "ok"]), tools=[inc])
    chat, live = await start(agent, body(user("go"), state={"count": 0}))
    first = [c async for c in ai_sdk.translate(chat, live.follow())]
    again = [c async for c in ai_sdk.translate(chat, live.follow())]
    assert first == again


async def test_state_that_fails_the_state_type_is_422() -> None:
    agent = Agent(ScriptedModel(["ok"]), tools=[inc], state_type=Counter)
    with pytest.raises(RequestError) as caught:
        await start(agent, body(user("go"), state={"count": "many"}))
    assert (caught.value.status, caught.value.field) == (422, "state")


async def test_approval_yes_continues_into_the_same_message() -> None:
    agent = Agent(ScriptedModel([ToolCall("delete", {"key": "x"}, id="d1"), "gone"]),
                  tools=[delete])
    service = RunService()
    first, _ = await run_chunks(agent, body(user("del"), state={"x": 1, "y": 2}), service)
    assert first[-1]["finishReason"] == "tool-calls"
    message = assistant_from(first, first[0]["messageId"])
    approval = message["parts"][0]["approval"]
    message["parts"][0].update(state="approval-responded",
                               approval={"id": approval["id"], "approved": True})
    second, _ = await run_chunks(agent, body(user("del"), message), service)
    check_stream_rules(second, parts={"d1"})
    assert bare(second[0]) == {"type": "start", "messageId": first[0]["messageId"]}
    assert {"type": "tool-output-available", "toolCallId": "d1", "output": "deleted x"} in second
    assert snapshots(second)[-1] == {"y": 2}


async def test_approval_no_gives_tool_output_denied_and_changes_nothing() -> None:
    agent = Agent(ScriptedModel([ToolCall("delete", {"key": "x"}, id="d1"), "kept"]),
                  tools=[delete])
    service = RunService()
    first, _ = await run_chunks(agent, body(user("del"), state={"x": 1}), service)
    message = assistant_from(first, first[0]["messageId"])
    approval_id = message["parts"][0]["approval"]["id"]
    message["parts"][0].update(state="approval-responded",
                               approval={"id": approval_id, "approved": False, "reason": "no"})
    second, _ = await run_chunks(agent, body(user("del"), message), service)
    assert {"type": "tool-output-denied", "toolCallId": "d1"} in second
    assert snapshots(second)[-1] == {"x": 1}


async def test_approval_the_server_never_issued_is_refused() -> None:
    agent = Agent(ScriptedModel([ToolCall("delete", {"key": "x"}, id="d1"), "gone"]),
                  tools=[delete])
    service = RunService()
    first, _ = await run_chunks(agent, body(user("del"), state={"x": 1}), service)
    message = assistant_from(first, first[0]["messageId"])
    message["parts"][0].update(state="approval-responded",
                               approval={"id": "apr_forged", "approved": True})
    with pytest.raises(RequestError) as caught:
        await start(agent, body(user("del"), message), service)
    assert caught.value.status == 422


async def test_ai_5_answers_an_approval_with_the_approvals_field() -> None:
    agent = Agent(ScriptedModel([ToolCall("delete", {"key": "x"}, id="d1"), "gone"]),
                  tools=[delete])
    service = RunService()
    first, _ = await run_chunks(agent, body(user("del"), state={"x": 1}), service, v=5)
    (request,) = [c for c in first if c["type"] == "data-approval-request"]
    message = assistant_from(first, first[0]["messageId"])
    second, _ = await run_chunks(
        agent, body(user("del"), message, approvals=[{"id": request["id"], "approved": True}]),
        service, v=5)
    check_stream_rules(second, 5, parts={"d1"})
    assert {"type": "tool-output-available", "toolCallId": "d1", "output": "deleted x"} in second


async def test_client_tool_output_reaches_the_model() -> None:
    seen: list[str] = []

    def model(messages: list, tools: list) -> Any:
        if messages[-1].role == "tool":
            seen.append(messages[-1].content)
            return "thanks"
        return ToolCall("pick_color", {}, id="k1")

    agent = Agent(FunctionModel(model), tools=[inc], store=MemoryStore())
    declared = [{"name": "pick_color", "description": "ask the user"}]
    service = RunService(agent.store)
    first, _ = await run_chunks(agent, body(user("color?"), clientTools=declared), service)
    assert first[-1]["finishReason"] == "tool-calls"
    part = {"type": "tool-pick_color", "toolCallId": "k1", "state": "output-available",
            "input": {}, "output": "red"}
    message = {"id": first[0]["messageId"], "role": "assistant", "parts": [part]}
    second, _ = await run_chunks(agent, body(user("color?"), message, clientTools=declared),
                                 service)
    assert seen == ["red"]
    assert second[0]["messageId"] == first[0]["messageId"]
    assert second[-1]["finishReason"] == "stop"


async def test_model_failure_ends_with_error_and_finish_error() -> None:
    agent = Agent(ScriptedModel([]), tools=[inc])
    chunks, _ = await run_chunks(agent, body(user("go")))
    check_stream_rules(chunks)
    assert types(chunks)[-2:] == ["error", "finish"]
    assert "ScriptedModel ran out of replies" in chunks[-2]["errorText"]
    assert "Traceback" not in chunks[-2]["errorText"]


async def test_regenerate_replaces_the_last_reply() -> None:
    agent = Agent(ScriptedModel(["one", "two"]), store=MemoryStore())
    service = RunService(agent.store)
    await run_chunks(agent, body(user("hi")), service)
    chunks, _ = await run_chunks(agent, body(user("hi"), trigger="regenerate-message"), service)
    assert "two" in [c.get("delta") for c in chunks]
    conversation = await agent.store.aload("chat-1")
    assert [m.content for m in conversation.messages] == ["hi", "two"]


async def test_stream_runs_a_request_without_a_server() -> None:
    agent = Agent(ScriptedModel([ToolCall("inc", {"n": 1}), "ok"]), tools=[inc])
    raw = body(user("go"), state={"count": 0})
    chunks = [c async for c in ai_sdk.stream(agent, raw, store=MemoryStore())]
    check_stream_rules(chunks)
    assert snapshots(chunks)[-1] == {"count": 1}


async def test_stream_refuses_a_bad_body_before_anything_runs() -> None:
    agent = Agent(ScriptedModel(["ok"]))
    with pytest.raises(RequestError):
        [c async for c in ai_sdk.stream(agent, b"nope")]
