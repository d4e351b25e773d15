"""AG-UI end to end: our endpoint driven by the real `@ag-ui/client` (HttpAgent) and checked
by `ag-ui-validate`.

Every scenario runs against two servers: `pyox_agents.server.create_app` ("server") and a plain
Starlette app built on the public `pyox_agents.ag_ui.stream`/`encode` ("standalone"), and with two
clients: `@ag-ui/client` 1.0 and 0.0.59 (`agui0059`, the one `@copilotkit/react-core` 1.74 and
`@copilotkit/runtime` 1.75 bundle: it declares no protocolVersion and its strict schemas refuse
the 1.0-only fields, so one of them fails its run). Each one
requires that `runAgent()` resolves, the client warns about nothing (no failed state patch, no
verify or enforce complaint) and the client's final `agent.state` equals the thread's state as the
server keeps it (`GET /threads/{id}`).
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from pyox_agents import Agent, RunContext, ToolError, ag_ui, tool
from pyox_agents.models import FunctionModel, ScriptedModel
from pyox_agents.server import create_app
from pyox_agents.service import RunService
from pyox_agents.state.messages import Message, ToolCall
from pyox_agents.stores import MemoryStore
from tests.ag_ui.verify import check_stream, sse_events

Serve = Callable[[Any], str]
RunNode = Callable[..., dict[str, Any]]

VARIANTS = ["server", "standalone"]
CLIENTS = ["@ag-ui/client", "agui0059"]
"""The 1.0 client, and 0.0.59 under its npm alias (tests/e2e/package.json)."""


@pytest.fixture(params=CLIENTS)
def client(request: pytest.FixtureRequest) -> str:
    """The npm package of the AG-UI client that drives the run."""
    return str(request.param)


def standalone_app(agents: dict[str, Agent], store: Any) -> Starlette:
    """An app a user could write around `ag_ui.stream` and `ag_ui.encode`, without our server."""
    agents = {name: agent.with_store(store) for name, agent in agents.items()}
    service = RunService(store, keep_state=True)  # the app keeps the thread's state

    async def run(request: Request) -> Response:
        agent = agents[request.path_params["name"]]
        try:
            run_input, _ = ag_ui.parse_request(await request.body(), agent)
            events = ag_ui.stream(agent, run_input, service=service)
            first = await anext(events)
        except ag_ui.RequestError as exc:
            return JSONResponse({"error": str(exc), "field": exc.field}, status_code=exc.status)

        async def all_events() -> AsyncIterator[Any]:
            yield first
            async for event in events:
                yield event

        return StreamingResponse(ag_ui.encode(all_events()), media_type=ag_ui.MEDIA_TYPE)

    async def thread(request: Request) -> Response:
        kept = await service.kept_state(request.path_params["thread_id"])
        return JSONResponse({"state": json.loads(json.dumps(kept.state or {}))})

    async def stop(request: Request) -> Response:
        return JSONResponse({"stopped": await service.stop(request.path_params["thread_id"])})

    return Starlette(routes=[Route("/agents/{name}/ag-ui", run, methods=["POST"]),
                             Route("/threads/{thread_id}", thread, methods=["GET"]),
                             Route("/threads/{thread_id}/stop", stop, methods=["POST"])])


def start(serve: Serve, variant: str, agent: Agent) -> str:
    store = MemoryStore()
    app = create_app({"a": agent}, store=store) if variant == "server" else \
        standalone_app({"a": agent}, store)
    return serve(app)


def drive(run_node: RunNode, base: str, options: dict[str, Any], client: str,
          thread: str | None = None) -> dict[str, Any]:
    """Run `client` on a fresh thread; check what every scenario requires; the last run."""
    thread = thread or f"t-{uuid.uuid4().hex[:12]}"
    result = run_node("agui_run.mjs", f"{base}/agents/a/ag-ui",
                      {"threadId": thread, "client": client, **options})
    for index, run in enumerate(result["runs"]):
        assert run["resolved"], f"run {index}: runAgent() rejected: {run['error']}"
        assert run["warnings"] == [], f"run {index}: the client warned: {run['warnings']}"
        assert run["response"]["status"] == 200
        declared = run["request"].get("protocolVersion")
        assert declared == ("1.0" if client == "@ag-ui/client" else None)
        assert run["events"][0].get("protocolVersion") == declared
        ids = [m["id"] for m in run["messages"]]
        assert len(ids) == len(set(ids)), f"run {index}: duplicated messages {ids}"
    kept = httpx.get(f"{base}/threads/{thread}", timeout=10).json()["state"]
    assert result["state"] == kept, "the client's state is not the server's"
    return result


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo."""
    ctx.state["todos"].append(text)
    return f"added {text}"


@tool
def add_then_fail(ctx: RunContext, text: str) -> str:
    """Add a todo, then fail."""
    ctx.state["todos"].append(text)
    raise ToolError("the todo service is down")


@tool(approval=True)
def clear_todos(ctx: RunContext, reason: str) -> str:
    """Remove every todo (a person approves first)."""
    ctx.state["todos"] = []
    return "cleared"


def texts(messages: list[dict[str, Any]], role: str = "assistant") -> list[str]:
    return [m.get("content") or "" for m in messages if m["role"] == role]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_chat_reply(serve: Serve, run_node: RunNode, variant: str, client: str) -> None:
    base = start(serve, variant, Agent(ScriptedModel(["Hello there, friend."])))
    result = drive(run_node, base, {"message": "hi"}, client)
    assert texts(result["messages"]) == ["Hello there, friend."]
    assert result["outcome"]["type"] == "success"


HOSTILE_TOKENS = ["He", "llo ", '"quoted" ', "back\\slash ", "line\nbreak ", "tab\t\x7f ",
                  "\ud83d", "\ude00", " lone\udfff ", "emoji \U0001f600 ", "nul\x00 ",
                  "</script><script>", "x" * 700, " end."]
"""A reply's tokens as a model may stream them: JSON's special characters, a surrogate pair
split over two tokens, a lone surrogate, NUL, a long one."""


class _PacedTokens:
    """Streams `HOSTILE_TOKENS` a few milliseconds apart, so each is written while the response
    waits for it (the server's lane for a token of the run's own reply)."""

    name = "paced"

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        from pyox_agents.models.base import TextChunk

        for token in HOSTILE_TOKENS:
            await anyio.sleep(0.003)
            yield TextChunk(token)


@pytest.mark.parametrize("variant", VARIANTS)
def test_hostile_tokens_streamed_one_by_one_reach_the_client_as_the_run_keeps_them(
        serve: Serve, run_node: RunNode, variant: str, client: str) -> None:
    """Every token arrives once, in order, each lone surrogate half as U+FFFD (the text the
    run keeps), through the per-token path of a paced stream as through the event path."""
    from pyox_agents.runtime._replies import valid_text

    base = start(serve, variant, Agent(_PacedTokens()))
    result = drive(run_node, base, {"message": "hi"}, client)
    expected = "".join(valid_text(token) for token in HOSTILE_TOKENS)
    deltas = [e["delta"] for e in result["events"] if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert "".join(deltas) == expected and len(deltas) == len(HOSTILE_TOKENS)
    assert texts(result["messages"]) == [expected]
    assert result["outcome"]["type"] == "success"


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_backend_tool_that_changes_the_state(serve: Serve, run_node: RunNode,
                                               variant: str, client: str) -> None:
    agent = Agent(ScriptedModel([ToolCall("add_todo", {"text": "milk"}), "Added milk."]),
                  tools=[add_todo])
    base = start(serve, variant, agent)
    result = drive(run_node, base, {"initialState": {"todos": ["eggs"]}, "message": "add milk"},
                   client)
    assert result["state"] == {"todos": ["eggs", "milk"]}
    assert [m["role"] for m in result["messages"]] == ["user", "assistant", "tool", "assistant"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_three_parallel_tools_append_to_one_list(serve: Serve, run_node: RunNode,
                                                 variant: str, client: str) -> None:
    calls = [ToolCall("add_todo", {"text": t}) for t in ("a", "b", "c")]
    base = start(serve, variant, Agent(ScriptedModel([calls, "Added three."]), tools=[add_todo]))
    result = drive(run_node, base, {"initialState": {"todos": []}, "message": "add a, b, c"},
                   client)
    assert sorted(result["state"]["todos"]) == ["a", "b", "c"]
    starts = [e for e in result["events"] if e["type"] == "TOOL_CALL_START"]
    assert len({e["toolCallId"] for e in starts}) == 3


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_failing_tool_changes_nothing_and_the_run_goes_on(serve: Serve, run_node: RunNode,
                                                            variant: str, client: str) -> None:
    agent = Agent(ScriptedModel([ToolCall("add_then_fail", {"text": "x"}), "It failed, sorry."]),
                  tools=[add_then_fail])
    base = start(serve, variant, agent)
    result = drive(run_node, base, {"initialState": {"todos": ["keep"]}, "message": "add x"},
                   client)
    assert result["state"] == {"todos": ["keep"]}
    assert "the todo service is down" in texts(result["messages"], "tool")[0]
    assert texts(result["messages"])[-1] == "It failed, sorry."


def approval_options(payload: dict[str, Any]) -> dict[str, Any]:
    return {"initialState": {"todos": ["a", "b"]},
            "runs": [{"message": "clear everything"},
                     {"resume": {"status": "resolved", "payload": payload}}]}


@pytest.mark.parametrize("variant", VARIANTS)
def test_an_approval_answered_yes_runs_the_tool(serve: Serve, run_node: RunNode,
                                                variant: str, client: str) -> None:
    agent = Agent(ScriptedModel([ToolCall("clear_todos", {"reason": "done"}), "Cleared."]),
                  tools=[clear_todos])
    base = start(serve, variant, agent)
    result = drive(run_node, base, approval_options({"approved": True}), client)
    first = result["runs"][0]
    assert first["outcome"]["type"] == "interrupt" and first["state"] == {"todos": ["a", "b"]}
    [interrupt] = first["pendingInterrupts"]
    assert interrupt["reason"] == "approval" and interrupt["responseSchema"]["required"] == [
        "approved"]
    assert result["outcome"]["type"] == "success" and result["pendingInterrupts"] == []
    assert result["state"] == {"todos": []}
    assert texts(result["messages"], "tool") == ["cleared"]
    assert texts(result["messages"])[-1] == "Cleared."


@pytest.mark.parametrize("variant", VARIANTS)
def test_an_approval_answered_no_does_not_run_the_tool(serve: Serve, run_node: RunNode,
                                                       variant: str, client: str) -> None:
    agent = Agent(ScriptedModel([ToolCall("clear_todos", {"reason": "done"}), "Kept them."]),
                  tools=[clear_todos])
    base = start(serve, variant, agent)
    result = drive(run_node, base, approval_options({"approved": False}), client)
    assert result["state"] == {"todos": ["a", "b"]}
    assert "denied" in texts(result["messages"], "tool")[0]


def color_reply(messages: list[Message], tools: list[Any]) -> Any:
    last = messages[-1]
    if last.role == "tool":
        return f"You picked {last.content}."
    assert "pick_color" in [t.name for t in tools]
    return ToolCall("pick_color", {"hint": "warm"})


PICK_COLOR = {"name": "pick_color", "description": "Ask the user to pick a color",
              "parameters": {"type": "object", "properties": {"hint": {"type": "string"}}}}


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_frontend_tools_result_comes_back_as_a_tool_message(serve: Serve, run_node: RunNode,
                                                              variant: str, client: str) -> None:
    base = start(serve, variant, Agent(FunctionModel(color_reply)))
    result = drive(run_node, base, {"runs": [
        {"message": "pick a color", "tools": [PICK_COLOR]},
        {"toolResults": [{"content": "blue"}], "tools": [PICK_COLOR]}]}, client)
    first = result["runs"][0]
    assert first["outcome"]["type"] == "success"
    [call] = [e["toolCallId"] for e in first["events"] if e["type"] == "TOOL_CALL_START"]
    finished = first["events"][-1]
    if client == "@ag-ui/client":
        assert finished["outcome"] == {"type": "success", "pendingToolCallIds": [call]}
    else:  # 0.0.59's strict schema refuses pendingToolCallIds: it finds the call itself
        assert finished["outcome"] == {"type": "success"}
    assert texts(result["messages"])[-1] == "You picked blue."


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_stopped_run_ends_the_clients_run_without_an_error(serve: Serve, run_node: RunNode,
                                                             variant: str, client: str) -> None:
    """A 1.0 client reads `{type: "cancelled"}`; a 0.0.x one a bare RUN_FINISHED."""
    waiting: queue.Queue[str] = queue.Queue()

    @tool
    async def wait_for_stop(ctx: RunContext) -> str:
        """Wait until the run is stopped."""
        waiting.put(ctx.thread_id)
        await anyio.sleep_forever()
        return "never"

    agent = Agent(ScriptedModel([ToolCall("wait_for_stop", {}), "unreached"]),
                  tools=[wait_for_stop])
    base = start(serve, variant, agent)
    thread = f"t-{uuid.uuid4().hex[:12]}"
    stop = f"{base}/agents/a/ai-sdk/{thread}/stop" if variant == "server" else \
        f"{base}/threads/{thread}/stop"
    stopped: list[Any] = []

    def stop_when_waiting() -> None:
        assert waiting.get(timeout=60) == thread
        stopped.append(httpx.post(stop, timeout=30).json())

    stopper = threading.Thread(target=stop_when_waiting, daemon=True)
    stopper.start()
    result = drive(run_node, base, {"initialState": {"todos": ["keep"]}, "message": "wait"},
                   client, thread=thread)
    stopper.join(timeout=60)
    assert stopped == [{"stopped": True}]
    finished = result["events"][-1]
    assert finished["type"] == "RUN_FINISHED"
    if client == "@ag-ui/client":
        assert finished["outcome"] == {"type": "cancelled"}
    else:
        assert "outcome" not in finished
    assert result["state"] == {"todos": ["keep"]}


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_model_error_ends_the_run_with_run_error(serve: Serve, run_node: RunNode,
                                                   variant: str, client: str) -> None:
    base = start(serve, variant, Agent(ScriptedModel([])))
    result = drive(run_node, base, {"initialState": {"todos": []}, "message": "hi"}, client)
    assert result["events"][-1]["type"] == "RUN_ERROR"
    assert result["events"][-1]["code"] == "script_exhausted"
    assert result["outcome"] is None


# -- ag-ui-validate ----------------------------------------------------------------------------


@tool
def count_message(ctx: RunContext, text: str) -> str:
    """Count a message in the shared state."""
    ctx.state["count"] = ctx.state.get("count", 0) + 1
    ctx.state["last"] = text
    return "counted"


def count_then_answer(messages: list[Message], tools: list[Any]) -> Any:
    if messages[-1].role == "user":
        return ToolCall("count_message", {"text": messages[-1].content})
    return "Counted your message."


def validator() -> str:
    beside = Path(sys.executable).parent / "ag-ui-validate"
    path = str(beside) if beside.exists() else shutil.which("ag-ui-validate")
    if path is None:
        pytest.fail("ag-ui-validate is not installed: .venv/bin/pip install "
                    "'ag-ui-validate[transport]'", pytrace=False)
    return path


@pytest.mark.parametrize("variant", ["server", "standalone"])  # it reads CRLF frames too
def test_ag_ui_validate_finds_nothing_in_a_state_changing_run(serve: Serve, variant: str) -> None:
    base = start(serve, variant, Agent(FunctionModel(count_then_answer), tools=[count_message]))
    url = f"{base}/agents/a/ag-ui"
    proc = subprocess.run([validator(), url, "--features", "shared-state", "--fail-on", "warning",
                           "--no-color", "--json"], capture_output=True, text=True, timeout=60)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, json.dumps(report["diagnostics"], indent=1)
    assert report["summary"]["errors"] == report["summary"]["warnings"] == 0
    assert report["eventCount"] > 5


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("declared", ["1.0", None])
def test_the_stream_meets_the_1_0_rules_ag_ui_validate_does_not_check(
        serve: Serve, variant: str, declared: str | None) -> None:
    """With `protocolVersion` 1.0 as @ag-ui/client 1.0 sends it, and without, as 0.0.59 does."""
    base = start(serve, variant, Agent(FunctionModel(count_then_answer), tools=[count_message]))
    body = {"threadId": "t-rules", "runId": "r-rules", "state": {},
            "messages": [{"id": "u1", "role": "user", "content": "Hello!"}],
            **({"protocolVersion": declared} if declared else {})}
    response = httpx.post(f"{base}/agents/a/ag-ui", json=body, timeout=30)
    events = sse_events(response.text)  # split exactly as @ag-ui/client does
    replayed = check_stream(events, state={}, thread_id="t-rules", run_id="r-rules",
                            client=declared or "0.0")
    assert replayed.state == {"count": 1, "last": "Hello!"}
    assert replayed.terminal["outcome"] == {"type": "success"}
