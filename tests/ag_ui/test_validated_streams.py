"""Every AG-UI stream passes `ag-ui-validate --fail-on warning`, the cut-short ones too: a run
that fails in the middle of a tool call's arguments (no TOOL_CALL_END over arguments that do not
parse: AGUI204), and a run with a subagent (the subagent's steps have names of their own, not
the parent's open `step-0`: AGUI606)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents import Agent, RunContext, ag_ui, tool
from pyox_agents.models import ModelError, ScriptedModel, ToolCall
from pyox_agents.models.base import TextChunk, ToolCallChunk
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore
from tests.ag_ui.servers import frames, serving
from tests.ag_ui.verify import check_stream, results_before_their_calls
from tests.e2e.test_ag_ui_e2e import validator

pytestmark = pytest.mark.anyio


@tool
def look(ctx: RunContext, q: str) -> str:
    """Look something up."""
    return f"found {q}"


class CutMidArguments:
    """A model whose connection drops while it writes a tool call's arguments."""

    name = "cut"

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        yield TextChunk("let me look ")
        yield ToolCallChunk(index=0, name="look", arguments='{"q": "ab')
        raise ModelError("the connection dropped", "connection")


async def recorded(agent: Agent, path: Path) -> Path:
    body = {"threadId": "t", "runId": "r", "state": {}, "protocolVersion": "1.0",
            "messages": [{"id": "u1", "role": "user", "content": "go"}]}
    frames = [frame async for frame in ag_ui.encode(ag_ui.stream(agent, body))]
    await anyio.Path(path).write_bytes(b"".join(frames))
    return path


def findings(path: Path) -> list[dict[str, Any]]:
    proc = subprocess.run([validator(), str(path), "--fail-on", "warning", "--no-color",
                           "--json"], capture_output=True, text=True, timeout=60)
    report = json.loads(proc.stdout)
    found = [d for d in report["diagnostics"] if d["severity"] != "info"]
    assert proc.returncode == 0 or found, proc.stderr
    return found


async def test_a_run_that_fails_mid_arguments_is_a_valid_stream(tmp_path: Path) -> None:
    path = await recorded(Agent(CutMidArguments(), tools=[look]), tmp_path / "cut.sse")
    assert findings(path) == []
    types = [json.loads(line[5:])["type"] for line in path.read_text().splitlines()
             if line.startswith("data:")]
    assert "TOOL_CALL_ARGS" in types and "TOOL_CALL_END" not in types
    assert types[-1] == "RUN_ERROR"


async def test_a_run_with_a_subagent_is_a_valid_stream(tmp_path: Path) -> None:
    helper = Agent(ScriptedModel([ToolCall("look", {"q": "x"}), "found x"]), tools=[look])
    parent = Agent(ScriptedModel([ToolCall("helper", {"task": "find x"}), "done"]),
                   tools=[helper.as_tool(name="helper", description="A helper.")])
    path = await recorded(parent, tmp_path / "subagent.sse")
    assert findings(path) == []
    assert '"SUBAGENT_STARTED"' in path.read_text()


async def test_a_run_whose_models_reuse_call_ids_is_a_valid_stream(tmp_path: Path) -> None:
    """A model that gives two calls of one reply one id, and a subagent whose model names its
    call as the parent's model named the call that runs it: no `toolCallId` twice (AGUI205)."""
    helper = Agent(ScriptedModel([ToolCall("look", {"q": "x"}, id="call_0"), "found x"]),
                   tools=[look])
    twice = [ToolCall("look", {"q": "a"}, id="call_0"), ToolCall("look", {"q": "b"}, id="call_0")]
    parent = Agent(ScriptedModel([twice, ToolCall("helper", {"task": "find x"}, id="call_0"),
                                  "done"]),
                   tools=[look, helper.as_tool(name="helper", description="A helper.")])
    path = await recorded(parent, tmp_path / "reused.sse")
    assert findings(path) == []
    events = [json.loads(line[5:]) for line in path.read_text().splitlines()
              if line.startswith("data:")]
    started = [e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_START"]
    assert len(started) == 4 == len(set(started)) and events[-1]["type"] == "RUN_FINISHED"


class Interleaved:
    """A model that streams two calls' arguments in turns (each chunk names its call by index,
    as OpenAI's wire format lets a server do), then answers."""

    name = "interleaved"

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        if request.messages[-1].role == "tool":
            yield TextChunk("done")
            return
        yield ToolCallChunk(index=0, name="look", id="a")
        yield ToolCallChunk(index=1, name="look", id="b")
        for piece in ('{"q": ', '"x', '"}'):
            yield ToolCallChunk(index=0, arguments=piece)
            yield ToolCallChunk(index=1, arguments=piece.replace("x", "y"))


async def test_calls_whose_arguments_come_in_turns_stream_their_own(tmp_path: Path) -> None:
    """Rule: each call's streamed arguments are the ones it runs with, however the model
    interleaves them (a call ends with its reply, not when the next one starts)."""
    path = await recorded(Agent(Interleaved(), tools=[look]), tmp_path / "turns.sse")
    assert findings(path) == []
    events = [json.loads(line[5:]) for line in path.read_text().splitlines()
              if line.startswith("data:")]
    args: dict[str, str] = {}
    for event in events:
        if event["type"] == "TOOL_CALL_ARGS":
            args[event["toolCallId"]] = args.get(event["toolCallId"], "") + event["delta"]
    assert {call: json.loads(text) for call, text in args.items()} == {"a": {"q": "x"},
                                                                         "b": {"q": "y"}}
    results = {e["toolCallId"]: e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"}
    assert results == {"a": "found x", "b": "found y"}


class TextAroundACall:
    """A model whose reply writes text, asks for a call, then writes more text."""

    name = "around"

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        if request.messages[-1].role == "tool":
            yield TextChunk("done")
            return
        yield TextChunk("first ")
        yield ToolCallChunk(index=0, name="look", id="a", arguments='{"q": "x"}')
        yield TextChunk("then more")


async def test_a_reply_with_text_around_its_call_is_one_message(tmp_path: Path) -> None:
    """Rule: a reply is one message, its text started once: text after its call goes on in
    the same message (not a second TEXT_MESSAGE_START of its id: AGUI104)."""
    path = await recorded(Agent(TextAroundACall(), tools=[look]), tmp_path / "around.sse")
    assert findings(path) == []
    events = [json.loads(line[5:]) for line in path.read_text().splitlines()
              if line.startswith("data:")]
    first = next(e["messageId"] for e in events if e["type"] == "TEXT_MESSAGE_START")
    text = "".join(e["delta"] for e in events
                   if e["type"] == "TEXT_MESSAGE_CONTENT" and e["messageId"] == first)
    starts = [e for e in events if e["type"] == "TEXT_MESSAGE_START" and e["messageId"] == first]
    assert text == "first then more" and len(starts) == 1


class StoppedMidArguments:
    """A model that writes half a tool call's arguments, then thinks (until the run is
    stopped)."""

    name = "half"

    def __init__(self) -> None:
        self.writing = anyio.Event()

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        yield ToolCallChunk(index=0, name="look", id="call_half")
        yield ToolCallChunk(index=0, arguments='{"q": "ha')
        self.writing.set()
        await anyio.sleep(60)
        yield ToolCallChunk(index=0, arguments='lf"}')


@pytest.mark.parametrize("client", ["1.0", "0.0"])
async def test_a_run_stopped_mid_arguments_ends_with_run_error(tmp_path: Path,
                                                               client: str) -> None:
    """Rule (AG-UI 1.0): a stopped run closes everything it opened before RUN_FINISHED, or
    ends with RUN_ERROR if it cannot. A call stopped while its arguments stream cannot be
    closed (TOOL_CALL_END over arguments that do not parse: AGUI204), and RUN_FINISHED with it
    open is refused by the client ("Cannot send 'RUN_FINISHED' while tool calls are still
    active"): the stream ends with RUN_ERROR "cancelled", valid for both client versions."""
    model = StoppedMidArguments()
    app = create_app({"a": Agent(model, tools=[look])})
    body: dict[str, Any] = {"threadId": "t", "runId": "r", "state": {}, "tools": [],
                            "context": [], "forwardedProps": {},
                            "messages": [{"id": "u1", "role": "user", "content": "go"}]}
    if client == "1.0":
        body["protocolVersion"] = "1.0"
    async with serving(app) as base, httpx.AsyncClient(base_url=base, timeout=30) as http:
        run = asyncio.create_task(http.post("/agents/a/ag-ui", json=body))
        with anyio.fail_after(10):
            await model.writing.wait()
        assert (await http.post("/agents/a/ag-ui/t/stop")).status_code == 200
        response = await run
    events = frames(response.text)
    assert [e["type"] for e in events if e["type"].startswith("TOOL_CALL")] == \
        ["TOOL_CALL_START", "TOOL_CALL_ARGS"]
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "cancelled"
    check_stream(events, state={}, thread_id="t", run_id="r", client=client)
    path = tmp_path / "stopped.sse"
    path.write_text(response.text)
    assert findings(path) == []


@tool(approval=True)
def pay(amount: int) -> str:
    """Pay `amount`."""
    return f"paid {amount}"


@pytest.mark.parametrize("history", ["none", "all"])
async def test_a_resume_names_the_call_its_result_answers(tmp_path: Path, history: str) -> None:
    """Rule: a stream names a tool call before its result (ag-ui-validate AGUI207). A resume's
    results answer calls an earlier run made: its opening MESSAGES_SNAPSHOT names them, from
    the thread as the server holds it when the client sent none of its history, and as the
    client sent them when it sent all of it."""
    store = MemoryStore()
    agent = Agent(ScriptedModel([ToolCall("pay", {"amount": 3}), "done"]), tools=[pay],
                  store=store)
    body: dict[str, Any] = {"threadId": "t", "runId": "r1", "state": {}, "tools": [],
                            "context": [], "forwardedProps": {}, "protocolVersion": "1.0",
                            "messages": [{"id": "u1", "role": "user", "content": "pay 3"}]}
    first = [e.model_dump(by_alias=True, exclude_none=True, mode="json")
             async for e in ag_ui.stream(agent, body)]
    (interrupt,) = first[-1]["outcome"]["interrupts"]
    held = first[-2]["messages"] if history == "all" else []
    answer = {**body, "runId": "r2", "messages": held, "resume": [
        {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]}
    path = tmp_path / "resume.sse"
    path.write_bytes(b"".join([frame async for frame in
                               ag_ui.encode(ag_ui.stream(agent, answer))]))
    assert findings(path) == []
    events = frames(path.read_text())
    assert results_before_their_calls(events) == [] and events[-1]["type"] == "RUN_FINISHED"
    opening = events[1]
    assert opening["type"] == "MESSAGES_SNAPSHOT"
    if history == "all":
        assert opening["messages"] == held
    else:
        assert [m["role"] for m in opening["messages"]] == ["user", "assistant"]
        assert opening["messages"][0] == {"id": "u1", "role": "user", "content": "pay 3"}


async def test_a_resume_keeps_each_user_message_under_its_own_id() -> None:
    """Rule: no message reaches a client under another message's id. A client that holds a
    user message the thread never got (and not the call its resume answers) gets the thread's
    messages with its own ids where the thread has them: its `u1` is still "hi", its `u2` still
    "pay 3" (its ids were paired from its oldest, so "hi" came back as its unknown message)."""
    store = MemoryStore()
    agent = Agent(ScriptedModel(["hello", ToolCall("pay", {"amount": 3}), "done"]),
                  tools=[pay], store=store)
    base: dict[str, Any] = {"threadId": "t", "state": {}, "tools": [], "context": [],
                            "forwardedProps": {}, "protocolVersion": "1.0"}
    hi = {"id": "u1", "role": "user", "content": "hi"}
    pay3 = {"id": "u2", "role": "user", "content": "pay 3"}
    [e async for e in ag_ui.stream(agent, {**base, "runId": "r1", "messages": [hi]})]
    paused = [e.model_dump(by_alias=True, exclude_none=True, mode="json")
              async for e in ag_ui.stream(agent, {**base, "runId": "r2", "messages": [pay3]})]
    (interrupt,) = paused[-1]["outcome"]["interrupts"]
    ghost = {"id": "ghost", "role": "user", "content": "never sent"}
    answer = {**base, "runId": "r3", "messages": [ghost, hi, pay3], "resume": [
        {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]}
    events = [e.model_dump(by_alias=True, exclude_none=True, mode="json")
              async for e in ag_ui.stream(agent, answer)]
    for snapshot in (events[1], events[-2]):
        assert snapshot["type"] == "MESSAGES_SNAPSHOT"
        users = [(m["id"], m["content"]) for m in snapshot["messages"] if m["role"] == "user"]
        assert users == [("u1", "hi"), ("u2", "pay 3")]
