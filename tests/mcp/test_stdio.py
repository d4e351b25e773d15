"""MCP tools over stdio: a real `MCPServer` script started by the toolset, used by real runs."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from pyox_agents import (
    Agent,
    Deny,
    Limits,
    Message,
    RunStatus,
    State,
    StopReason,
    ToolCall,
    tool,
)
from pyox_agents.events import ToolCallEnded, ToolResult
from pyox_agents.mcp import MCPServerUnavailable, MCPToolset
from pyox_agents.models.scripted import FunctionModel, ScriptedModel
from pyox_agents.stores import MemoryStore

from .servers import call, results, stdio

pytestmark = pytest.mark.anyio


@tool
def lookup(key: str) -> str:
    """A local tool whose name the server's tool has too."""
    return f"local {key}"


async def test_the_servers_tools_are_listed_with_name_description_and_schema() -> None:
    """"Tools are listed from the server (name, description, input JSON schema) and become our
    `Tool`s; the model sees them like any tool"."""
    model = ScriptedModel(["nothing to do"])
    async with stdio() as toolset:
        tools = {t.name: t for t in await toolset.list_tools()}
        await Agent(model, tools=[toolset]).arun("hi")
    assert tools["add"].description == "Add two numbers."
    assert tools["add"].parameters["properties"]["a"]["type"] == "integer"
    assert tools["add"].parameters["required"] == ["a", "b"]
    seen = {spec.name: spec for spec in model.requests[0].tools}
    assert {"add", "describe_point", "fail", "slow", "picture", "lookup"} <= set(seen)
    assert seen["add"].parameters == tools["add"].parameters


async def test_a_call_returns_the_servers_structured_content() -> None:
    agent = Agent(ScriptedModel([[call("add", a=2, b=3), call("describe_point", x=3, y=4)],
                                 "done"]), tools=[stdio()])
    result = await agent.arun("go")
    # the two calls run at once: their results come as each finishes, in either order
    found = {done.name: done for done in results(result.events)}
    add, point = found["add"], found["describe_point"]
    assert add.error is None and add.result == {"result": 5}
    assert point.result == {"x": 3.0, "y": 4.0, "distance": 5.0}
    assert result.answer == "done"


async def test_text_is_joined_and_an_image_becomes_a_line_saying_it_is_not_shown() -> None:
    """"images as our `Image` if the tool-result path supports them; say what is dropped": a
    tool result carries no image, so the model reads a line naming the dropped image."""
    agent = Agent(ScriptedModel([call("picture"), "done"]), tools=[stdio()])
    (picture,) = results((await agent.arun("go")).events)
    assert picture.result == "a red dot\n[image/png image, 70 bytes, not shown]"


async def test_embedded_text_is_shown_and_binary_resources_and_links_are_named() -> None:
    agent = Agent(ScriptedModel([call("resources"), "done"]), tools=[stdio()])
    (shown,) = results((await agent.arun("go")).events)
    assert shown.result == ("alpha\n[application/octet-stream resource file:///b.bin, not shown]"
                            "\n[resource file:///c.txt]")


async def test_an_is_error_result_is_a_tool_error_the_model_reads() -> None:
    """"`isError` results become tool errors the model reads"; the run goes on."""
    model = ScriptedModel([call("fail", reason="no disk"), "sorry"])
    result = await Agent(model, tools=[stdio()]).arun("go")
    (failed,) = results(result.events)
    assert failed.error is not None and "cannot do it: no disk" in failed.error
    assert "cannot do it: no disk" in model.requests[1].messages[-1].content
    assert result.answer == "sorry"


async def test_arguments_that_do_not_fit_the_schema_are_refused_before_the_call() -> None:
    model = ScriptedModel([call("add", a="two"), "ok"])
    (refused,) = results((await Agent(model, tools=[stdio()]).arun("go")).events)
    assert refused.error is not None
    assert "invalid arguments for tool 'add'" in refused.error
    assert "'b' is a required property" in refused.error
    assert "not of type 'integer'" in refused.error


async def test_a_call_past_the_toolsets_timeout_is_stopped_and_the_run_goes_on() -> None:
    model = ScriptedModel([call("slow", seconds=60), call("add", a=1, b=1), "done"])
    result = await Agent(model, tools=[stdio(timeout=0.5)]).arun("go")
    slow, add = results(result.events)
    assert slow.error == ("the tool did not finish within 0.5 s and was stopped; nothing of it "
                          "was applied")
    assert add.result == {"result": 2}


async def test_the_agents_tool_timeout_applies_to_mcp_tools() -> None:
    model = ScriptedModel([call("slow", seconds=60), "done"])
    result = await Agent(model, tools=[stdio()], tool_timeout=0.5).arun("go")
    (slow,) = results(result.events)
    assert slow.error is not None and "did not finish within 0.5 s" in slow.error


async def test_a_permission_sees_the_mcp_call_and_can_deny_it() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def no_big_sums(call: ToolCall, ctx: Any) -> Any:
        seen.append((call.name, dict(call.arguments)))
        return Deny("too big") if call.arguments.get("a", 0) > 100 else None

    model = ScriptedModel([[call("add", a=1000, b=1), call("add", a=1, b=1)], "done"])
    result = await Agent(model, tools=[stdio()], permissions=[no_big_sums]).arun("go")
    denied, allowed = results(result.events)
    assert seen == [("add", {"a": 1000, "b": 1}), ("add", {"a": 1, "b": 1})]
    assert denied.error == "denied by permission no_big_sums: too big"
    assert allowed.result == {"result": 2}


async def test_approval_pauses_the_named_tool_until_a_person_answers() -> None:
    """"approval per tool name (`MCPToolset(..., approval={"delete_file"})`)": `add` waits for
    a person, `describe_point` does not; after the approval the call runs."""
    toolset = stdio(approval={"add"})
    model = ScriptedModel([call("describe_point", x=0, y=1), call("add", a=4, b=5), "done"])
    agent = Agent(model, tools=[toolset])
    paused = await agent.arun("go")
    assert [r.name for r in results(paused.events)] == ["describe_point"]
    run = await agent.load_run(paused.run_id)
    assert run.status is RunStatus.PAUSED and run.pending is not None
    assert run.pending.tool == "add" and run.pending.arguments == {"a": 4, "b": 5}
    resumed = await agent.aresume(paused.run_id, approve=True)
    (add,) = results(resumed.events)
    assert add.result == {"result": 9}
    assert resumed.answer == "done"


async def test_a_person_may_edit_the_arguments_of_an_mcp_call_checked_by_its_schema() -> None:
    agent = Agent(ScriptedModel([call("add", a=4, b=5), "done"]),
                  tools=[stdio(approval=True)])
    paused = await agent.arun("go")
    with pytest.raises(ValueError, match=r"edited_arguments: invalid arguments for tool 'add': "
                       r"a: 'x' is not of type 'integer'"):
        await agent.aresume(paused.run_id, approve=True, edited_arguments={"a": "x", "b": 1})
    resumed = await agent.aresume(paused.run_id, approve=True,
                                  edited_arguments={"a": 10, "b": 1})
    assert [r.result for r in results(resumed.events)] == [{"result": 11}]


async def test_approval_may_be_a_callable_of_the_tool_name() -> None:
    toolset = stdio(approval=lambda name: name.startswith("desc"))
    tools = {t.name: t for t in await toolset.list_tools()}
    await toolset.aclose()
    assert tools["describe_point"].approval and not tools["add"].approval


async def test_mcp_tools_are_not_idempotent_unless_declared() -> None:
    """"An MCP tool is not idempotent unless declared (`idempotent={"read_file"}`)"."""
    toolset = stdio(idempotent={"add"})
    tools = {t.name: t for t in await toolset.list_tools()}
    await toolset.aclose()
    assert tools["add"].idempotent
    assert not tools["describe_point"].idempotent and not tools["slow"].idempotent


async def test_the_tool_calls_budget_counts_mcp_calls() -> None:
    model = ScriptedModel([call("add", a=1, b=1), call("add", a=2, b=2), "done"])
    agent = Agent(model, tools=[stdio()], limits=Limits(tool_calls=1), store=MemoryStore())
    result = await agent.arun("go")
    assert [r.result for r in results(result.events)] == [{"result": 2}]
    run = await agent.load_run(result.run_id)
    assert run.status is RunStatus.STOPPED and run.stop_reason is StopReason.TOOL_CALLS


async def test_the_audit_chain_records_the_mcp_call() -> None:
    store = MemoryStore()
    model = ScriptedModel([call("add", a=1, b=2), "done"])
    result = await Agent(model, tools=[stdio()], store=store).arun("go")
    records = store.load_audit(result.run_id)
    decision = next(r for r in records if r["kind"] == "decision")
    assert decision["data"]["calls"][0]["tool"] == "add"
    assert decision["data"]["calls"][0]["arguments"] == {"a": 1, "b": 2}
    assert decision["data"]["calls"][0]["idempotent"] is False
    ended = next(r for r in records if r["kind"] == "tool_result")
    assert ended["data"]["tool"] == "add" and ended["data"]["outcome"] == "ok"


async def test_a_server_that_dies_mid_call_gives_an_error_result_and_the_run_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """"a server that dies mid-call: the call gets an error result the model reads ... the run
    goes on"; the next call starts the server again. The command that failed is in the
    server's log, not in what the model and the person read."""
    model = ScriptedModel([call("die"), call("add", a=1, b=2), "done"])
    with caplog.at_level(logging.WARNING, logger="pyox_agents"):
        result = await Agent(model, tools=[stdio(name="files")]).arun("go")
    died, add = results(result.events)
    assert died.error == "the MCP server 'files' is unreachable; try again later"
    assert "the MCP server 'files' is unreachable" in caplog.text
    assert "check the command" in caplog.text
    assert add.result == {"result": 3}
    assert result.answer == "done"


async def test_a_server_killed_between_calls_gives_an_error_result_then_restarts() -> None:
    pids: list[int] = []

    def script(messages: list[Any], tools: list[Any]) -> Any:
        turn = sum(1 for m in messages if m.role == "tool")
        if turn == 0:
            return call("pid")
        if turn == 1:
            pids.append(int(messages[-1].content.split(":")[-1].strip(" }")))
            os.kill(pids[0], signal.SIGKILL)
            return call("add", a=1, b=1)
        if turn == 2:
            return call("add", a=2, b=2)
        return "done"

    result = await Agent(FunctionModel(script), tools=[stdio()]).arun("go")
    _, after_kill, again = results(result.events)
    assert after_kill.error is not None and "is unreachable" in after_kill.error
    assert again.result == {"result": 4}
    assert result.answer == "done"


async def test_a_command_that_cannot_start_leaves_its_tools_out_and_the_model_is_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Listing the tools of an unreachable server at run start: the toolset's tools are missing
    with a warning, and the model reads why; the run goes on."""
    model = ScriptedModel(["I cannot reach the files"])
    toolset = MCPToolset(command=["/no/such/mcp-server"], name="files")
    with caplog.at_level(logging.WARNING, logger="pyox_agents.toolsets"):
        result = await Agent(model, tools=[lookup, toolset]).arun("go")
    assert result.answer == "I cannot reach the files"
    assert [spec.name for spec in model.requests[0].tools] == ["lookup"]
    system = model.requests[0].messages[0].content
    assert "the tools of 'files' are not available in this run" in system
    assert "the MCP server 'files' is unreachable" in system
    assert "check the command '/no/such/mcp-server'" in system
    assert "the tools of 'files' are left out" in caplog.text


async def test_listing_an_unreachable_server_raises_an_error_that_says_what_to_check() -> None:
    toolset = MCPToolset(command=[sys.executable, "-c", "pass"], name="files",
                         connect_timeout=5)
    with pytest.raises(MCPServerUnavailable, match=r"the MCP server 'files' is unreachable: .*"
                       r"check the command .* starts an MCP stdio server"):
        await toolset.list_tools()


async def test_a_command_that_never_answers_is_given_up_after_the_connect_timeout() -> None:
    silent = MCPToolset(command=[sys.executable, "-c", "import time; time.sleep(600)"],
                        name="silent", connect_timeout=1)
    with pytest.raises(MCPServerUnavailable, match=r"the MCP server 'silent' is unreachable: no "
                       r"answer within 1 s; check the command"):
        await silent.list_tools()


async def test_a_name_clash_with_a_local_tool_prefixes_the_toolsets_name() -> None:
    """"name clash with another tool or another toolset: prefix with the toolset's name"."""
    model = ScriptedModel([[call("lookup", key="k"), call("remote_lookup", key="k")], "done"])
    result = await Agent(model, tools=[lookup, stdio(name="remote")]).arun("go")
    local, remote = sorted(results(result.events), key=lambda r: r.name)
    assert (local.name, local.result) == ("lookup", "local k")
    assert (remote.name, remote.result) == ("remote_lookup", {"result": "remote k"})
    names = {spec.name for spec in model.requests[0].tools}
    assert {"lookup", "remote_lookup", "add"} <= names and "remote_add" not in names


async def test_a_name_two_toolsets_share_is_prefixed_in_both() -> None:
    model = ScriptedModel([[call("a_add", a=1, b=1), call("b_add", a=2, b=2)], "done"])
    result = await Agent(model, tools=[stdio(name="a"), stdio(name="b")]).arun("go")
    done = sorted(results(result.events), key=lambda r: r.name)
    assert [(r.name, r.result) for r in done] == [("a_add", {"result": 2}),
                                                  ("b_add", {"result": 4})]
    names = {spec.name for spec in model.requests[0].tools}
    assert {"a_add", "b_add", "a_lookup"} <= names and "add" not in names


async def test_an_entered_agent_keeps_one_server_for_many_runs() -> None:
    """Entered (`async with agent`), the toolset stays connected between runs; otherwise each
    run starts the server and stops it when the run ends."""

    def pid_then_done(messages: list[Any], tools: list[Any]) -> Any:
        return call("pid") if messages[-1].role == "user" else "done"

    def server_pid(result: Any) -> Any:
        return results(result.events)[0].result["result"]

    agent = Agent(FunctionModel(pid_then_done), tools=[stdio()])
    async with agent:
        first = server_pid(await agent.arun("one"))
        second = server_pid(await agent.arun("two"))
    third = server_pid(await agent.arun("three"))
    assert first == second != third


async def test_single_turns_see_and_run_mcp_tools() -> None:
    """`think` and `use_tools`, for loops of one's own, list the toolsets' tools too."""
    model = ScriptedModel([call("add", a=20, b=22), "done"])
    agent = Agent(model, tools=[stdio()])
    conversation = State(messages=[Message.user("go")])
    await agent.athink(conversation)
    await agent.ause_tools(conversation)
    assert "add" in {spec.name for spec in model.requests[0].tools}
    assert conversation.messages[-1].role == "tool"
    assert conversation.messages[-1].content == '{"result":42}'


def test_a_synchronous_run_starts_and_stops_the_server_in_its_own_loop() -> None:
    agent = Agent(ScriptedModel([call("add", a=1, b=1), "one", call("add", a=2, b=2), "two"]),
                  tools=[stdio()])
    first, second = agent.run("a"), agent.run("b")
    assert [r.result for r in results(first.events)] == [{"result": 2}]
    assert [r.result for r in results(second.events)] == [{"result": 4}]


async def test_a_subagents_mcp_tools_run_inside_the_parents_run() -> None:
    helper = Agent(ScriptedModel([call("add", a=3, b=4), "seven"]), tools=[stdio()],
                   name="helper")
    parent = Agent(ScriptedModel([call("helper", task="add 3 and 4"), "it is seven"]),
                   tools=[helper.as_tool("helper", "Adds numbers.")])
    result = await parent.arun("go")
    assert {(r.name, str(r.result)) for r in results(result.events)} >= {
        ("add", "{'result': 7}"), ("helper", "seven")}
    assert result.answer == "it is seven"


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({}, TypeError, "a command .* or url=.*exactly one"),
        ({"command": ["x"], "url": "http://h/mcp"}, TypeError, "exactly one"),
        ({"url": "localhost:8000/mcp"}, ValueError, r"http:// or https:// URL .* got 'localh"),
        ({"command": ["x"], "name": "my files"}, ValueError, "name=.... must be 1 to 32"),
        ({"command": []}, TypeError, "takes a list of str"),
        ({"command": ["x"], "timeout": 0}, ValueError, r"timeout=...\) is a number of seconds"),
        ({"command": ["x"], "connect_timeout": -1}, ValueError, r"connect_timeout=...\) is a"),
    ],
)
def test_a_toolset_is_checked_when_it_is_made(arguments: Any, error: type[Exception],
                                              message: str) -> None:
    with pytest.raises(error, match=message):
        MCPToolset(**arguments)


def test_two_toolsets_of_one_agent_need_different_names() -> None:
    with pytest.raises(ValueError, match="two toolsets are named 'mcp'; give one a name="):
        Agent(ScriptedModel([]), tools=[MCPToolset(["a"]), MCPToolset(["b"])])


async def test_breaking_out_of_a_stream_during_an_mcp_call_stops_the_server(
    tmp_path: Path,
) -> None:
    """A consumer that stops reading cancels the run; the toolset it opened is closed, so the
    server's process ends."""
    marker = tmp_path / "running"
    model = ScriptedModel([call("pid"), call("hang", marker=str(marker)), "never"])
    agent = Agent(model, tools=[stdio()])
    server_pid = None
    async for event in agent.stream("go"):
        if isinstance(event, ToolResult):
            server_pid = event.result["result"]
        if isinstance(event, ToolCallEnded) and event.arguments.get("marker"):
            await anyio.to_thread.run_sync(wait_for, marker)
            break
    assert server_pid is not None
    await anyio.to_thread.run_sync(wait_for_exit, server_pid)


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + 60  # a bound for a broken server, not a pace
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} was not created"
        time.sleep(0.02)


def wait_for_exit(pid: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, f"the MCP server {pid} is still running"
        time.sleep(0.02)


def _gone(pid: int) -> bool:
    """Whether the process `pid` has ended and been reaped (no zombie left either)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _pid_then_done(messages: list[Any], tools: list[Any]) -> Any:
    return call("pid") if messages[-1].role == "user" else "done"


async def test_a_run_has_stopped_and_reaped_its_servers_process_when_it_returns() -> None:
    """"otherwise each run starts the server and stops it when the run ends": when `arun`
    returns, the server's process has exited and been reaped, not left for the event loop's
    end (where it would be a still-running subprocess)."""
    for _ in range(3):
        result = await Agent(FunctionModel(_pid_then_done), tools=[stdio()]).arun("go")
        pid = results(result.events)[0].result["result"]
        assert _gone(pid), f"the server {pid} still runs after the run returned"


async def test_a_close_whose_task_is_cancelled_still_stops_and_reaps_the_server() -> None:
    """A task cancelled while it closes a toolset (as a run's task is when its stream's
    consumer stops) gets its cancellation once the server's process is stopped and reaped."""
    toolset = stdio()
    tools = {t.name: t for t in await toolset.list_tools()}
    pid = (await tools["pid"].function())["result"]
    closing = asyncio.create_task(toolset.aclose())
    await asyncio.sleep(0)
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert _gone(pid), f"the server {pid} still runs after its close was cancelled"
