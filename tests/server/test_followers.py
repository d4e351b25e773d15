"""`ServerLimits(followers_per_run=...)` caps the streams that read one run: one more AI SDK
resume or AG-UI connect is refused 429 with Retry-After, and a reader that leaves makes room.
Against a real server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from pyox_agents import Agent, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.server import ServerLimits, create_app
from pyox_agents.stores import MemoryStore

Serve = Callable[[Any], str]


def gated_agent(gate: threading.Event, entered: threading.Event) -> Agent:
    @tool
    def wait() -> str:
        """Wait for the test."""
        entered.set()
        gate.wait(20)
        return "opened"

    return Agent(ScriptedModel([ToolCall("wait", {}), "done"]), tools=[wait])


def chat_body(chat: str) -> dict[str, Any]:
    return {"id": chat, "trigger": "submit-message",
            "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "go"}]}]}


@contextlib.contextmanager
def opened(client: httpx.Client, method: str, url: str, **kwargs: Any
           ) -> Iterator[httpx.Response]:
    """A streamed response whose head has come; its body is left unread until it closes."""
    with client.stream(method, url, **kwargs) as response:
        yield response


def until_served(client: httpx.Client, url: str, within: float = 10) -> bool:
    """Whether a GET of `url` is answered 200 (its stream opened, then closed) within
    `within` seconds of asking again after each 429."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with opened(client, "GET", url) as response:
            if response.status_code == 200:
                return True
            assert response.status_code == 429
        time.sleep(0.05)
    return False


def test_a_follower_over_the_cap_gets_429(live_server: Serve) -> None:
    gate, entered = threading.Event(), threading.Event()
    app = create_app({"todo": gated_agent(gate, entered)}, store=MemoryStore(),
                     limits=ServerLimits(followers_per_run=2))
    base = live_server(app)
    resume = f"{base}/agents/todo/ai-sdk/chat-1/stream"
    connect = {"threadId": "chat-1", "runId": "r", "messages": [], "state": {}}
    try:
        with httpx.Client(timeout=10) as client, contextlib.ExitStack() as streams:
            run = streams.enter_context(opened(client, "POST", f"{base}/agents/todo/ai-sdk",
                                               json=chat_body("chat-1")))
            assert run.status_code == 200 and entered.wait(10)  # follower 1: the run's own
            second = streams.enter_context(opened(client, "GET", resume))
            assert second.status_code == 200  # follower 2
            refused = client.get(resume)
            assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0
            assert "2 streams follow this run" in refused.text
            ag_ui = client.post(f"{base}/agents/todo/ag-ui/connect", json=connect)
            assert ag_ui.status_code == 429 and "the limit per run" in ag_ui.json()["error"]
            second.close()  # a reader that leaves makes room, once the server saw it leave
            assert until_served(client, resume)
            gate.set()
            frames = [line for line in run.iter_lines() if line.startswith("data: ")]
            assert frames[-1] == "data: [DONE]"
            assert json.loads(frames[-2][6:])["type"] == "finish"
    finally:
        gate.set()
