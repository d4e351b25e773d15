"""A person and an agent editing together, with the real clients: `@ag-ui/client` 1.0 (HttpAgent)
and `ai` 7 (the Chat behind `useChat`).

The page receives version N of the thread's state, then goes away while the run's tool works;
the run goes on without it (detached) and commits an item. The page comes back and sends its
older state with a disjoint edit of its own: both changes are kept, and `GET /threads/{id}` equals
what the page then holds.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import ScriptedModel
from pyox_agents.server import create_app
from pyox_agents.state.messages import ToolCall
from pyox_agents.stores import MemoryStore

Serve = Callable[[Any], str]
RunNode = Callable[..., dict[str, Any]]

START = {"todos": ["a"]}
EDIT = {"note": "mine"}
BOTH = {"todos": ["a", "b"], "note": "mine"}


def reconnect_server(serve: Serve) -> str:
    """The server, with a `/release/{thread}` hook: it lets the waiting tool go on, and answers
    once the (detached) run has ended."""
    gate = threading.Event()

    @tool
    def add_todo(ctx: RunContext, text: str) -> str:
        """Add a todo, once the test lets it."""
        assert gate.wait(30), "the test never released the tool"
        ctx.state["todos"].append(text)
        return f"added {text}"

    agent = Agent(ScriptedModel([ToolCall("add_todo", {"text": "b"}), "Added.", "Noted."]),
                  tools=[add_todo])
    app = create_app({"a": agent}, store=MemoryStore())

    async def release(request: Request) -> Response:
        live = app.state.pyox.runs.active(request.path_params["thread"])
        gate.set()
        if live is not None and live.task is not None:
            await asyncio.wait([live.task], timeout=30)
        return JSONResponse({"released": True})

    app.router.routes.insert(0, Route("/release/{thread}", release, methods=["GET"]))
    return serve(app)


def options(base: str, thread: str) -> dict[str, Any]:
    return {"initialState": START, "first": "add b", "edit": EDIT, "second": "and note it",
            "release": f"{base}/release/{thread}"}


def test_ag_ui_page_back_from_away_keeps_its_edit_and_the_runs_commit(
        serve: Serve, run_node: RunNode) -> None:
    base = reconnect_server(serve)
    thread = f"t-{uuid.uuid4().hex[:12]}"
    result = run_node("agui_reconnect.mjs", f"{base}/agents/a/ag-ui",
                      {"threadId": thread, **options(base, thread)})
    assert result["seen"] == START  # version N, as the page had it when it went away
    assert result["request"]["state"] == {**START, **EDIT}  # its older state, with its edit
    assert result["resolved"], result["error"]
    assert result["warnings"] == []
    assert result["snapshots"] == [BOTH] and result["state"] == BOTH
    assert httpx.get(f"{base}/threads/{thread}", timeout=10).json()["state"] == BOTH


def test_ai_sdk_page_back_from_away_keeps_its_edit_and_the_runs_commit(
        serve: Serve, run_node: RunNode) -> None:
    base = reconnect_server(serve)
    chat = f"c-{uuid.uuid4().hex[:12]}"
    result = run_node("aisdk_reconnect.mjs", f"{base}/agents/a/ai-sdk",
                      {"chatId": chat, **options(base, chat)})
    assert result["version"].startswith("7.")
    assert result["seen"] == START
    assert result["body"]["state"] == {**START, **EDIT}
    assert result["error"] is None and result["errors"] == []
    assert result["state"] == BOTH
    assert httpx.get(f"{base}/threads/{chat}", timeout=10).json()["state"] == BOTH
