"""A client that does not read: dropped after send_timeout; its run goes on, detached."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore
from tests.ag_ui.test_server import serving

pytestmark = pytest.mark.anyio


@tool
def mark(ctx: RunContext) -> str:
    """Mark the run as having got this far."""
    ctx.state["done"] = True
    return "marked"


async def test_a_client_that_stops_reading_is_dropped_and_its_run_finishes_detached() -> None:
    words = " ".join(f"word{i:06d}" for i in range(60_000))  # far more than socket buffers hold
    agent = Agent(ScriptedModel([[words, ToolCall("mark", {})], "end"]), tools=[mark])
    store = MemoryStore()
    app = create_app({"talk": agent}, store=store, send_timeout=1.0)
    body = json.dumps({"threadId": "slow", "runId": "r", "state": {},
                       "messages": [{"id": "u", "role": "user", "content": "go"}]}).encode()
    async with serving(app) as url:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /agents/talk/ag-ui HTTP/1.1\r\nHost: x\r\nContent-Type: "
                     b"application/json\r\nContent-Length: " + str(len(body)).encode() +
                     b"\r\n\r\n" + body)
        await writer.drain()  # ... and never read the response
        async with httpx.AsyncClient() as client:
            with anyio.fail_after(60):
                while True:
                    thread = (await client.get(f"{url}/threads/slow")).json()
                    if thread.get("running") is False and thread.get("state") == {"done": True}:
                        break
                    await anyio.sleep(0.2)
        with anyio.fail_after(10):  # the server gave up on the client: the socket is closed
            while await reader.read(65536):
                pass
        writer.close()
    last: Any = thread["messages"][-1]
    assert last["role"] == "assistant" and last["content"] == "end"
