"""`RemoteAgent(url).as_tool(...)` against our own AG-UI server on a real uvicorn on 127.0.0.1:
the remote run is a subagent of the parent's run, exactly like a local one (issue:
"`RemoteAgent(url)` uses any AG-UI endpoint as a subagent: `.as_tool(name=..., state=None |
"read" | "write")`, exactly like a local subagent")."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from pyox_agents import (
    Agent,
    Message,
    RemoteAgent,
    RunContext,
    StateChanged,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    ToolCallStarted,
    ToolResult,
    tool,
)
from pyox_agents.models import FunctionModel, ScriptedModel, ToolCall
from pyox_agents.server import bearer_tokens, create_app
from tests.ag_ui.servers import post_run, serving
from tests.ag_ui.verify import check_stream
from tests.runs import collect, finished, replay, results

pytestmark = pytest.mark.anyio


def _parent(remote_tool: Any, *others: Any, task: str = "find the answer") -> Agent:
    """A parent whose model gives `remote_tool` a task (and calls `others` beside it), then
    answers with what the call gave."""

    def decide(messages: list[Message], tools: list[Any]) -> Any:
        done = [m for m in messages if m.role == "tool"]
        if done:
            return f"parent read: {done[0].content}"
        calls = [ToolCall(remote_tool.name, {"task": task}, id="r1")]
        return [*calls, *(ToolCall(t.name, {}, id=f"c-{t.name}") for t in others)]

    return Agent(FunctionModel(decide), tools=[remote_tool, *others], name="parent")


@tool
def add_found(ctx: RunContext) -> str:
    """Note a finding in the shared state."""
    ctx.state["found"].append("b.py")
    return f"noted; the state has {len(ctx.state['found'])} findings"


def _research(seen: list[Any] | None = None) -> Agent:
    """The remote agent: calls add_found, then answers."""

    def decide(messages: list[Message], tools: list[Any]) -> Any:
        if seen is not None and len(messages) == 1:
            seen.append(messages[0].content)
        if messages[-1].role == "tool":
            return "found it in b.py"
        return ToolCall("add_found", {}, id="rc1")

    return Agent(FunctionModel(decide), tools=[add_found], name="research")


@pytest.fixture
async def research_url() -> AsyncIterator[str]:
    async with serving(create_app({"research": _research()})) as base:
        yield f"{base}/agents/research/ag-ui"


async def test_the_remote_answer_is_the_calls_result_and_its_events_are_the_subagents(
    research_url: str,
) -> None:
    """Issue: "its text, tool calls and usage appear as the subagent's events in the parent's
    stream"."""
    remote = RemoteAgent(research_url, name="research").as_tool(state="write")
    events = await collect(_parent(remote), state={"found": []})
    assert results(events)["r1"].result == "found it in b.py"
    assert finished(events).answer == "parent read: found it in b.py"
    started = next(e for e in events if isinstance(e, SubagentStarted))
    ended = next(e for e in events if isinstance(e, SubagentFinished))
    assert (started.call_id, started.name) == ("r1", "research")
    assert (ended.run_id, ended.call_id, ended.answer) == (started.run_id, "r1", "found it in b.py")
    inside = events[events.index(started) + 1:events.index(ended)]
    assert {getattr(e, "run_id", None) for e in inside} == {started.run_id}
    assert any(isinstance(e, ToolCallStarted) and e.name == "add_found" for e in inside)
    assert any(isinstance(e, ToolResult) and e.call_id == "rc1" for e in inside)
    assert "".join(e.delta for e in inside if isinstance(e, TextDelta)) == "found it in b.py"
    assert finished(events).usage.requests >= 2


async def test_write_commits_the_remote_state_changes_into_the_parents_state(
    research_url: str,
) -> None:
    """Issue: "With "write", the remote run's `STATE_DELTA` events are applied (jsonpatch) to
    the parent's draft and committed when the remote run finishes"."""
    remote = RemoteAgent(research_url, name="research").as_tool(state="write")
    events = await collect(_parent(remote), state={"found": ["a.py"]})
    assert finished(events).state == {"found": ["a.py", "b.py"]}
    assert results(events)["rc1"].result == "noted; the state has 2 findings"  # it saw a.py
    change = next(e for e in events if isinstance(e, StateChanged))
    assert change.call_id == "r1"
    assert events.index(change) == events.index(results(events)["r1"]) + 1
    assert replay({"found": ["a.py"]}, events) == {"found": ["a.py", "b.py"]}


async def test_read_gives_the_state_and_keeps_the_remote_changes_out(research_url: str) -> None:
    """Seed 004 on subagents: with "read" a subagent reads the state and changes nothing."""
    remote = RemoteAgent(research_url, name="research").as_tool(state="read")
    events = await collect(_parent(remote), state={"found": ["a.py"]})
    assert results(events)["rc1"].result == "noted; the state has 2 findings"
    assert finished(events).state == {"found": ["a.py"]}
    assert not [e for e in events if isinstance(e, StateChanged)]


async def test_without_state_access_the_remote_run_gets_no_state() -> None:
    @tool
    def look(ctx: RunContext) -> Any:
        """Read the state."""
        return ctx.state

    remote_agent = Agent(ScriptedModel([ToolCall("look", {}, id="l1"), "looked"]), tools=[look])
    async with serving(create_app({"look": remote_agent})) as base:
        remote = RemoteAgent(f"{base}/agents/look/ag-ui", name="look").as_tool()
        events = await collect(_parent(remote), state={"secret": 1})
    assert results(events)["l1"].result == {}
    assert finished(events).state == {"secret": 1}


async def test_the_task_is_the_remote_runs_only_message() -> None:
    seen: list[Any] = []
    async with serving(create_app({"research": _research(seen)})) as base:
        remote = RemoteAgent(f"{base}/agents/research/ag-ui", name="research").as_tool(
            state="write")
        await collect(_parent(remote, task="look in src/"), state={"found": []})
    assert seen == ["look in src/"]


async def test_a_remote_write_that_conflicts_is_refused_as_a_local_tools_is() -> None:
    """DESIGN: "Two tools writing the same path ...: first to finish wins; the later tool's
    whole change is refused and its result becomes an error the model sees"."""
    local_done = anyio.Event()

    @tool
    async def bump(ctx: RunContext) -> str:
        """Set the counter (remote side)."""
        await local_done.wait()
        ctx.state["count"] = 10
        return "set to 10"

    @tool
    def reset(ctx: RunContext) -> str:
        """Set the counter (parent side), then let the remote go on."""
        ctx.state["count"] = 0
        local_done.set()
        return "reset"

    remote_agent = Agent(ScriptedModel([ToolCall("bump", {}, id="b1"), "bumped"]), tools=[bump])
    async with serving(create_app({"counter": remote_agent})) as base:
        remote = RemoteAgent(f"{base}/agents/counter/ag-ui", name="counter").as_tool(
            state="write")
        events = await collect(_parent(remote, reset), state={"count": 5})
    assert finished(events).state == {"count": 0}
    error = results(events)["r1"].error
    assert error is not None and "the shared state changed at /count while this tool ran" in error


async def test_a_failed_remote_run_is_an_error_the_model_reads(
    research_url: str, caplog: pytest.LogCaptureFixture,
) -> None:
    """Brief: "RUN_ERROR or a transport failure: a tool error the model reads (what failed),
    never a crashed parent run"; the URL is in the server's log, never in what a client reads
    (the security issue: "Nothing secret leaves the server")."""
    async with serving(create_app({"empty": Agent(ScriptedModel([]))})) as base:
        url = f"{base}/agents/empty/ag-ui"
        with caplog.at_level(logging.WARNING, logger="pyox_agents"):
            events = await collect(_parent(RemoteAgent(url, name="empty").as_tool()))
    error = results(events)["r1"].error
    assert error is not None
    assert "the remote agent 'empty' failed (script_exhausted)" in error and url not in error
    assert f"the remote agent 'empty' at {url} failed (script_exhausted)" in caplog.text
    assert finished(events).answer.startswith("parent read:")
    ended = next(e for e in events if isinstance(e, SubagentFinished))
    assert ended.error is not None and "'empty' failed" in ended.error and url not in ended.error


async def test_an_unreachable_remote_is_an_error_naming_the_url_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/agents/x/ag-ui"
    with caplog.at_level(logging.WARNING, logger="pyox_agents"):
        events = await collect(_parent(RemoteAgent(url, name="x").as_tool()))
    error = results(events)["r1"].error
    assert error == "could not reach the remote agent 'x'; try again later"
    assert f"could not reach the remote agent 'x' at {url}" in caplog.text
    assert "check the URL and that the server runs" in caplog.text
    assert finished(events).answer.startswith("parent read:")
    assert not [e for e in events if isinstance(e, SubagentStarted)]


async def test_a_url_that_is_no_ag_ui_endpoint_is_an_error_saying_what_it_answered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with serving(create_app({"research": _research()})) as base:
        missing = f"{base}/agents/nobody/ag-ui"
        health = f"{base}/healthz"
        with caplog.at_level(logging.WARNING, logger="pyox_agents"):
            events = await collect(_parent(RemoteAgent(missing, name="x").as_tool()))
            events_health = await collect(_parent(RemoteAgent(health, name="x").as_tool()))
    assert results(events)["r1"].error == "the remote agent 'x' answered HTTP 404"
    assert results(events_health)["r1"].error == "the remote agent 'x' answered HTTP 405"
    assert f"at {missing} answered HTTP 404" in caplog.text
    assert f"at {health} answered HTTP 405" in caplog.text


async def test_headers_go_with_every_request() -> None:
    app = create_app({"research": _research()}, auth=bearer_tokens({"s3cret": "parent"}))
    async with serving(app) as base:
        url = f"{base}/agents/research/ag-ui"
        allowed = RemoteAgent(url, name="research", headers={"Authorization": "Bearer s3cret"})
        ok = await collect(_parent(allowed.as_tool(state="write")), state={"found": []})
        refused = await collect(_parent(RemoteAgent(url, name="research").as_tool()))
    assert results(ok)["r1"].result == "found it in b.py"
    error = results(refused)["r1"].error
    assert error is not None and "answered HTTP 401" in error


async def test_a_remote_waiting_for_approval_is_an_error_saying_so() -> None:
    """Brief: "An interrupt outcome from the remote: a clear tool error saying the remote agent
    waits for approval"."""

    @tool(approval=True)
    def pay(ctx: RunContext) -> str:
        """Pay."""
        return "paid"

    remote_agent = Agent(ScriptedModel([ToolCall("pay", {}, id="p1"), "paid"]), tools=[pay])
    async with serving(create_app({"cashier": remote_agent})) as base:
        url = f"{base}/agents/cashier/ag-ui"
        events = await collect(_parent(RemoteAgent(url, name="cashier").as_tool()))
    error = results(events)["r1"].error
    assert error is not None and url not in error
    assert "the remote agent 'cashier' waits for a person's approval" in error
    assert "allow pay with these arguments?" in error
    assert finished(events).outcome == "success"


async def test_a_parent_served_over_ag_ui_streams_the_remote_run_as_its_subagent() -> None:
    """Two of our servers chained: a page reading the parent's AG-UI stream sees the remote
    run between SUBAGENT_STARTED and SUBAGENT_FINISHED (its events with `subagentRunId`), and
    the remote's change as the parent's STATE_DELTA; the stream passes the client's checks."""
    async with serving(create_app({"research": _research()})) as remote_base:
        remote = RemoteAgent(f"{remote_base}/agents/research/ag-ui", name="research")
        parent = _parent(remote.as_tool(state="write"))
        async with serving(create_app({"parent": parent})) as base, \
                httpx.AsyncClient(base_url=base) as http:
            body = {"threadId": "t1", "runId": "r1", "protocolVersion": "1.0",
                    "state": {"found": []},
                    "messages": [{"id": "u1", "role": "user", "content": "go"}]}
            response, frames = await post_run(http, "/agents/parent/ag-ui", body)
    assert response.status_code == 200, response.text
    replayed = check_stream(frames, state={"found": []}, thread_id="t1", run_id="r1")
    assert replayed.state == {"found": ["b.py"]}
    started = next(f for f in frames if f["type"] == "SUBAGENT_STARTED")
    assert (started["name"], started["parentToolCallId"]) == ("research", "r1")
    nested = [f for f in frames if f.get("subagentRunId") == started["subagentRunId"]]
    assert {"TOOL_CALL_START", "TEXT_MESSAGE_CONTENT", "SUBAGENT_FINISHED"} <= {
        f["type"] for f in nested}
    assert frames[-1]["result"] == "parent read: found it in b.py"


def test_a_url_that_is_not_http_is_refused_saying_what_to_give() -> None:
    with pytest.raises(ValueError, match=r"takes the http\(s\) URL of an AG-UI endpoint.*"
                                         r"got 'localhost:8000/ag-ui'"):
        RemoteAgent("localhost:8000/ag-ui")


def test_as_tool_needs_a_name_and_a_known_state() -> None:
    remote = RemoteAgent("http://127.0.0.1:1/ag-ui")
    with pytest.raises(ValueError, match=r"as_tool\(\) needs a name: pass name=\.\.\."):
        remote.as_tool()
    with pytest.raises(ValueError, match=r'is None, "read" or "write", got \'all\''):
        remote.as_tool(name="x", state="all")  # type: ignore[arg-type]
    assert remote.as_tool(name="x").name == "x"


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=60, check=False)


def test_httpx_is_imported_only_when_a_remote_agent_is_called() -> None:
    """Issue: "nothing of it imported unless used"."""
    done = _python("""
        import sys
        from pyox_agents import Agent, RemoteAgent
        tool = RemoteAgent("http://127.0.0.1:1/ag-ui", name="x").as_tool(state="write")
        Agent("demo", tools=[tool])
        print("httpx" in sys.modules)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_without_httpx_remote_agent_says_what_to_install() -> None:
    done = _python("""
        import sys
        sys.modules["httpx"] = None   # as if httpx were not installed
        from pyox_agents import RemoteAgent
        try:
            RemoteAgent("http://127.0.0.1:1/ag-ui")
        except ImportError as exc:
            print(exc)
    """)
    assert done.returncode == 0, done.stderr
    assert "pip install 'pyox-agents[remote]'" in done.stdout


async def test_the_remote_runs_usage_counts_for_the_parents_conversation(
    research_url: str,
) -> None:
    """Issue: its "usage appear[s]" as a subagent's: added to the parent's conversation when
    the call closes, as a local subagent's is (the RUN_FINISHED `usage` of the remote)."""
    remote = RemoteAgent(research_url, name="research").as_tool(state="write")
    result = await _parent(remote).arun("go", state={"found": []})
    own, total = result.usage, result.conversation.usage
    assert total.input_tokens > own.input_tokens and total.output_tokens > own.output_tokens
    assert total.requests == own.requests + 1  # one TokenUsage entry in the remote's usage


def _raw_app(frames: list[dict[str, Any]]) -> Starlette:
    """An endpoint that streams `frames`, then ends its response (a server cut off mid-run)."""

    async def run(request: Request) -> StreamingResponse:
        async def send() -> AsyncIterator[bytes]:
            for frame in frames:
                yield f"data: {json.dumps(frame)}\n\n".encode()

        return StreamingResponse(send(), media_type="text/event-stream")

    return Starlette(routes=[Route("/ag-ui", run, methods=["POST"])])


async def test_a_stream_cut_before_the_run_ended_is_an_error_and_closes_what_was_open() -> None:
    """DESIGN: "everything opened is closed before" a run's end, the subagent's part too."""
    frames = [{"type": "RUN_STARTED", "threadId": "t", "runId": "remote-run"},
              {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
              {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "half a"}]
    async with serving(_raw_app(frames)) as base:
        url = f"{base}/ag-ui"
        events = await collect(_parent(RemoteAgent(url, name="cut").as_tool()))
    error = results(events)["r1"].error
    assert error == "the stream of the remote agent 'cut' ended before its run did; try again"
    inside = [e for e in events if getattr(e, "run_id", None) == "remote-run"]
    assert [type(e).__name__ for e in inside] == [
        "SubagentStarted", "TextStarted", "TextDelta", "TextEnded", "SubagentFinished"]
    assert finished(events).answer.startswith("parent read:")


async def test_a_state_delta_that_does_not_apply_is_an_error_and_changes_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    frames = [{"type": "RUN_STARTED", "threadId": "t", "runId": "remote-run"},
              {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/nope/0",
                                                 "value": 1}]},
              {"type": "RUN_FINISHED", "threadId": "t", "runId": "remote-run"}]
    async with serving(_raw_app(frames)) as base:
        remote = RemoteAgent(f"{base}/ag-ui", name="bad").as_tool(state="write")
        with caplog.at_level(logging.WARNING, logger="pyox_agents"):
            events = await collect(_parent(remote), state={"found": []})
    error = results(events)["r1"].error
    assert error is not None and "sent a state change that does not apply to its state" in error
    assert "sent a STATE_DELTA that does not apply to its state" in caplog.text
    assert "/nope" in caplog.text
    assert finished(events).state == {"found": []}


async def test_a_connection_that_breaks_mid_run_is_an_error_saying_so() -> None:
    """A server that dies mid-stream (the connection closes inside a chunked body)."""

    async def run(request: Request) -> StreamingResponse:
        async def send() -> AsyncIterator[bytes]:
            yield b'data: {"type": "RUN_STARTED", "threadId": "t", "runId": "remote-run"}\n\n'
            raise ConnectionAbortedError("the server went away")

        return StreamingResponse(send(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/ag-ui", run, methods=["POST"])])
    async with serving(app, log_level="critical") as base:
        url = f"{base}/ag-ui"
        events = await collect(_parent(RemoteAgent(url, name="flaky").as_tool()))
    error = results(events)["r1"].error
    assert error == "the stream of the remote agent 'flaky' broke off; try again"
    ended = next(e for e in events if isinstance(e, SubagentFinished))
    assert ended.run_id == "remote-run" and ended.error is not None


async def test_with_read_a_remote_delta_that_does_not_apply_here_is_no_error() -> None:
    """With "read" the remote's state changes stay its own: they are not even applied."""
    frames = [{"type": "RUN_STARTED", "threadId": "t", "runId": "remote-run"},
              {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/nope/0",
                                                 "value": 1}]},
              {"type": "RUN_FINISHED", "threadId": "t", "runId": "remote-run", "result": "ok"}]
    async with serving(_raw_app(frames)) as base:
        remote = RemoteAgent(f"{base}/ag-ui", name="reader").as_tool(state="read")
        events = await collect(_parent(remote), state={"found": []})
    assert results(events)["r1"].result == "ok"
    assert finished(events).state == {"found": []}


async def test_a_remote_lone_surrogate_is_replaced_and_the_parents_stream_goes_on() -> None:
    """Rule: an event's strings are text. A remote's JSON may escape half a surrogate pair
    (`"\\ud800"`, valid JSON, no UTF-8 text); its deltas and answer come with U+FFFD there, as
    a model's reply does, and the parent's AG-UI stream ends with RUN_FINISHED (it ended with
    an internal RUN_ERROR before)."""
    frames = [{"type": "RUN_STARTED", "threadId": "t", "runId": "remote-run"},
              {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
              {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "half \ud800 a"},
              {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": " pair \ud83d\ude00"},
              {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
              {"type": "TOOL_CALL_START", "toolCallId": "rc1", "toolCallName": "look",
               "parentMessageId": "m1"},
              {"type": "TOOL_CALL_ARGS", "toolCallId": "rc1", "delta": '{"q": "\\ud800"}'},
              {"type": "TOOL_CALL_END", "toolCallId": "rc1"},
              {"type": "TOOL_CALL_RESULT", "messageId": "r-rc1", "toolCallId": "rc1",
               "content": '{"found": "\\udc00"}'},
              {"type": "RUN_FINISHED", "threadId": "t", "runId": "remote-run",
               "result": "ok \udc00"}]
    async with serving(_raw_app(frames)) as remote_base:
        parent = _parent(RemoteAgent(f"{remote_base}/ag-ui", name="odd").as_tool())
        async with serving(create_app({"parent": parent})) as base, \
                httpx.AsyncClient(base_url=base) as http:
            body = {"threadId": "t1", "runId": "r1", "protocolVersion": "1.0", "state": {},
                    "messages": [{"id": "u1", "role": "user", "content": "go"}]}
            response, out = await post_run(http, "/agents/parent/ag-ui", body)
    assert response.status_code == 200, response.text
    check_stream(out, state={}, thread_id="t1", run_id="r1")
    deltas = [f["delta"] for f in out
              if f["type"] == "TEXT_MESSAGE_CONTENT" and f.get("subagentRunId") == "remote-run"]
    assert deltas == ["half \ufffd a", " pair \U0001f600"]
    (result,) = [f for f in out if f["type"] == "TOOL_CALL_RESULT" and f["toolCallId"] == "rc1"]
    assert json.loads(result["content"]) == {"found": "\ufffd"}
    assert out[-1]["type"] == "RUN_FINISHED"
    assert out[-1]["result"] == "parent read: ok \ufffd"


async def test_a_remote_event_nested_too_deep_is_an_error_saying_so_and_the_parent_goes_on(
) -> None:
    """Rule: every bad input gets a clear error. An event nested deeper than a parser follows
    is refused as one that is not a JSON object (not a `RecursionError` out of the tool); the
    parent's model reads the error and answers."""
    deep = "[" * 100_000 + "]" * 100_000

    async def run(request: Request) -> StreamingResponse:
        async def send() -> AsyncIterator[bytes]:
            yield b'data: {"type":"RUN_STARTED","threadId":"t","runId":"remote-run"}\n\n'
            yield f'data: {{"type":"CUSTOM","name":"deep","value":{deep}}}\n\n'.encode()

        return StreamingResponse(send(), media_type="text/event-stream")

    async with serving(Starlette(routes=[Route("/ag-ui", run, methods=["POST"])])) as base:
        events = await collect(_parent(RemoteAgent(f"{base}/ag-ui", name="deep").as_tool()))
    error = results(events)["r1"].error
    assert error == "the remote agent 'deep' sent an event that is not a JSON object"
    assert finished(events).answer.startswith("parent read:")
