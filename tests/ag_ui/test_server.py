"""POST /agents/{name}/ag-ui on a real uvicorn server: bad input before any stream, the stream's
framing and keep-alives, persistence across a restart, and what a disconnect does to a run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pydantic
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import ScriptedModel
from pyox_agents.server import create_app
from pyox_agents.state.messages import ToolCall
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.servers import frames, post_run, serving
from tests.ag_ui.verify import check_stream

pytestmark = pytest.mark.anyio

USER = {"id": "u1", "role": "user", "content": "hello"}


def run_body(thread: str = "t1", **fields: Any) -> dict[str, Any]:
    """A body as `@ag-ui/client` 1.0 sends it (it declares protocolVersion 1.0)."""
    return {"threadId": thread, "runId": "r1", "protocolVersion": "1.0", "messages": [USER],
            **fields}


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo."""
    ctx.state["todos"].append(text)
    return "added"


def todo_agent(*replies: Any) -> Agent:
    return Agent(ScriptedModel(list(replies) or [ToolCall("add_todo", {"text": "x"}), "Done."]),
                 tools=[add_todo])


class Todos(pydantic.BaseModel):
    todos: list[str] = []
    count: int = 0


async def test_malformed_json_is_a_400_with_a_json_error() -> None:
    async with serving(create_app({"todo": todo_agent()})) as url, httpx.AsyncClient() as client:
        response = await client.post(f"{url}/agents/todo/ag-ui", content=b"{nope")
    assert response.status_code == 400 and "not JSON" in response.json()["error"]


async def test_a_body_that_is_not_a_run_agent_input_is_a_422_naming_the_field() -> None:
    async with serving(create_app({"todo": todo_agent()})) as url, httpx.AsyncClient() as client:
        response = await client.post(f"{url}/agents/todo/ag-ui",
                                     json={"threadId": "t1", "runId": "r1", "messages": [
                                         {"id": "u", "role": "user", "content": 5}]})
    assert response.status_code == 422
    assert response.json()["field"] == "messages[0].content"


async def test_a_state_that_does_not_fit_the_agents_state_type_is_a_422() -> None:
    agent = Agent(ScriptedModel(["hi"]), state_type=Todos)
    async with serving(create_app({"todo": agent})) as url, httpx.AsyncClient() as client:
        response = await client.post(f"{url}/agents/todo/ag-ui",
                                     json=run_body(state={"count": "many"}))
    assert response.status_code == 422 and response.json()["field"] == "state"


async def test_an_unknown_agent_is_a_404() -> None:
    async with serving(create_app({"todo": todo_agent()})) as url, httpx.AsyncClient() as client:
        response = await client.post(f"{url}/agents/nobody/ag-ui", json=run_body())
    assert response.status_code == 404 and "todo" in response.json()["error"]


async def test_an_oversize_body_is_a_413() -> None:
    app = create_app({"todo": todo_agent()}, max_body=1000)
    async with serving(app) as url, httpx.AsyncClient() as client:
        response = await client.post(f"{url}/agents/todo/ag-ui",
                                     json=run_body(state={"big": "x" * 2000}))
    assert response.status_code == 413


async def test_unknown_extra_fields_are_ignored_and_the_run_streams() -> None:
    app = create_app({"todo": todo_agent()})
    async with serving(app) as url, httpx.AsyncClient() as client:
        response, events = await post_run(client, f"{url}/agents/todo/ag-ui", run_body(
            state={"todos": []}, futureField={"a": 1}, forwardedProps={"x": 1}))
    assert response.status_code == 200
    replayed = check_stream(events, state={"todos": []}, thread_id="t1", run_id="r1")
    assert replayed.state == {"todos": ["x"]} and replayed.terminal["type"] == "RUN_FINISHED"


async def test_the_stream_is_sse_that_proxies_do_not_buffer() -> None:
    async with serving(create_app({"todo": todo_agent()})) as url, httpx.AsyncClient() as client:
        response = await client.post(f"{url}/agents/todo/ag-ui", json=run_body(
            state={"todos": []}))
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-accel-buffering"] == "no"


async def test_events_are_framed_with_lf_as_the_client_splits_them() -> None:
    async with serving(create_app({"todo": todo_agent()})) as url, httpx.AsyncClient() as client:
        response = await client.post(f"{url}/agents/todo/ag-ui", json=run_body(
            state={"todos": []}))
    assert "\r" not in response.text


@pytest.mark.parametrize("raw", [
    b"", b"null", b"[]", b'"x"', b"\xff\xfe", json.dumps({"threadId": 1}).encode(),
    json.dumps(run_body(thread="not a/valid id")).encode(),
    json.dumps(run_body(thread="x" * 500)).encode(),
    json.dumps(run_body(state="not an object")).encode(),
    json.dumps(run_body(state=[1, 2])).encode(),
    json.dumps(run_body(messages=[{"id": "a", "role": "assistant", "toolCalls": [
        {"id": "c", "type": "function", "function": {"name": "add_todo",
                                                     "arguments": "{not json"}}]}])).encode(),
    json.dumps(run_body(messages=[{"id": "t", "role": "tool", "toolCallId": "zz",
                                   "content": "x"}])).encode(),
    json.dumps(run_body(tools=[{"name": "f", "description": "d", "parameters": 7}])).encode(),
    json.dumps(run_body(resume=[{"interruptId": "x", "status": "maybe"}])).encode(),
    json.dumps(run_body(resume=[{"interruptId": "x", "status": "resolved"}])).encode(),
    json.dumps(run_body(context=[{"description": "d"}])).encode(),
    json.dumps(run_body(messages=[])).encode(),
])
async def test_no_input_gets_a_500(raw: bytes) -> None:
    async with serving(create_app({"todo": todo_agent()})) as url, httpx.AsyncClient() as client:
        response = await client.post(f"{url}/agents/todo/ag-ui", content=raw)
    assert response.status_code in (200, 400, 404, 409, 413, 422), response.text
    if response.status_code == 200:
        check_stream(frames(response.text))
    else:
        assert "error" in response.json()


def blocking_agent(reached: anyio.Event, release: anyio.Event, seen: list[str]) -> Agent:
    @tool
    async def slow_add(ctx: RunContext, text: str) -> str:
        """Add a todo, slowly."""
        reached.set()
        try:
            await release.wait()
        except BaseException:
            seen.append("cancelled")
            raise
        ctx.state["todos"].append(text)
        seen.append("finished")
        return "added"

    return Agent(ScriptedModel([ToolCall("slow_add", {"text": "slow"}), "Done."]),
                 tools=[slow_add])


async def read_until(lines_in: AsyncIterator[str], event_type: str) -> list[str]:
    """Lines of a streaming response up to the first event of `event_type`."""
    lines = []
    async for line in lines_in:
        lines.append(line)
        if line.startswith("data:") and json.loads(line[5:])["type"] == event_type:
            return lines
    raise AssertionError(f"the stream ended without {event_type}: {lines}")


async def test_a_second_run_on_a_running_thread_that_rejects_is_a_409() -> None:
    """`doubleTexting: "reject"` (the default waits: tests/server/test_double_texting.py)."""
    reached, release, seen = anyio.Event(), anyio.Event(), []
    app = create_app({"todo": blocking_agent(reached, release, seen)})
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        endpoint = f"{url}/agents/todo/ag-ui"
        async with client.stream("POST", endpoint, json=run_body(state={"todos": []})) as first:
            await reached.wait()
            second = await client.post(endpoint, json=run_body(
                state={"todos": []}, forwardedProps={"doubleTexting": "reject"}))
            release.set()
            body = "\n".join([line async for line in first.aiter_lines()])
    assert second.status_code == 409 and "t1" in second.json()["error"]
    assert frames(body)[-1]["type"] == "RUN_FINISHED"


async def test_a_keep_alive_comment_is_sent_during_a_silence() -> None:
    reached, release, seen = anyio.Event(), anyio.Event(), []
    app = create_app({"todo": blocking_agent(reached, release, seen)}, keepalive=0.05)
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client, \
            client.stream("POST", f"{url}/agents/todo/ag-ui",
                          json=run_body(state={"todos": []})) as response:
        lines = response.aiter_lines()
        await read_until(lines, "TOOL_CALL_END")
        comments = []
        async for line in lines:
            if line.startswith(":"):
                comments.append(line)
                release.set()
            elif line.startswith("data:"):
                assert release.is_set(), "an event came while the tool was still waiting"
    assert comments and comments[0].startswith(": keep-alive")


async def test_after_a_restart_a_run_starts_from_the_persisted_state_announced_first(
        tmp_path: Path) -> None:
    path = str(tmp_path / "threads.db")
    async with serving(create_app({"todo": todo_agent()}, store=SQLiteStore(path))) as url, \
            httpx.AsyncClient() as client:
        _, first = await post_run(client, f"{url}/agents/todo/ag-ui",
                                  run_body(state={"todos": ["a"]}))
    assert check_stream(first, state={"todos": ["a"]}).state == {"todos": ["a", "x"]}
    restarted = create_app({"todo": todo_agent("Hello again")}, store=SQLiteStore(path))
    async with serving(restarted) as url, httpx.AsyncClient() as client:
        _, second = await post_run(client, f"{url}/agents/todo/ag-ui",
                                   {**run_body(), "runId": "r2", "messages": [
                                       USER, {"id": "u2", "role": "user", "content": "again"}]})
    # (this client left out the first run's messages: the thread's come first, see
    # test_a_queued_run_gives_its_client_the_reply_it_missed; then the state, before the run's)
    opening = [e["type"] for e in second[:4]]
    assert opening == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "MESSAGES_SNAPSHOT",
                       "STATE_SNAPSHOT"], opening
    assert second[3]["snapshot"] == {"todos": ["a", "x"]}
    assert check_stream(second).state == {"todos": ["a", "x"]}


async def test_a_client_that_disconnects_leaves_the_run_to_finish_and_keep_its_state(
        tmp_path: Path) -> None:
    reached, release, seen = anyio.Event(), anyio.Event(), []
    store = SQLiteStore(str(tmp_path / "t.db"))
    app = create_app({"todo": blocking_agent(reached, release, seen)}, store=store)
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        async with client.stream("POST", f"{url}/agents/todo/ag-ui",
                                 json=run_body(state={"todos": []})) as response:
            lines = response.aiter_lines()  # held: a dropped iterator would close the stream
            await read_until(lines, "TOOL_CALL_END")
            await reached.wait()
            live = app.state.pyox.runs.active("t1")
        release.set()  # the client is gone; the tool goes on
        with anyio.fail_after(10):
            await asyncio.wait([live.task])
        thread = (await client.get(f"{url}/threads/t1")).json()
    assert seen == ["finished"]
    assert thread["state"] == {"todos": ["slow"]} and thread["running"] is False


async def test_with_on_disconnect_cancel_a_client_that_disconnects_cancels_the_run(
        tmp_path: Path) -> None:
    reached, release, seen = anyio.Event(), anyio.Event(), []
    store = SQLiteStore(str(tmp_path / "t.db"))
    app = create_app({"todo": blocking_agent(reached, release, seen)}, store=store,
                     on_disconnect="cancel")
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        async with client.stream("POST", f"{url}/agents/todo/ag-ui",
                                 json=run_body(state={"todos": []})) as response:
            lines = response.aiter_lines()  # held: a dropped iterator would close the stream
            await read_until(lines, "TOOL_CALL_END")
            with anyio.fail_after(10):
                await reached.wait()
            live = app.state.pyox.runs.active("t1")
        with anyio.fail_after(10):
            await asyncio.wait([live.task])
        thread = (await client.get(f"{url}/threads/t1")).json()
    assert seen == ["cancelled"]
    assert thread["state"] == {"todos": []} and thread["running"] is False
