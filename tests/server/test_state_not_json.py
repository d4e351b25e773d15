"""A request's state that is not JSON is refused the same way on a new thread and on one whose
state the server keeps, by an agent with a `state_type` or without: a 422 naming `state`, and
the thread as it was.

An outside tester found the kept thread's path answered 500 (the merge onto the kept state met
the bad value first, and nothing turned that into an answer), and let a state nested past
`MAX_DEPTH` through where part of it matched the kept one. Another found that an agent with a
`state_type` let a NaN under a key its model does not declare through (the model dropped it),
so a server that keeps state started the run and failed it ("incomplete") when it kept the
client's state.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pydantic
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.state.frozen import MAX_DEPTH
from pyox_agents.stores import MemoryStore

pytestmark = pytest.mark.anyio


@tool
def add(ctx: RunContext, text: str) -> str:
    """Add an item."""
    ctx.state["items"].append(text)
    return "added"


def nested(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels - 1):
        value = [value]
    return value


BAD = {
    "NaN": {"items": ["a", float("nan")]},
    "-Infinity": {"items": ["a", {"total": float("-inf")}]},
    # the kept state's own list, with a value too deep in it: "a" matches the kept item
    "too deep": {"items": ["a", nested(MAX_DEPTH)]},
    # under a key a `state_type` does not declare (its model would drop the key)
    "Infinity aside": {"items": ["a"], "filter": {"since": float("inf")}},
}


class Items(pydantic.BaseModel):
    items: list[Any] = []


def request(protocol: str, thread: str, state: Any, text: str) -> tuple[str, bytes]:
    if protocol == "ag-ui":
        body: dict[str, Any] = {
            "threadId": thread, "runId": text, "state": state, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [{"id": text, "role": "user", "content": text}]}
    else:
        body = {"id": thread, "trigger": "submit-message", "state": state,
                "messages": [{"id": text, "role": "user", "parts": [{"type": "text",
                                                                    "text": text}]}]}
    return f"/agents/todo/{protocol}", json.dumps(body).encode()  # NaN as JSON's NaN literal


async def thread_now(http: httpx.AsyncClient, thread: str) -> tuple[Any, int]:
    view = (await http.get(f"/threads/{thread}")).json()
    return view.get("state"), len(view.get("messages", []))


@pytest.mark.parametrize("protocol", ["ag-ui", "ai-sdk"])
@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize("thread_is", ["new", "kept"])
@pytest.mark.parametrize("typed", [False, True], ids=["untyped", "state_type"])
async def test_a_state_that_is_not_json_is_a_422_naming_state_and_changes_nothing(
        protocol: str, bad: str, thread_is: str, typed: bool) -> None:
    """Rule: every bad input gets a clear error that says what was wrong; nothing is written
    (the state is JSON before a `state_type` validates it, as seed 004 has it)."""
    agent = Agent(ScriptedModel([ToolCall("add", {"text": "a"}), "done"] * 3), tools=[add],
                  state_type=Items if typed else None)
    app = create_app({"todo": agent}, store=MemoryStore())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        if thread_is == "kept":
            path, body = request(protocol, "t1", {"items": []}, "first")
            assert (await http.post(path, content=body)).status_code == 200
        before = await thread_now(http, "t1")
        path, body = request(protocol, "t1", BAD[bad], "second")
        answer = await http.post(path, content=body)
        assert answer.status_code == 422, answer.text
        if protocol == "ag-ui":  # {error, field}; the AI SDK's client shows a text body
            assert answer.json()["field"] == "state", answer.json()
        said = answer.json()["error"] if protocol == "ag-ui" else answer.text
        assert said.startswith('state["filter"]' if bad == "Infinity aside" else 'state["items"]'
                               ) and "JSON" in said, said
        assert await thread_now(http, "t1") == before


async def test_forwarded_props_that_are_not_json_are_a_422_naming_them() -> None:
    """Rule: the error names the field that was wrong: it named `state` for a NaN in
    `forwardedProps`."""
    agent = Agent(ScriptedModel(["done"]), tools=[add])
    app = create_app({"todo": agent}, store=MemoryStore())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        path, body = request("ag-ui", "t1", {"items": []}, "first")
        sent = json.loads(body)
        sent["forwardedProps"] = {"theme": {"opacity": float("nan")}}
        answer = await http.post(path, content=json.dumps(sent).encode())
        assert answer.status_code == 422, answer.text
        assert answer.json()["field"] == "forwardedProps", answer.json()
        assert answer.json()["error"].startswith('forwardedProps["theme"]["opacity"] is nan')
        assert (await http.get("/threads/t1")).status_code == 404  # nothing was started
