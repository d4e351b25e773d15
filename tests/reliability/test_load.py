"""Issue 10's load test: 500 concurrent AG-UI runs against one server process.

One uvicorn server on 127.0.0.1 (in this process and event loop) with a SQLiteStore; 20 httpx
AsyncClients of 25 connections each post one run per thread, all at once. Each run's tool
changes the state twice over two steps. Every run must finish (RUN_FINISHED, no RUN_ERROR, no
refused request), and the state each client builds from the stream (STATE_SNAPSHOT, then every
STATE_DELTA applied with `jsonpatch`) must equal the state the server kept (`GET
/threads/{id}`). The whole thing is bounded at 50 s and its wall time printed (`-s` shows it);
it takes 5-20 s on 2 cores, depending on the machine.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import jsonpatch
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import ServerLimits, create_app
from pyox_agents.state.messages import Message
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.servers import serving as served

pytestmark = pytest.mark.anyio

RUNS = 500
CLIENTS = 20
CONNECTIONS = 25
BOUND = 50.0


def serving(app: Any) -> contextlib.AbstractAsyncContextManager[str]:
    """Serve `app` with uvicorn on 127.0.0.1 in this event loop; yields the base URL.

    Idle connections stay open for the whole test: a client whose runs end early waits for
    the others before its checks, and past uvicorn's 5 s keep-alive the server would close a
    pooled connection just as the client reuses it (a ReadError on a slow machine), which is
    the keep-alive race of any HTTP/1.1 client, not what this test checks."""
    return served(app, backlog=4096, graceful=2, keep_alive=int(2 * BOUND))


@tool
async def count(ctx: RunContext, by: int) -> str:
    """Add `by` to the counter and log it."""
    await anyio.sleep(0.01)  # runs overlap for real
    ctx.state["count"] += by
    ctx.state["log"].append({"by": by, "path/with~chars": by})
    return "counted"


def script(messages: list[Message], tools: list[Any]) -> Any:
    last_user = max(i for i, m in enumerate(messages) if m.role == "user")
    done = sum(1 for m in messages[last_user + 1:] if m.role == "tool")
    by = int(messages[last_user].content)
    return [ToolCall("count", {"by": by}), ToolCall("count", {"by": by * 10}), "Done."][done]


async def one_run(client: httpx.AsyncClient, number: int) -> tuple[str, Any]:
    """Post run `number`, read its stream; the thread id and the state the client built."""
    thread = f"load-{number}"
    state: Any = {"count": number, "log": []}
    async with client.stream("POST", "/agents/load/ag-ui", json={
            "threadId": thread, "runId": f"r{number}", "state": state,
            "messages": [{"id": "u", "role": "user", "content": str(number)}]}) as response:
        assert response.status_code == 200, await response.aread()
        last: dict[str, Any] = {}
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            last = json.loads(line[5:])
            if last["type"] == "STATE_SNAPSHOT":
                state = last["snapshot"]
            elif last["type"] == "STATE_DELTA":
                state = jsonpatch.apply_patch(state, last["delta"])
            assert last["type"] != "RUN_ERROR", (thread, last)
    assert last.get("type") == "RUN_FINISHED", (thread, last)
    return thread, state


async def test_500_concurrent_runs_all_finish_with_the_servers_state(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "load.db")
    app = create_app({"load": Agent(FunctionModel(script), tools=[count])}, store=store,
                     limits=ServerLimits(runs_total=RUNS, runs_per_principal=None))
    results: dict[str, Any] = {}
    started = time.monotonic()
    async with serving(app) as url, contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(httpx.AsyncClient(
            base_url=url, timeout=BOUND,
            limits=httpx.Limits(max_connections=CONNECTIONS, max_keepalive_connections=CONNECTIONS),
        )) for _ in range(CLIENTS)]

        async def run(number: int) -> None:
            thread, state = await one_run(clients[number % CLIENTS], number)
            results[thread] = state

        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                for number in range(RUNS):
                    tg.start_soon(run, number)
        streamed = time.monotonic() - started
        assert len(results) == RUNS

        async def check(number: int) -> None:
            thread = f"load-{number}"
            kept = (await clients[number % CLIENTS].get(f"/threads/{thread}")).json()
            state = results[thread]
            assert not kept["running"]
            assert state == kept["state"], thread
            assert state["count"] == number + number * 11 and len(state["log"]) == 2

        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tg:
                for number in range(RUNS):
                    tg.start_soon(check, number)
    wall = time.monotonic() - started
    assert len(store.list_threads()) == RUNS
    store.close()
    print(f"\n{RUNS} concurrent AG-UI runs ({CLIENTS} clients x {CONNECTIONS} connections): "
          f"all streamed in {streamed:.1f} s, checked against the server in {wall:.1f} s")
