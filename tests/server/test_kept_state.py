"""The thread's shared state a server keeps between runs, over HTTP on a real uvicorn server.

A client's state is the person's edits on top of the version it last saw, rebased onto the
thread's latest version: a client that was away never erases what a run committed meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import ScriptedModel
from pyox_agents.server import create_app
from pyox_agents.state.messages import ToolCall
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.servers import frames, serving

pytestmark = pytest.mark.anyio

USER = {"id": "u1", "role": "user", "content": "hello"}
USER2 = {"id": "u2", "role": "user", "content": "again"}
REPLY = {"id": "a1", "role": "assistant", "content": "Done."}


class Gate:
    """Lets the test decide when the edit tool goes on."""

    def __init__(self) -> None:
        self.reached = anyio.Event()
        self.release = anyio.Event()


def edit_agent(gate: Gate, *replies: Any) -> Agent:
    @tool
    async def edit(ctx: RunContext, changes: dict[str, Any]) -> str:
        """Change the state once the test lets it: "+key" appends to a list, else sets."""
        gate.reached.set()
        await gate.release.wait()
        for key, value in changes.items():
            if key.startswith("+"):
                ctx.state[key[1:]].append(value)
            else:
                ctx.state[key] = value
        return "edited"

    return Agent(ScriptedModel(list(replies)), tools=[edit])


def ag_ui(thread: str = "t1", messages: tuple[Mapping[str, Any], ...] = (USER,),
          **fields: Any) -> dict[str, Any]:
    return {"threadId": thread, "runId": "r1", "messages": list(messages), **fields}


async def post(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = await client.post(url, json=body)
    assert response.status_code == 200, response.text
    return frames(response.text.replace("data: [DONE]\n\n", ""))


def snapshot(events: list[dict[str, Any]]) -> Any:
    (first,) = [e["snapshot"] for e in events if e["type"] == "STATE_SNAPSHOT"]
    return first


async def lines_until(lines: AsyncIterator[str], kind: str) -> list[dict[str, Any]]:
    seen = []
    async for line in lines:
        if line.startswith("data:"):
            seen.append(json.loads(line[5:]))
            if seen[-1]["type"] == kind:
                return seen
    raise AssertionError(f"the stream ended before {kind}: {seen}")


async def disconnect_during_the_tool(app: Any, client: httpx.AsyncClient, url: str,
                                     body: dict[str, Any], gate: Gate, end: str
                                     ) -> list[dict[str, Any]]:
    """Start a run, read up to `end`, go away while its tool waits, let it finish detached."""
    async with client.stream("POST", url, json=body) as response:
        lines = response.aiter_lines()
        seen = await lines_until(lines, end)
        await gate.reached.wait()
        live = app.state.pyox.runs.active(body.get("threadId", body.get("id")))
    gate.release.set()  # the client is gone; the run goes on and commits
    with anyio.fail_after(10):
        await asyncio.wait([live.task])
    return seen


async def thread_state(client: httpx.AsyncClient, url: str, thread: str = "t1") -> Any:
    response = await client.get(f"{url}/threads/{thread}")
    assert response.status_code == 200, response.text
    return json.loads(response.text)["state"]


async def test_a_client_back_from_away_keeps_its_edit_and_the_runs_commit_ag_ui(
        tmp_path: Path) -> None:
    """A person and an agent editing together must not lose each other's work."""
    gate = Gate()
    agent = edit_agent(gate, ToolCall("edit", {"changes": {"+todos": "b"}}), "Done.", "Hi.")
    app = create_app({"todo": agent}, store=SQLiteStore(tmp_path / "t.db"))
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        endpoint = f"{url}/agents/todo/ag-ui"
        seen = await disconnect_during_the_tool(app, client, endpoint,
                                                ag_ui(state={"todos": ["a"]}), gate,
                                                "TOOL_CALL_END")
        assert snapshot(seen) == {"todos": ["a"]}
        assert await thread_state(client, url) == {"todos": ["a", "b"]}  # committed meanwhile
        mine = {"todos": ["a"], "note": "mine"}  # the version it saw, and its own edit
        events = await post(client, endpoint, ag_ui(messages=(USER, REPLY, USER2), state=mine))
        merged = {"todos": ["a", "b"], "note": "mine"}
        assert snapshot(events) == merged
        assert await thread_state(client, url) == merged


async def test_a_client_back_from_away_keeps_its_edit_and_the_runs_commit_ai_sdk(
        tmp_path: Path) -> None:
    gate = Gate()
    agent = edit_agent(gate, ToolCall("edit", {"changes": {"+todos": "b"}}), "Done.", "Hi.")
    app = create_app({"todo": agent}, store=SQLiteStore(tmp_path / "t.db"))
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hello"}]}
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        endpoint = f"{url}/agents/todo/ai-sdk"
        first = {"id": "t1", "messages": [user], "trigger": "submit-message",
                 "state": {"todos": ["a"]}}
        seen = await disconnect_during_the_tool(app, client, endpoint, first, gate,
                                                "tool-input-available")
        part = next(c for c in seen if c["type"] == "data-state")
        assert part["data"] == {"todos": ["a"]}
        held = {"id": "m1", "role": "assistant", "parts": [part]}  # what useChat kept
        user2 = {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "again"}]}
        again = {"id": "t1", "messages": [user, held, user2], "trigger": "submit-message",
                 "state": {"todos": ["a"], "note": "mine"}}
        chunks = await post(client, endpoint, again)
        merged = {"todos": ["a", "b"], "note": "mine"}
        assert next(c for c in chunks if c["type"] == "data-state")["data"] == merged
        assert await thread_state(client, url) == merged


async def test_where_both_wrote_one_place_the_persons_write_wins_over_a_finished_run(
        tmp_path: Path) -> None:
    gate = Gate()
    agent = edit_agent(gate, ToolCall("edit", {"changes": {"title": "B", "+todos": "x"}}),
                       "Done.", "Hi.")
    app = create_app({"todo": agent}, store=SQLiteStore(tmp_path / "t.db"))
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        endpoint = f"{url}/agents/todo/ag-ui"
        await disconnect_during_the_tool(app, client, endpoint,
                                         ag_ui(state={"title": "A", "todos": []}), gate,
                                         "TOOL_CALL_END")
        events = await post(client, endpoint, ag_ui(messages=(USER, REPLY, USER2),
                                                    state={"title": "C", "todos": []}))
        assert snapshot(events) == {"title": "C", "todos": ["x"]}
        assert await thread_state(client, url) == {"title": "C", "todos": ["x"]}


async def test_a_reloaded_page_gets_the_threads_state_in_the_opening_snapshot(
        tmp_path: Path) -> None:
    app = create_app({"todo": edit_agent(Gate(), "one", "two", "three")},
                     store=SQLiteStore(tmp_path / "t.db"))
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        endpoint = f"{url}/agents/todo/ag-ui"
        await post(client, endpoint, ag_ui(state={"todos": ["a"]}))
        # a fresh page: HttpAgent's state is {} and it has no reply of this thread yet
        events = await post(client, endpoint, ag_ui(messages=(USER2,), state={}))
        assert snapshot(events) == {"todos": ["a"]}
        chunks = await post(client, f"{url}/agents/todo/ai-sdk", {
            "id": "t1", "trigger": "submit-message", "messages": [
                {"id": "u3", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]})
        assert next(c for c in chunks if c["type"] == "data-state")["data"] == {"todos": ["a"]}


async def test_a_client_that_cleared_its_state_stays_cleared(tmp_path: Path) -> None:
    """Seed 004: "`ag_ui.stream` and `ai_sdk.stream` start the run with the client's state": a
    client that saw the state and cleared it to `{}` is not reverted to the old state."""
    app = create_app({"todo": edit_agent(Gate(), "one", "two", "three", "four")},
                     store=SQLiteStore(tmp_path / "t.db"))
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        endpoint = f"{url}/agents/todo/ag-ui"
        await post(client, endpoint, ag_ui(state={"todos": ["a"]}))
        events = await post(client, endpoint, ag_ui(messages=(USER, REPLY, USER2), state={}))
        assert snapshot(events) == {}
        assert await thread_state(client, url) == {}
        sdk = f"{url}/agents/todo/ai-sdk"
        user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
        first = await post(client, sdk, {"id": "c1", "trigger": "submit-message",
                                         "messages": [user], "state": {"todos": ["a"]}})
        part = next(c for c in first if c["type"] == "data-state")
        held = {"id": "m1", "role": "assistant", "parts": [part]}
        user2 = {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "again"}]}
        second = await post(client, sdk, {"id": "c1", "trigger": "submit-message",
                                          "messages": [user, held, user2], "state": {}})
        assert next(c for c in second if c["type"] == "data-state")["data"] == {}
        assert await thread_state(client, url, "c1") == {}


async def test_a_client_state_equal_in_python_but_other_json_is_the_clients(
        tmp_path: Path) -> None:
    """`true` is not `1` and `-0.0` is not `0.0`: compared as JSON, the client's state is taken,
    and GET /threads/{id} agrees with the client."""
    app = create_app({"todo": edit_agent(Gate(), "one", "two")},
                     store=SQLiteStore(tmp_path / "t.db"))
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        endpoint = f"{url}/agents/todo/ag-ui"
        await post(client, endpoint, ag_ui(state={"done": 1, "t": 0.0}))
        events = await post(client, endpoint, ag_ui(messages=(USER, REPLY, USER2),
                                                    state={"done": True, "t": -0.0}))
        assert snapshot(events)["done"] is True
        state = await thread_state(client, url)
    assert state["done"] is True and math.copysign(1.0, state["t"]) == -1.0


async def test_with_keep_state_false_the_server_keeps_no_state(tmp_path: Path) -> None:
    """Seed 004: "Nothing is stored"; keeping a thread's state is the server's choice."""
    app = create_app({"todo": edit_agent(Gate(), "one", "two")},
                     store=SQLiteStore(tmp_path / "t.db"), keep_state=False)
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        endpoint = f"{url}/agents/todo/ag-ui"
        await post(client, endpoint, ag_ui(state={"card": "4242"}))
        events = await post(client, endpoint, {**ag_ui(messages=(USER, REPLY, USER2))})
        assert snapshot(events) == {}
        assert await thread_state(client, url) == {}


def approval_agent(*replies: Any) -> Agent:
    @tool
    def retitle(ctx: RunContext, title: str) -> str:
        """Rename the list."""
        ctx.state["title"] = title
        return "renamed"

    @tool(approval=True)
    def ship(ctx: RunContext) -> str:
        """Ship the order (a person approves first)."""
        ctx.state["shipped"] = True
        return "shipped"

    return Agent(ScriptedModel(list(replies)), tools=[retitle, ship])


async def test_an_edit_sent_with_an_approval_goes_into_the_paused_run(tmp_path: Path) -> None:
    """A run paused for a person is still going: the person's edit of the state, sent with
    the answer, is committed into it before it resumes, not dropped."""
    app = create_app({"a": approval_agent(ToolCall("ship", {}), "Shipped.")},
                     store=SQLiteStore(tmp_path / "t.db"))
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        endpoint = f"{url}/agents/a/ag-ui"
        first = await post(client, endpoint, ag_ui(state={"todos": ["a"]}))
        finished = first[-1]
        assert finished["outcome"]["type"] == "interrupt"
        (interrupt,) = finished["outcome"]["interrupts"]
        resumed = await post(client, endpoint, ag_ui(
            messages=(USER, REPLY), state={"todos": ["a"], "note": "mine"},
            resume=[{"interruptId": interrupt["id"], "status": "resolved",
                     "payload": {"approved": True}}]))
        assert snapshot(resumed) == {"todos": ["a"], "note": "mine"}
        assert resumed[-1]["type"] == "RUN_FINISHED"
        both = {"todos": ["a"], "note": "mine", "shipped": True}
        assert await thread_state(client, url) == both


async def test_an_edit_of_a_place_the_paused_run_wrote_since_is_refused(tmp_path: Path) -> None:
    """The run's refusal rule for a run still going: the person's edit of a place the run wrote
    after the version the person saw is refused (409), and nothing of it applies."""
    app = create_app({"a": approval_agent(ToolCall("retitle", {"title": "B"}),
                                          ToolCall("ship", {}), "Shipped.")},
                     store=SQLiteStore(tmp_path / "t.db"))
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "ship it"}]}
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        sdk = f"{url}/agents/a/ai-sdk"
        first = await post(client, sdk, {"id": "c1", "trigger": "submit-message",
                                         "messages": [user], "state": {"title": "A"}})
        request = next(c for c in first if c["type"] == "tool-approval-request")
        answered = {"type": "tool-ship", "toolCallId": request["toolCallId"], "input": {},
                    "state": "approval-responded",
                    "approval": {"id": request["approvalId"], "approved": True}}
        seen_first = {"type": "data-state", "id": "state", "data": {"title": "A"}}
        held = {"id": "m1", "role": "assistant", "parts": [seen_first, answered]}
        refused = await client.post(sdk, json={"id": "c1", "trigger": "submit-message",
                                               "messages": [user, held],
                                               "state": {"title": "C"}})
        assert refused.status_code == 409 and "/title" in refused.text
        assert await thread_state(client, url, "c1") == {"title": "B"}
