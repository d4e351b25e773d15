"""A request that brings its thread nothing new is refused (409), not run again: the thread gets
no second, identical answer (DESIGN.md, "What a request's messages mean").

Clients send such a request when they retry one that was answered (a frontend tool's result
sent again) or from a tab that missed what followed. An outside tester found the run answered
again, appending a duplicate reply, over AG-UI and the AI SDK. A request that changes the state
is not "nothing": a client that runs the agent on the person's edit still gets its run.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from pyox_agents import Agent
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.state.messages import Message
from pyox_agents.stores import MemoryStore

pytestmark = pytest.mark.anyio


def model(messages: list[Message], tools: Any) -> Any:
    """Asks the page where it is, then says what the page answered (and the state's city)."""
    last = messages[-1]
    if last.role == "user":
        return ToolCall("get_location", {})
    return f"you are in {last.content}"


def served() -> httpx.AsyncClient:
    app = create_app({"geo": Agent(FunctionModel(model))}, store=MemoryStore())
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


def events(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    return [json.loads(line[5:]) for line in response.text.splitlines()
            if line.startswith("data: {")]


async def ag_ui_answered(http: httpx.AsyncClient) -> dict[str, Any]:
    """A thread whose frontend tool call the page answered; the body the page sent then."""
    body: dict[str, Any] = {
        "threadId": "t", "runId": "r1", "state": {"city": None}, "context": [],
        "forwardedProps": {}, "messages": [{"id": "u1", "role": "user", "content": "where?"}],
        "tools": [{"name": "get_location", "description": "where the person is",
                   "parameters": {"type": "object", "properties": {}}}]}
    first = events(await http.post("/agents/geo/ag-ui", json=body))
    messages = [e for e in first if e["type"] == "MESSAGES_SNAPSHOT"][-1]["messages"]
    (call,) = messages[-1]["toolCalls"]
    body = {**body, "runId": "r2", "messages": [
        *messages, {"id": "tr1", "role": "tool", "toolCallId": call["id"], "content": "Oslo"}]}
    events(await http.post("/agents/geo/ag-ui", json=body))
    return body


async def ai_sdk_answered(http: httpx.AsyncClient) -> dict[str, Any]:
    tools = [{"name": "get_location", "description": "where the person is",
              "inputSchema": {"type": "object", "properties": {}}}]
    body: dict[str, Any] = {"id": "t", "trigger": "submit-message", "clientTools": tools,
                            "messages": [{"id": "u1", "role": "user",
                                          "parts": [{"type": "text", "text": "where?"}]}]}
    events(await http.post("/agents/geo/ai-sdk", json=body))
    messages = (await http.get("/agents/geo/ai-sdk/t/messages")).json()
    for part in messages[-1]["parts"]:
        if part["type"] == "tool-get_location":
            part.update(state="output-available", output="Oslo")
    body = {**body, "messages": messages}
    events(await http.post("/agents/geo/ai-sdk", json=body))
    return body


ANSWERED = {"ag-ui": ag_ui_answered, "ai-sdk": ai_sdk_answered}


async def said(http: httpx.AsyncClient) -> list[tuple[str, str]]:
    view = (await http.get("/threads/t")).json()
    return [(m["role"], m["content"]) for m in view["messages"]]


@pytest.mark.parametrize("protocol", list(ANSWERED))
async def test_the_same_request_sent_again_is_refused_and_changes_nothing(protocol: str) -> None:
    """Rule: a request with no new message, answer or awaited tool result, and the state as
    kept, is a 409 that says so; the thread has one answer, not two."""
    async with served() as http:
        body = await ANSWERED[protocol](http)
        before = await said(http)
        assert before[-1] == ("assistant", "you are in Oslo")
        again = await http.post(f"/agents/geo/{protocol}", json=body)
        assert again.status_code == 409, again.text
        text = again.json()["error"] if protocol == "ag-ui" else again.text
        assert "nothing new to answer" in text, text
        assert await said(http) == before


async def test_a_request_that_changes_the_state_is_run() -> None:
    """Rule: the person's edit is something new: a client that runs the agent after changing
    the state (no new message) gets its run."""
    async with served() as http:
        body = await ag_ui_answered(http)
        before = await said(http)
        edited = {**body, "runId": "r3", "state": {"city": "Bergen"}}
        finished = events(await http.post("/agents/geo/ag-ui", json=edited))[-1]
        assert finished["type"] == "RUN_FINISHED"
        assert (await said(http))[:len(before)] == before
        assert (await http.get("/threads/t")).json()["state"] == {"city": "Bergen"}
