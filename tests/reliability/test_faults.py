"""Issue 10's fault suite: a failing model, tool, store or client never leaves a thread
half-written, and the server serves on.

Every test runs a real uvicorn server on 127.0.0.1 with a SQLiteStore. The agent's model asks
for `add("a")`, `add("b")`, `add("c")` (one per step), then says "Done."; a fault is injected
somewhere in that. Afterwards the thread's persisted state — `GET /threads/{id}`, and the kept
state in the store — equals the state after the last tool that completed, which is read from
the persisted conversation itself (one item per successful `add` result), and the server answers
a fresh run (on another agent, `ok`) to its end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ModelError, ModelRequest, TextChunk, ToolCall
from pyox_agents.models._streaming import stream_reply
from pyox_agents.server import create_app
from pyox_agents.state.messages import Message, Reply
from pyox_agents.stores import SQLiteStore
from pyox_agents.stores.base import StepRecord
from tests.ag_ui.servers import serving as served

pytestmark = pytest.mark.anyio

ITEMS = ["a", "b", "c"]


def serving(app: Any) -> contextlib.AbstractAsyncContextManager[str]:
    """Serve `app` with uvicorn on 127.0.0.1 in this event loop; yields the base URL."""
    return served(app, log_level="critical", graceful=2)


def events_of(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in text.replace("\r\n", "\n").split("\n")
            if line.startswith("data:")]


def body(thread: str, text: str = "go") -> dict[str, Any]:
    """A RunAgentInput as @ag-ui/client 1.0 sends it (it declares protocolVersion 1.0)."""
    return {"threadId": thread, "runId": "r1", "protocolVersion": "1.0", "state": {"items": []},
            "messages": [{"id": "u1", "role": "user", "content": text}]}


def since_user(messages: list[Message]) -> list[Message]:
    last = max(i for i, m in enumerate(messages) if m.role == "user")
    return messages[last + 1:]


def three_adds(messages: list[Message], tools: list[Any]) -> Any:
    """add a, add b, add c (whatever each result was), then "Done."."""
    done = sum(1 for m in since_user(messages) if m.role == "tool")
    return ToolCall("add", {"text": ITEMS[done]}) if done < len(ITEMS) else "Done."


@tool
async def add(ctx: RunContext, text: str) -> str:
    """Add an item."""
    await anyio.sleep(0.002)  # the run is live while the client reads
    ctx.state["items"].append(text)
    return "added"


def todo_agent(model: Any = None, *tools: Any) -> Agent:
    return Agent(model or FunctionModel(three_adds), tools=[add, *tools])


async def persisted(client: httpx.AsyncClient, url: str, app: Any, store: SQLiteStore,
                    thread: str) -> Any:
    """The thread's state as GET /threads gives it, checked against the store and against the
    conversation: None when nothing of the thread was saved."""
    with anyio.fail_after(10):  # a detached run goes on: wait for its end
        while True:
            response = await client.get(f"{url}/threads/{thread}")
            done = app.state.pyox.runs.active(thread) is None  # the test's window: 404 too
            if done and (response.status_code == 404 or not response.json()["running"]):
                break
            await anyio.sleep(0.01)
    if response.status_code == 404:
        with pytest.raises(LookupError):
            store.load_thread(thread)
        return None
    thread_json = response.json()
    state = thread_json["state"]
    kept = store.load_thread(thread).shared_state
    if kept is not None:
        assert kept == state, "the store's kept state is the state of the conversation"
    results = {m["call_id"]: m["content"] for m in thread_json["messages"] if m["role"] == "tool"}
    added = [c["arguments"]["text"] for m in thread_json["messages"] if m["role"] == "assistant"
             for c in m["tool_calls"] if c["name"] == "add" and results.get(c["id"]) == "added"]
    assert state in ({}, {"items": added}), (state, added)
    return state


async def serves_on(client: httpx.AsyncClient, url: str, thread: str = "after") -> None:
    assert (await client.get(f"{url}/healthz")).status_code == 200
    response = await client.post(f"{url}/agents/ok/ag-ui", json=body(thread))
    assert response.status_code == 200
    last = events_of(response.text)[-1]
    assert last["type"] == "RUN_FINISHED", last
    assert (await client.get(f"{url}/threads/{thread}")).json()["state"] == {"items": ITEMS}


# -- the model fails mid-stream ------------------------------------------------------------------


class FailingModel:
    """Asks for `add` `fail_after` times, then streams some text and raises `ModelError`."""

    name = "failing"

    def __init__(self, fail_after: int) -> None:
        self.fail_after = fail_after

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        messages = list(request.messages)
        done = sum(1 for m in since_user(messages) if m.role == "tool")
        if done < self.fail_after:
            reply = Reply(tool_calls=(ToolCall("add", {"text": ITEMS[done]}),))
            async for chunk in stream_reply(reply, request):
                yield chunk
            return
        yield TextChunk("I will now ")
        yield TextChunk("add ")
        raise ModelError("the provider closed the connection mid-reply")


@pytest.mark.parametrize("fail_after", [0, 1, 2, 3])
async def test_a_model_error_mid_stream_keeps_the_state_of_the_last_tool(
    fail_after: int, tmp_path: Path
) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    app = create_app({"todo": todo_agent(FailingModel(fail_after)), "ok": todo_agent()},
                     store=store)
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        response = await client.post(f"{url}/agents/todo/ag-ui", json=body("t"))
        assert response.status_code == 200
        events = events_of(response.text)
        assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "model_error"
        assert await persisted(client, url, app, store, "t") == {"items": ITEMS[:fail_after]}
        await serves_on(client, url)
    store.close()


# -- a tool raises, a tool hangs past its timeout ------------------------------------------------


@tool
def explode(ctx: RunContext) -> str:
    """Change the state, then fail."""
    ctx.state["items"].append("half-done")
    raise RuntimeError("the disk is full")


@tool(timeout=0.2)
async def hang(ctx: RunContext) -> str:
    """Change the state, then hang past the timeout."""
    ctx.state["items"].append("half-done")
    await anyio.sleep(30)
    return "never"


@pytest.mark.parametrize("faulty", ["explode", "hang"])
async def test_a_failing_or_hanging_tool_changes_nothing_and_the_run_goes_on(
    faulty: str, tmp_path: Path
) -> None:
    def script(messages: list[Message], tools: list[Any]) -> Any:
        done = sum(1 for m in since_user(messages) if m.role == "tool")
        return [ToolCall("add", {"text": "a"}), ToolCall(faulty, {}),
                ToolCall("add", {"text": "b"}), "Done."][done]

    store = SQLiteStore(tmp_path / "s.db")
    app = create_app({"todo": todo_agent(FunctionModel(script), explode, hang),
                      "ok": todo_agent()}, store=store)
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        with anyio.fail_after(10):
            response = await client.post(f"{url}/agents/todo/ag-ui", json=body("t"))
        events = events_of(response.text)
        assert events[-1]["type"] == "RUN_FINISHED"
        results = [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
        assert [r["content"] for r in results][0::2] == ["added", "added"]
        failed = results[1]["content"]
        if faulty == "explode":  # its text stays on the server: the client reads its type
            assert "unexpected RuntimeError" in failed and "disk is full" not in failed
        else:
            assert "within 0.2 s" in failed
        deltas = [e["delta"] for e in events if e["type"] == "STATE_DELTA"]
        assert "half-done" not in json.dumps(deltas)
        assert await persisted(client, url, app, store, "t") == {"items": ["a", "b"]}
        await serves_on(client, url)
    store.close()


# -- the client goes away at every event -------------------------------------------------------


async def read_then_close(client: httpx.AsyncClient, url: str, thread: str, k: int
                          ) -> list[dict[str, Any]]:
    """POST a run, read its first `k` events, then close the connection."""
    seen: list[dict[str, Any]] = []
    async with client.stream("POST", f"{url}/agents/todo/ag-ui", json=body(thread)) as response:
        assert response.status_code == 200
        if k:
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    seen.append(json.loads(line[5:]))
                    if len(seen) == k:
                        break
    return seen


@pytest.mark.parametrize("on_disconnect", [
    "detach",
    pytest.param("cancel"),
])
async def test_a_client_that_leaves_at_any_event_loses_no_committed_work(
    on_disconnect: str, tmp_path: Path
) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    app = create_app({"todo": todo_agent(), "ok": todo_agent()}, store=store,
                     on_disconnect=on_disconnect)  # type: ignore[arg-type]
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        whole = events_of((await client.post(f"{url}/agents/todo/ag-ui",
                                             json=body("whole"))).text)
        assert whole[-1]["type"] == "RUN_FINISHED" and len(whole) > 30
        for k in range(len(whole)):
            thread = f"left-at-{k}"
            seen = await read_then_close(client, url, thread, k)
            assert [e["type"] for e in seen] == [e["type"] for e in whole[:k]]
            state = await persisted(client, url, app, store, thread)
            if on_disconnect == "detach":  # the run went on to its end without the client
                assert state == {"items": ITEMS}, k
            else:  # cancelled: everything the client saw committed is there (`{}`: the
                # run was cancelled before it kept a version; then it showed none either)
                assert state is not None
                items = state.get("items", [])
                assert items == ITEMS[:len(items)]
                shown = [d for e in seen if e["type"] == "STATE_DELTA" for d in e["delta"]]
                assert len(items) >= len(shown), k
        await serves_on(client, url)
    store.close()


# -- the store fails on its k-th write -----------------------------------------------------------


class FlakyStore(SQLiteStore):
    """A SQLiteStore whose `write` raises on call number `fail_at` (counting from 1)."""

    fail_at = 0
    calls = 0

    def write(self, record: StepRecord) -> None:
        self.calls += 1
        if self.calls == self.fail_at:
            raise OSError("disk I/O error (injected)")
        super().write(record)


async def test_a_store_write_failing_at_any_write_leaves_a_consistent_thread(
    tmp_path: Path
) -> None:
    store = FlakyStore(tmp_path / "s.db")
    app = create_app({"todo": todo_agent(), "ok": todo_agent()}, store=store)
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        response = await client.post(f"{url}/agents/todo/ag-ui", json=body("count"))
        assert events_of(response.text)[-1]["type"] == "RUN_FINISHED"
        writes = store.calls
        assert writes >= len(ITEMS) + 2
        for k in range(1, writes + 1):
            store.calls, store.fail_at = 0, k
            thread = f"fails-at-{k}"
            response = await client.post(f"{url}/agents/todo/ag-ui", json=body(thread))
            assert response.status_code == 200
            last = events_of(response.text)[-1]
            assert last["type"] == "RUN_ERROR" and last["code"] == "store_error", (k, last)
            assert "could not be saved" in last["message"], (k, last)
            assert "injected" not in last["message"], "the store's words stay on the server"
            store.fail_at = 0
            state = await persisted(client, url, app, store, thread)
            assert state is None or state["items"] == ITEMS[:len(state["items"])], (k, state)
            # the thread goes on from what was saved: a new run (no state sent) starts there
            again = await client.post(f"{url}/agents/todo/ag-ui", json={
                **body(thread, "again"), "state": {}})
            assert again.status_code == 200, (k, again.text)
            events = events_of(again.text)
            assert events[-1]["type"] == "RUN_FINISHED", (k, events[-1])
            snapshot = next(e["snapshot"] for e in events if e["type"] == "STATE_SNAPSHOT")
            assert snapshot == (state or {}), (k, snapshot, state)
        await serves_on(client, url)
    store.close()


# -- a run cancelled while its store write is in flight ------------------------------------------


class CancelDuringWrite(SQLiteStore):
    """A SQLiteStore that, once its first `write` has committed and before that write returns,
    cancels the run's task as `RunService.stop` does (`live.task.cancel()`): a stop, or a
    client leaving with on_disconnect="cancel", that lands while a step is being saved."""

    app: Any = None
    loop: asyncio.AbstractEventLoop | None = None
    calls = 0

    def write(self, record: StepRecord) -> None:
        super().write(record)
        self.calls += 1
        if self.calls == 1 and self.loop is not None:
            live = self.app.state.pyox.runs.active(record.thread_id)
            self.loop.call_soon_threadsafe(live.task.cancel)
            time.sleep(0.2)  # the cancel is delivered while the write is still in flight


async def test_a_run_cancelled_during_a_store_write_still_records_its_end(
    tmp_path: Path
) -> None:
    store = CancelDuringWrite(tmp_path / "s.db")
    app = create_app({"todo": todo_agent(), "ok": todo_agent()}, store=store)
    store.app, store.loop = app, asyncio.get_running_loop()
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        response = await client.post(f"{url}/agents/todo/ag-ui", json=body("t"))
        assert events_of(response.text)[-1]["type"] == "RUN_FINISHED"
        assert events_of(response.text)[-1]["outcome"]["type"] == "cancelled"
        store.loop = None
        assert await persisted(client, url, app, store, "t") == {"items": []}
        with contextlib.closing(sqlite3.connect(tmp_path / "s.db")) as db:
            statuses = [json.loads(b)["status"] for (b,) in db.execute("SELECT body FROM runs")]
        assert statuses == ["stopped"], statuses
        await serves_on(client, url)
    store.close()
