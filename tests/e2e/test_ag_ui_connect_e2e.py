"""A page that comes back to a thread, with the shipped client piece: the demo's
`ConnectingAgent` (frontend-demo/src/shared/ConnectingAgent.ts) on the real `@ag-ui/client`
1.0 and 0.0.59, calling `connectAgent()` as CopilotKit does after a reload, against a real
server. It gets the thread's history, its state, and a run still going delivered once."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents import Agent, RunContext, ToolCall, tool
from pyox_agents.models import ScriptedModel
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore
from tests.ag_ui.servers import frames
from tests.e2e.test_ag_ui_e2e import CLIENTS
from tests.e2e.test_demo_page import playwright_ready  # noqa: F401  (frontend-demo's npm)

Serve = Callable[[Any], str]
RunNode = Callable[..., dict[str, Any]]


@pytest.fixture(params=CLIENTS)
def client(request: pytest.FixtureRequest) -> str:
    """The npm package of the AG-UI client under the ConnectingAgent."""
    return str(request.param)


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo."""
    ctx.state.setdefault("todos", []).append(text)
    return "added"


class Gated:
    """An app whose `slow` tool waits until a connect request has come in (then a moment)."""

    def __init__(self, agent_tools: list[Any], script: list[Any]) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        gated = self

        @tool
        async def slow(ctx: RunContext, text: str) -> str:
            """Work until released."""
            ctx.progress("work", {"text": text, "done": False})
            gated.entered.set()
            await anyio.to_thread.run_sync(gated.release.wait, 30)
            ctx.progress("work", {"text": text, "done": True})
            ctx.state.setdefault("todos", []).append(text)
            return "done"

        agent = Agent(ScriptedModel(script), tools=[*agent_tools, slow])
        self.app = create_app({"a": agent}, store=MemoryStore())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].endswith("/ag-ui/connect"):
            threading.Timer(0.5, self.release.set).start()
        await self.app(scope, receive, send)


def connect(run_node: RunNode, base: str, thread: str, client: str) -> dict[str, Any]:
    result = run_node("agui_connect.mjs", f"{base}/agents/a/ag-ui",
                      {"threadId": thread, "client": client})
    assert result["resolved"], result["error"]
    assert result["warnings"] == [], result["warnings"]
    assert result["url"] == f"{base}/agents/a/ag-ui/connect"
    ids = [m["id"] for m in result["messages"]]
    assert len(ids) == len(set(ids)), f"a message under two ids or twice: {ids}"
    return result


def post(base: str, thread: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    response = httpx.post(f"{base}/agents/a/ag-ui", timeout=60, json={
        "threadId": thread, "runId": uuid.uuid4().hex, "protocolVersion": "1.0",
        "messages": messages})
    assert response.status_code == 200, response.text
    return frames(response.text)


def last_snapshot(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "MESSAGES_SNAPSHOT"][-1]["messages"]


def shown(messages: list[dict[str, Any]]) -> list[tuple[str, str, Any]]:
    """What a person sees of each message: its role, text, and the tool calls."""
    return [(m["role"], m.get("content") or "", [c["function"]["name"]
                                                 for c in m.get("toolCalls") or []])
            for m in messages if m["role"] != "activity"]


def test_a_reloaded_page_gets_the_history_and_state_back(
        serve: Serve, run_node: RunNode, client: str, playwright_ready: None) -> None:  # noqa: F811
    gated = Gated([add_todo], [ToolCall("add_todo", {"text": "milk"}), "Added milk."])
    base = serve(gated)
    thread = f"t-{uuid.uuid4().hex[:12]}"
    run = post(base, thread, [{"id": "u1", "role": "user", "content": "add milk"}])
    result = connect(run_node, base, thread, client)
    assert shown(result["messages"]) == shown(last_snapshot(run))
    assert [m["id"] for m in result["messages"]][1:] == [m["id"] for m in last_snapshot(run)][1:]
    assert result["state"] == {"todos": ["milk"]}
    kept = httpx.get(f"{base}/threads/{thread}", timeout=10).json()
    assert [m["id"] for m in kept["messages"]] == [m["id"] for m in result["messages"]]


def test_a_page_reloaded_mid_run_gets_the_history_then_the_run_once(
        serve: Serve, run_node: RunNode, client: str, playwright_ready: None) -> None:  # noqa: F811
    gated = Gated([add_todo], [ToolCall("add_todo", {"text": "a"}), "First.",
                               ToolCall("slow", {"text": "b"}), "Second."])
    base = serve(gated)
    thread = f"t-{uuid.uuid4().hex[:12]}"
    first = post(base, thread, [{"id": "u1", "role": "user", "content": "add a"}])
    second: dict[str, list[dict[str, Any]]] = {}
    messages = [*last_snapshot(first), {"id": "u2", "role": "user", "content": "add b"}]
    running = threading.Thread(target=lambda: second.update(run=post(base, thread, messages)))
    running.start()
    assert gated.entered.wait(30), "the second run reached its slow tool"
    result = connect(run_node, base, thread, client)
    running.join(60)
    run = second["run"]
    starts = Counter(e["messageId"] for e in result["events"]
                     if e["type"] == "TEXT_MESSAGE_START")
    assert starts and set(starts.values()) == {1}, "each streamed message once"
    assert shown(result["messages"]) == shown(last_snapshot(run))
    assert [m["id"] for m in result["messages"] if m["role"] not in ("user", "activity")] == \
        [m["id"] for m in last_snapshot(run) if m["role"] != "user"]
    [activity] = [m for m in result["messages"] if m["role"] == "activity"]
    assert activity["content"] == {"text": "b", "done": True}
    assert result["state"] == {"todos": ["a", "b"]}
    assert result["events"][-1]["type"] == "RUN_FINISHED"


def test_a_new_thread_connects_to_nothing(serve: Serve, run_node: RunNode, client: str,
                                          playwright_ready: None) -> None:  # noqa: F811
    base = serve(Gated([add_todo], ["hi"]))
    result = connect(run_node, base, f"t-{uuid.uuid4().hex[:12]}", client)
    assert result["messages"] == [] and result["state"] == {}
