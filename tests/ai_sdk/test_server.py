"""`POST /agents/{name}/ai-sdk`, its resume GET and stop, through the real Starlette app."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pydantic
import pytest

from pyox_agents import Agent, RunContext, ToolCall, tool
from pyox_agents.models import ScriptedModel
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore
from tests.ag_ui.servers import serving
from tests.server.slow_store import SlowRead

from .helpers import body, check_stream_rules, snapshots, user

pytestmark = pytest.mark.anyio

URL = "/agents/counter/ai-sdk"


class Gate:
    """A tool that waits until the test opens it (threads: tools run in worker threads)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.open = threading.Event()

    async def wait_entered(self) -> None:
        assert await anyio.to_thread.run_sync(self.entered.wait, 10)


def agent_with_gate(gate: Gate, script: list[Any], **kwargs: Any) -> Agent:
    @tool
    def inc(ctx: RunContext, n: int) -> int:
        """Add n to the counter."""
        ctx.state["count"] += n
        return int(ctx.state["count"])

    @tool
    def wait() -> str:
        """Wait for the test."""
        gate.entered.set()
        gate.open.wait(10)
        return "opened"

    return Agent(ScriptedModel(script), tools=[inc, wait], **kwargs)


def client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


def chunks_of(text: str) -> list[dict[str, Any]]:
    datas = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
    assert datas[-1] == "[DONE]"
    return [json.loads(d) for d in datas[:-1]]


def simple_app(**kwargs: Any) -> Any:
    agent = Agent(ScriptedModel([ToolCall("inc", {"n": 2}), "ok"]), tools=[_inc])
    return create_app({"counter": agent}, **kwargs)


@tool(name="inc")
def _inc(ctx: RunContext, n: int) -> int:
    """Add n to the counter."""
    ctx.state["count"] += n
    return int(ctx.state["count"])


async def test_stream_has_the_ui_message_stream_headers() -> None:
    async with client(simple_app()) as http:
        response = await http.post(URL, content=body(user("go"), state={"count": 0}))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["x-accel-buffering"] == "no"
    assert response.headers["cache-control"] == "no-cache"
    assert response.text.rstrip().endswith("data: [DONE]")


async def test_stream_carries_the_run_as_compact_json_chunks() -> None:
    async with client(simple_app()) as http:
        response = await http.post(URL, content=body(user("go"), state={"count": 0}))
    chunks = chunks_of(response.text)
    check_stream_rules(chunks)
    assert snapshots(chunks)[-1] == {"count": 2}
    assert 'data: {"type":"start"' in response.text


@pytest.mark.parametrize(("v", "reason"), [("5", "stop"), ("6", "stop"), ("7", "stop")])
async def test_query_v_picks_the_client_major(v: str, reason: str) -> None:
    async with client(simple_app()) as http:
        response = await http.post(f"{URL}?v={v}", content=body(user("go"), state={"count": 0}))
    chunks = chunks_of(response.text)
    check_stream_rules(chunks, int(v))
    assert chunks[-1]["finishReason"] == reason


async def test_unknown_v_is_400_plain_text() -> None:
    async with client(simple_app()) as http:
        response = await http.post(f"{URL}?v=4", content=body(user("go")))
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/plain")
    assert "5, 6 or 7" in response.text


async def test_malformed_json_is_400_plain_text() -> None:
    async with client(simple_app()) as http:
        response = await http.post(URL, content=b"{not json")
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/plain")
    assert "not JSON" in response.text


async def test_unknown_agent_is_404_plain_text() -> None:
    async with client(simple_app()) as http:
        response = await http.post("/agents/nobody/ai-sdk", content=body(user("go")))
    assert response.status_code == 404
    assert "no agent named 'nobody'" in response.text


async def test_body_over_the_limit_is_413() -> None:
    async with client(simple_app(max_body=200)) as http:
        response = await http.post(URL, content=body(user("x" * 500)))
    assert response.status_code == 413
    assert "limit" in response.text


async def test_state_that_fails_the_state_type_is_422_plain_text() -> None:
    class Counter(pydantic.BaseModel):
        count: int

    agent = Agent(ScriptedModel(["ok"]), tools=[_inc], state_type=Counter)
    async with client(create_app({"counter": agent})) as http:
        response = await http.post(URL, content=body(user("go"), state={"count": "many"}))
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("text/plain")
    assert "count" in response.text


async def test_unknown_parts_from_newer_clients_are_accepted() -> None:
    message = {"id": "u1", "role": "user", "parts": [
        {"type": "text", "text": "go"}, {"type": "custom", "kind": "x.y"},
        {"type": "part-from-the-future", "data": 1}], "metadata": {"new": True}}
    async with client(simple_app()) as http:
        response = await http.post(URL, content=body(message, state={"count": 0}))
    assert response.status_code == 200
    check_stream_rules(chunks_of(response.text))


async def test_second_request_on_a_running_chat_that_rejects_is_409() -> None:
    """`doubleTexting: "reject"` (the default waits: tests/server/test_double_texting.py)."""
    gate = Gate()
    app = create_app({"counter": agent_with_gate(gate, [ToolCall("wait", {}), "ok"])})
    async with client(app) as http, anyio.create_task_group() as group:
        group.start_soon(functools.partial(http.post, URL, content=body(user("go"))))
        await gate.wait_entered()
        second = await http.post(URL, content=body(user("go"), doubleTexting="reject"))
        gate.open.set()
    assert second.status_code == 409
    assert "already active" in second.text


async def test_resume_is_204_when_nothing_runs() -> None:
    async with client(simple_app()) as http:
        response = await http.get(f"{URL}/chat-1/stream")
    assert response.status_code == 204


async def test_resume_replays_then_follows_a_running_run(
    live_server: Callable[[Any], str],
) -> None:
    gate = Gate()
    script = [ToolCall("inc", {"n": 1}), ToolCall("wait", {}, id="w1"), "done"]
    base = live_server(create_app({"counter": agent_with_gate(gate, script)}, keepalive=0.05))
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:
        posted: dict[str, str] = {}

        async def post() -> None:
            response = await http.post(URL, content=body(user("go"), state={"count": 0}))
            posted["text"] = response.text

        async with anyio.create_task_group() as group:
            group.start_soon(post)
            await gate.wait_entered()
            lines: list[str] = []
            async with http.stream("GET", f"{URL}/chat-1/stream") as resumed:
                assert resumed.status_code == 200
                assert resumed.headers["x-vercel-ai-ui-message-stream"] == "v1"
                async for line in resumed.aiter_lines():
                    lines.append(line)
                    text = "\n".join(lines)
                    # the replay came while the run still waits, and keep-alives fill the
                    # silence: let the run go on, the rest comes live
                    if "keep-alive" in line and '"toolCallId":"w1","toolName"' in text:
                        gate.open.set()
    assert gate.open.is_set()
    assert chunks_of(text) == chunks_of(posted["text"])


async def test_a_resume_while_the_run_starts_follows_it() -> None:
    """Rule: a client that resumes a chat's stream while its run starts (the thread taken, its
    start not saved yet: here the store's read of the thread's kept state is slow) gets the
    run's stream. It got 204, no run, and missed the answer: the run took its chat only once
    it had started."""
    store = SlowRead()
    store.slow = "kept"
    agent = Agent(ScriptedModel([ToolCall("inc", {"n": 2}), "ok"]), tools=[_inc])
    async with serving(create_app({"counter": agent}, store=store)) as base, \
            httpx.AsyncClient(base_url=base, timeout=10) as http:
        posted: dict[str, httpx.Response] = {}

        async def post() -> None:
            posted["run"] = await http.post(URL, content=body(user("go"), state={"count": 0}))

        async def resume() -> None:
            posted["resumed"] = await http.get(f"{URL}/chat-1/stream")

        async with anyio.create_task_group() as group:
            group.start_soon(post)
            await store.began.wait()  # the run's start reads the thread's kept state
            group.start_soon(resume)
            await anyio.sleep(0.1)
            store.answer.set()
    assert posted["resumed"].status_code == 200
    assert chunks_of(posted["resumed"].text) == chunks_of(posted["run"].text)


async def test_stop_cancels_the_run_and_keeps_what_committed() -> None:
    gate = Gate()
    store = MemoryStore()
    script = [ToolCall("inc", {"n": 5}), ToolCall("wait", {}), "never"]
    app = create_app({"counter": agent_with_gate(gate, script)}, store=store)
    async with client(app) as http:
        posted: dict[str, Any] = {}

        async def post() -> None:
            posted["response"] = await http.post(URL, content=body(user("go"),
                                                                   state={"count": 1}))

        async with anyio.create_task_group() as group:
            group.start_soon(post)
            await gate.wait_entered()
            stopped = await http.post(f"{URL}/chat-1/stop")
            gate.open.set()
        thread = await http.get("/threads/chat-1")
    assert stopped.json() == {"stopped": True}
    chunks = chunks_of(posted["response"].text)
    check_stream_rules(chunks)
    assert [c["type"] for c in chunks][-2:] == ["abort", "finish"]
    assert chunks[-1]["finishReason"] == "interrupted"
    assert snapshots(chunks)[-1] == {"count": 6}
    assert thread.json()["state"] == {"count": 6}
    assert thread.json()["running"] is False


async def test_stop_when_nothing_runs_says_so() -> None:
    async with client(simple_app()) as http:
        response = await http.post(f"{URL}/chat-1/stop")
    assert response.json() == {"stopped": False}


async def test_resume_speaks_the_major_the_run_was_started_with() -> None:
    gate = Gate()
    app = create_app({"counter": agent_with_gate(gate, [ToolCall("wait", {}), "ok"])})
    following = anyio.Event()

    async def watched(scope: Any, receive: Any, send: Any) -> None:
        async def sending(message: Any) -> None:
            await send(message)
            if message["type"] == "http.response.start" and scope["method"] == "GET":
                following.set()  # the resume GET found the run and follows it

        await app(scope, receive, sending)

    got: dict[str, httpx.Response] = {}
    async with client(watched) as http, anyio.create_task_group() as group:

        async def post() -> None:
            got["post"] = await http.post(f"{URL}?v=5", content=body(user("go")))

        async def resume() -> None:
            got["get"] = await http.get(f"{URL}/chat-1/stream")  # what DefaultChatTransport asks

        group.start_soon(post)
        await gate.wait_entered()
        group.start_soon(resume)
        await following.wait()
        await http.post(f"{URL}/chat-1/stop")
        gate.open.set()
    assert chunks_of(got["post"].text)[-1]["finishReason"] == "other"
    assert chunks_of(got["get"].text)[-1]["finishReason"] == "other"  # ai 5 rejects "interrupted"


async def test_client_major_can_be_given_in_a_header() -> None:
    async with client(simple_app()) as http:
        response = await http.post(URL, content=body(user("go"), state={"count": 0}),
                                   headers={"x-ai-sdk-version": "4"})
    assert response.status_code == 400
