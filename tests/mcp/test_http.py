"""MCP tools over streamable HTTP: the test server runs as a subprocess on 127.0.0.1."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from pyox_agents import Agent
from pyox_agents.mcp import MCPServerUnavailable, MCPToolset
from pyox_agents.models.scripted import FunctionModel, ScriptedModel

from .servers import call, free_port, http_server, results

pytestmark = pytest.mark.anyio


async def test_tools_over_streamable_http_are_listed_and_called() -> None:
    with http_server() as server:
        model = ScriptedModel([[call("add", a=2, b=40), call("fail", reason="x")], "done"])
        result = await Agent(model, tools=[MCPToolset(url=server.url, name="web")]).arun("go")
    add, failed = sorted(results(result.events), key=lambda r: r.name)
    assert add.result == {"result": 42}
    assert failed.error is not None and "cannot do it: x" in failed.error
    assert "add" in {spec.name for spec in model.requests[0].tools}
    assert result.answer == "done"


async def test_a_url_where_nothing_listens_is_unreachable_and_says_what_to_check() -> None:
    """"a URL that does not answer: ... ("the MCP server 'files' is unreachable: ...; check the
    command / URL")"."""
    url = f"http://127.0.0.1:{free_port()}/mcp"
    toolset = MCPToolset(url=url, name="files", connect_timeout=10)
    with pytest.raises(MCPServerUnavailable) as caught:
        await toolset.list_tools()
    assert str(caught.value).startswith("the MCP server 'files' is unreachable: ")
    assert str(caught.value).endswith(
        f"check that the server runs and that the URL {url!r} is its MCP endpoint")


async def test_a_wrong_path_on_a_running_server_is_reported_with_the_url() -> None:
    with http_server() as server:
        wrong = server.url.replace("/mcp", "/nothing-here")
        with pytest.raises(MCPServerUnavailable, match=r"is unreachable: .*the URL '.*"
                           r"/nothing-here' is its MCP endpoint"):
            await MCPToolset(url=wrong, name="files", connect_timeout=10).list_tools()


async def test_an_unreachable_url_at_run_start_leaves_its_tools_out_and_the_run_goes_on() -> None:
    model = ScriptedModel(["no tools today"])
    toolset = MCPToolset(url=f"http://127.0.0.1:{free_port()}/mcp", name="files")
    result = await Agent(model, tools=[toolset]).arun("go")
    assert result.answer == "no tools today"
    assert model.requests[0].tools == ()
    assert "the MCP server 'files' is unreachable" in model.requests[0].messages[0].content


async def test_an_http_server_killed_mid_run_gives_error_results_and_the_run_goes_on() -> None:
    with http_server() as server:

        def script(messages: list[Any], tools: list[Any]) -> Any:
            turn = sum(1 for m in messages if m.role == "tool")
            if turn == 0:
                return call("add", a=1, b=1)
            if turn == 1:
                server.kill()
                return call("add", a=2, b=2)
            return "done"

        toolset = MCPToolset(url=server.url, name="web", timeout=30)
        result = await Agent(FunctionModel(script), tools=[toolset]).arun("go")
    before, after = results(result.events)
    assert before.result == {"result": 2}
    assert after.error is not None
    assert after.error == "the MCP server 'web' is unreachable; try again later"
    assert result.answer == "done"


async def test_an_http_server_killed_during_a_call_gives_that_call_an_error_result(
    tmp_path: Path,
) -> None:
    """"a server that dies mid-call: the call gets an error result the model reads"."""
    marker = tmp_path / "running"
    with http_server() as server:

        def kill_once_the_call_runs() -> None:  # the server creates the marker in the call
            deadline = time.monotonic() + 60
            while not marker.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            server.kill()

        model = ScriptedModel([call("hang", marker=str(marker)), "the server died"])
        agent = Agent(model, tools=[MCPToolset(url=server.url, name="web")])
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.to_thread.run_sync, kill_once_the_call_runs)
            result = await agent.arun("go")
    (hang,) = results(result.events)
    assert hang.error is not None and "the MCP server 'web' is unreachable" in hang.error
    assert "unreachable" in model.requests[1].messages[-1].content
    assert result.answer == "the server died"
