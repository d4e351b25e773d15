"""MCP tools through AG-UI: a real server streams a real MCP server's tool result."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from pyox_agents import Agent
from pyox_agents.mcp import MCPToolset
from pyox_agents.models.scripted import FunctionModel, ScriptedModel
from pyox_agents.server import create_app
from tests.ag_ui.servers import post_run, serving

from .servers import call, http_server, stdio

pytestmark = pytest.mark.anyio

BODY = {"threadId": "t1", "runId": "r1", "protocolVersion": "1.0",
        "messages": [{"id": "m1", "role": "user", "content": "add 2 and 3"}]}


@contextlib.contextmanager
def toolset_over(transport: str) -> Iterator[MCPToolset]:
    if transport == "stdio":
        yield stdio(name="calc")
        return
    with http_server() as mcp_server:
        yield MCPToolset(url=mcp_server.url, name="calc")


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_an_mcp_tools_result_is_a_tool_call_result_in_the_ag_ui_stream(
    transport: str,
) -> None:
    """"through AG-UI (`TOOL_CALL_RESULT` of an MCP tool in the stream)"."""
    with toolset_over(transport) as toolset:
        agent = Agent(ScriptedModel([call("add", a=2, b=3), "It is 5."]), tools=[toolset])
        async with serving(create_app({"calc": agent})) as url, httpx.AsyncClient() as client:
            response, events = await post_run(client, f"{url}/agents/calc/ag-ui", BODY)
    assert response.status_code == 200
    kinds = [event["type"] for event in events]
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
    start = next(e for e in events if e["type"] == "TOOL_CALL_START")
    assert start["toolCallName"] == "add"
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert result["toolCallId"] == start["toolCallId"]
    assert json.loads(result["content"]) == {"result": 5}
    assert kinds.index("TOOL_CALL_END") < kinds.index("TOOL_CALL_RESULT")


async def test_an_mcp_tool_that_needs_approval_is_an_ag_ui_interrupt_then_runs() -> None:
    """The approval of an MCP tool is the run's interrupt; `RunAgentInput.resume` answers it,
    and the call's result streams in the resumed run."""
    agent = Agent(ScriptedModel([call("add", a=2, b=3), "It is 5."]),
                  tools=[stdio(name="calc", approval={"add"})])
    async with serving(create_app({"calc": agent})) as url, httpx.AsyncClient() as client:
        _, first = await post_run(client, f"{url}/agents/calc/ag-ui", BODY)
        outcome = first[-1]["outcome"]
        assert (first[-1]["type"], outcome["type"]) == ("RUN_FINISHED", "interrupt")
        (interrupt,) = outcome["interrupts"]
        assert interrupt["metadata"] == {"tool": "add", "arguments": {"a": 2, "b": 3}}
        assert not [e for e in first if e["type"] == "TOOL_CALL_RESULT"]
        resume = [{"interruptId": interrupt["id"], "status": "resolved",
                   "payload": {"approved": True}}]
        _, second = await post_run(client, f"{url}/agents/calc/ag-ui",
                                   {**BODY, "runId": "r2", "resume": resume})
    (result,) = [e for e in second if e["type"] == "TOOL_CALL_RESULT"]
    assert json.loads(result["content"]) == {"result": 5}
    assert (second[-1]["type"], second[-1]["outcome"]["type"]) == ("RUN_FINISHED", "success")


def _pid_then_done(messages: list[Any], tools: list[Any]) -> Any:
    return call("pid") if messages[-1].role == "user" else "done"


async def test_an_apps_mcp_server_serves_every_run_and_stops_with_the_app() -> None:
    """An app enters its agents' toolsets for its life: one stdio server answers every run
    (not one started per run), and it is stopped and reaped when the app shuts down, in the
    server's own event loop."""
    agent = Agent(FunctionModel(_pid_then_done), tools=[stdio(name="calc")])
    pids = []
    async with serving(create_app({"calc": agent})) as url, httpx.AsyncClient() as client:
        for turn in range(2):
            body = {**BODY, "threadId": f"t{turn}"}
            _, events = await post_run(client, f"{url}/agents/calc/ag-ui", body)
            (result,) = [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
            pids.append(json.loads(result["content"])["result"])
        assert pids[0] == pids[1] and _alive(pids[0])
    assert not _alive(pids[0]), f"the server {pids[0]} still runs after the app stopped"


def _alive(pid: int) -> bool:
    """Whether `pid` exists (running, or ended but not reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
