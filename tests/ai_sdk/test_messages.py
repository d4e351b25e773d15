"""`GET /agents/{name}/ai-sdk/{chat_id}/messages`: the chat as `UIMessage[]`, with the ids that
were streamed, tool parts in their final states and the `data-state` part, scoped to the caller
(a real uvicorn server on 127.0.0.1)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from pyox_agents import Agent, RunContext, ToolCall, tool
from pyox_agents.models import ScriptedModel
from pyox_agents.server import bearer_tokens, create_app
from pyox_agents.stores import MemoryStore

from .helpers import body, user

Serve = Callable[[Any], str]
URL = "/agents/counter/ai-sdk"


@tool
def inc(ctx: RunContext, n: int) -> int:
    """Add n to the counter."""
    ctx.state["count"] += n
    return int(ctx.state["count"])


@tool
def boom() -> str:
    """Fail."""
    raise RuntimeError("no luck")


@tool(approval=True)
def reset(ctx: RunContext) -> str:
    """Set the counter to 0 (a person approves first)."""
    ctx.state["count"] = 0
    return "reset"


def post(base: str, raw: bytes, **headers: str) -> list[dict[str, Any]]:
    response = httpx.post(base + URL, content=raw, headers=headers, timeout=20)
    assert response.status_code == 200, response.text
    datas = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    return [json.loads(d) for d in datas[:-1]]


def messages(base: str, chat_id: str = "chat-1", **headers: str) -> httpx.Response:
    return httpx.get(f"{base}{URL}/{chat_id}/messages", headers=headers, timeout=10)


def app(script: list[Any], **kwargs: Any) -> Any:
    agent = Agent(ScriptedModel(script), tools=[inc, boom, reset])
    return create_app({"counter": agent}, store=MemoryStore(), **kwargs)


def test_messages_keep_the_streamed_id_final_tool_parts_and_the_state(
        live_server: Serve) -> None:
    base = live_server(app([[ToolCall("inc", {"n": 2}, id="c1"), ToolCall("boom", {}, id="c2")],
                            "Done."]))
    chunks = post(base, body(user("count"), state={"count": 1}))
    got = messages(base)
    assert got.status_code == 200
    first, second = got.json()
    assert first["role"] == "user" and first["parts"] == [{"type": "text", "text": "count"}]
    assert second["id"] == chunks[0]["messageId"] and second["role"] == "assistant"
    parts = second["parts"]
    assert [p["type"] for p in parts] == ["step-start", "tool-inc", "tool-boom", "step-start",
                                          "text", "data-state", "data-state-version"]
    assert parts[1] == {"type": "tool-inc", "toolCallId": "c1", "state": "output-available",
                        "input": {"n": 2}, "output": 3}
    assert parts[2]["state"] == "output-error" and parts[2]["errorText"]
    assert parts[4] == {"type": "text", "text": "Done.", "state": "done"}
    assert parts[5] == {"type": "data-state", "id": "state", "data": {"count": 3}}
    # its number, as the stream's last one named it: the page's next request names it
    versions = [c["data"] for c in chunks if c["type"] == "data-state-version"]
    assert parts[6] == {"type": "data-state-version", "id": "state-version",
                        "data": versions[-1]}


def test_a_call_waiting_for_a_person_is_approval_requested_with_the_streamed_id(
        live_server: Serve) -> None:
    base = live_server(app([ToolCall("reset", {}, id="c1"), "Reset."]))
    chunks = post(base, body(user("reset"), state={"count": 4}))
    (request,) = [c for c in chunks if c["type"] == "tool-approval-request"]
    (_, assistant) = messages(base).json()
    (part,) = [p for p in assistant["parts"] if p["type"] == "tool-reset"]
    assert part["state"] == "approval-requested"
    assert part["approval"] == {"id": request["approvalId"]}


def test_a_continuation_after_an_approval_stays_one_message(live_server: Serve) -> None:
    base = live_server(app([ToolCall("reset", {}, id="c1"), "Reset."]))
    first = post(base, body(user("reset"), state={"count": 4}))
    (_, assistant) = messages(base).json()
    for part in assistant["parts"]:
        if part["type"] == "tool-reset":
            part.update(state="approval-responded",
                        approval={**part["approval"], "approved": True})
    post(base, body(user("reset"), assistant))
    got = messages(base).json()
    assert [m["role"] for m in got] == ["user", "assistant"]
    assert got[1]["id"] == first[0]["messageId"]
    (part,) = [p for p in got[1]["parts"] if p["type"] == "tool-reset"]
    assert part["state"] == "output-available" and part["output"] == "reset"
    (state,) = [p for p in got[1]["parts"] if p["type"] == "data-state"]
    assert state["data"] == {"count": 0}


def test_a_regenerated_reply_replaces_the_old_one(live_server: Serve) -> None:
    base = live_server(app(["First.", "Second."]))
    post(base, body(user("hi"), state={"count": 0}))
    (_, old) = messages(base).json()
    again = post(base, body(user("hi"), trigger="regenerate-message", state={"count": 0}))
    got = messages(base).json()
    assert [m["role"] for m in got] == ["user", "assistant"]
    assert got[1]["id"] == again[0]["messageId"] != old["id"]
    assert [p["text"] for p in got[1]["parts"] if p["type"] == "text"] == ["Second."]


def test_messages_are_scoped_to_the_caller(live_server: Serve) -> None:
    base = live_server(app(["Hi."], auth=bearer_tokens({"ann": "ann", "bob": "bob"})))
    post(base, body(user("hi")), authorization="Bearer ann")
    assert messages(base, authorization="Bearer ann").status_code == 200
    other = messages(base, authorization="Bearer bob")
    assert other.status_code == 404
    assert messages(base).status_code == 401


def test_an_unknown_chat_is_404_naming_it(live_server: Serve) -> None:
    base = live_server(app(["Hi."]))
    got = messages(base, "nope")
    assert got.status_code == 404 and "'nope'" in got.text


def test_an_unknown_ai_major_is_400_naming_the_choices(live_server: Serve) -> None:
    base = live_server(app(["Hi."]))
    post(base, body(user("hi")))
    got = httpx.get(f"{base}{URL}/chat-1/messages?v=abc", timeout=10)
    assert got.status_code == 400 and "must be 5, 6 or 7, got 'abc'" in got.text


def test_ai_5_sees_a_waiting_approval_as_the_data_part_it_was_streamed(
        live_server: Serve) -> None:
    """ai 5 has no approval parts: it answers the `data-approval-request` with `approvals`."""
    base = live_server(app([ToolCall("reset", {}, id="c1"), "Reset."]))
    chunks = post(base, body(user("reset"), state={"count": 4}), **{"x-ai-sdk-version": "5"})
    (streamed,) = [c for c in chunks if c["type"] == "data-approval-request"]
    (_, assistant) = messages(base, **{"x-ai-sdk-version": "5"}).json()
    (part,) = [p for p in assistant["parts"] if p["type"] == "tool-reset"]
    assert part["state"] == "input-available" and "approval" not in part
    (kept,) = [p for p in assistant["parts"] if p["type"] == "data-approval-request"]
    assert kept == streamed


def test_a_history_the_first_request_brought_is_given_back_whole(live_server: Serve) -> None:
    """Rule: a reload gives back every message of the chat: the assistant text and tool calls
    a client brought with its first request (a chat moved from elsewhere) were left out, only
    its user messages kept, so the reloaded page lost them (and the thread's own view,
    GET /threads/{id}, held them)."""
    base = live_server(app(["Done."]))
    brought = [
        user("hi"),
        {"id": "a1", "role": "assistant", "parts": [
            {"type": "step-start"}, {"type": "text", "text": "Let me count."},
            {"type": "tool-inc", "toolCallId": "k1", "state": "output-available",
             "input": {"n": 2}, "output": 2},
            {"type": "step-start"}, {"type": "text", "text": "It is 2."}]},
        user("and now?", "u2"),
    ]
    post(base, body(*brought, state={"count": 2}))
    got = messages(base).json()
    assert [m["role"] for m in got] == ["user", "assistant", "user", "assistant"]
    assert [m["id"] for m in got if m["role"] == "user"] == ["u1", "u2"]
    steps = got[1]["parts"]
    assert [p["type"] for p in steps] == ["step-start", "text", "tool-inc", "step-start", "text"]
    assert steps[2] == {"type": "tool-inc", "toolCallId": "k1", "state": "output-available",
                        "input": {"n": 2}, "output": 2}
    assert [p["text"] for p in steps if p["type"] == "text"] == ["Let me count.", "It is 2."]
    kept = httpx.get(f"{base}/threads/chat-1", timeout=10).json()["messages"]
    assert got[1]["id"] == kept[1]["id"]  # the id the thread's own view gives it
