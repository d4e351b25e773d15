"""Issue 22: the store goes away during a run and comes back.

A real `redis-server` is frozen (SIGSTOP: connections are accepted, nothing answers) or killed
and started again on its port; a real PostgreSQL is stopped (`-m immediate`) and started again.
The agent adds "a", "b", "c" to the shared state, one per step; the store goes away while "b" is
being added. Then:

- the run ends with a terminal event (AG-UI `RUN_ERROR`, AI SDK `error` + `finish` + `[DONE]`)
  whose code is `store_unavailable`, within the store's bounded timeouts;
- requests during the outage get 503 with `Retry-After` and a body saying the store is
  unreachable (JSON `{"error", "store": "unreachable"}`; plain text for the AI SDK);
- once the store is back, the thread holds its last committed step and nothing half-written
  (its state is the items of the `add` results it holds), the next message continues it to
  "a", "b", "c", and every run's audit chain verifies.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.state.audit import verify_audit
from pyox_agents.state.messages import Message
from pyox_agents.stores.base import Store
from tests.ag_ui.servers import serving
from tests.reliability.outages import postgres_process, redis_process

pytestmark = pytest.mark.anyio

ITEMS = ["a", "b", "c"]


def added_so_far(messages: list[Message], tools: list[Any]) -> Any:
    """Add the next of ITEMS not added yet (counting every `add` that succeeded in the
    thread), then say "Done."."""
    done = sum(1 for m in messages if m.role == "tool" and m.content == "added")
    return ToolCall("add", {"text": ITEMS[done]}) if done < len(ITEMS) else "Done."


class Outage:
    """What the test takes away and brings back, and the store it serves."""

    def __init__(self, store: Store, begin: Callable[[], None], end: Callable[[], None]) -> None:
        self.store = store
        self.begin = begin
        self.end = end
        self.began = False


def todo_agent(outage: Outage) -> Agent:
    @tool
    async def add(ctx: RunContext, text: str) -> str:
        """Add an item."""
        if text == "b" and not outage.began:  # the store goes away while this step runs
            outage.began = True
            await anyio.to_thread.run_sync(outage.begin)
        ctx.state["items"].append(text)
        return "added"

    return Agent(FunctionModel(added_so_far), tools=[add])


@contextlib.contextmanager
def redis_outage(how: str) -> Iterator[Outage]:
    from pyox_agents.stores import RedisStore

    with redis_process(persist=how == "killed") as server:
        store = RedisStore(server.url, connect_timeout=0.5, command_timeout=1.0)
        if how == "frozen":
            yield Outage(store, server.freeze, server.thaw)
        else:
            yield Outage(store, server.stop, server.start)
        store.close()


@contextlib.contextmanager
def postgres_outage() -> Iterator[Outage]:
    from pyox_agents.stores import PostgresStore

    with postgres_process() as server:
        store = PostgresStore(server.url, connect_timeout=2.0, pool_timeout=5.0)
        yield Outage(store, server.stop, server.start)
        store.close()


OUTAGES: dict[str, Callable[[], contextlib.AbstractContextManager[Outage]]] = {
    "redis-frozen": lambda: redis_outage("frozen"),
    "redis-killed": lambda: redis_outage("killed"),
    "postgres-stopped": postgres_outage,
}


def events_of(text: str) -> list[Any]:
    return [json.loads(line[5:]) if line[5:].strip() != "[DONE]" else "[DONE]"
            for line in text.replace("\r\n", "\n").split("\n") if line.startswith("data:")]


def ag_ui_body(thread: str, text: str = "go", state: Any = None) -> dict[str, Any]:
    return {"threadId": thread, "runId": "r1", "protocolVersion": "1.0",
            "state": {"items": []} if state is None else state,
            "messages": [{"id": f"u-{text}", "role": "user", "content": text}]}


def ai_sdk_body(thread: str) -> dict[str, Any]:
    return {"id": thread, "trigger": "submit-message", "state": {"items": []},
            "messages": [{"id": "u-go", "role": "user", "parts": [{"type": "text",
                                                                   "text": "go"}]}]}


def run_ids(store: Store, thread: str) -> list[str]:
    entries = store.load_thread(thread).entries
    return [str(e["content"]) for e in entries if e.get("kind") == "run_start" and e["content"]]


async def refused_while_away(client: httpx.AsyncClient, url: str) -> None:
    """Requests that need the store get 503, Retry-After and a body that says why."""
    response = await client.post(f"{url}/agents/todo/ag-ui", json=ag_ui_body("other"))
    assert response.status_code == 503, response.text
    assert int(response.headers["retry-after"]) >= 1
    assert response.json()["store"] == "unreachable"
    assert "the store is unreachable" in response.json()["error"]
    response = await client.post(f"{url}/agents/todo/ai-sdk", json=ai_sdk_body("other2"))
    assert response.status_code == 503 and "retry-after" in response.headers
    assert response.text.startswith("the store is unreachable")
    response = await client.get(f"{url}/threads/t")
    assert response.status_code == 503 and response.json()["store"] == "unreachable"


async def once_back(client: httpx.AsyncClient, url: str) -> httpx.Response:
    """GET `url` as a client that honours Retry-After does: again after each 503's wait (a
    pool reconnects to a server that came back on its own schedule)."""
    while True:
        response = await client.get(url)
        if response.status_code != 503:
            assert response.status_code == 200, response.text
            return response
        await anyio.sleep(int(response.headers["retry-after"]))


async def next_message_continues(client: httpx.AsyncClient, url: str, added: list[str]
                                 ) -> None:
    """The next message on the thread continues the cut run, as after a crash: a call whose
    outcome the outage hid (the "b" whose step was not committed) is asked about, never run
    again unasked; approved, it runs, and the run goes on to its end."""
    response = await client.post(f"{url}/agents/todo/ag-ui", json=ag_ui_body("t", "again", {}))
    assert response.status_code == 200, response.text
    last = events_of(response.text)[-1]
    if added == ["a"]:
        assert last["type"] == "RUN_FINISHED" and last["outcome"]["type"] == "interrupt", last
        (asked,) = last["outcome"]["interrupts"]
        assert "outcome unknown" in asked["message"]
        resume = {**ag_ui_body("t", "yes", {}), "resume": [
            {"interruptId": asked["id"], "status": "resolved", "payload": {"approved": True}}]}
        response = await client.post(f"{url}/agents/todo/ag-ui", json=resume)
        assert response.status_code == 200, response.text
        last = events_of(response.text)[-1]
    assert last["type"] == "RUN_FINISHED" and last["outcome"]["type"] == "success", last


def ended_with_an_outage(protocol: str, events: list[Any]) -> None:
    """The stream's terminal event says the store was unreachable."""
    if protocol == "ag-ui":
        last = events[-1]
        assert last["type"] == "RUN_ERROR" and last["code"] == "store_unavailable", last
        return
    assert events[-1] == "[DONE]", events[-3:]
    assert events[-2]["type"] == "finish", events[-3:]
    error = next(e for e in events if isinstance(e, dict) and e["type"] == "error")
    assert "unreachable" in error["errorText"] or "cannot" in error["errorText"], error


@pytest.mark.parametrize(("kind", "protocol"), [
    ("redis-frozen", "ag-ui"), ("redis-frozen", "ai-sdk"), ("redis-killed", "ag-ui"),
    ("postgres-stopped", "ag-ui"), ("postgres-stopped", "ai-sdk"),
])
async def test_a_store_outage_ends_the_run_cleanly_and_the_thread_goes_on_after(
    kind: str, protocol: str
) -> None:
    with OUTAGES[kind]() as outage:
        app = create_app({"todo": todo_agent(outage)}, store=outage.store, lease_ttl=3)
        async with serving(app, log_level="critical") as url, \
                httpx.AsyncClient(timeout=60) as client:
            with anyio.fail_after(30):  # bounded by the store's timeouts, not a hang
                if protocol == "ag-ui":
                    response = await client.post(f"{url}/agents/todo/ag-ui",
                                                 json=ag_ui_body("t"))
                else:
                    response = await client.post(f"{url}/agents/todo/ai-sdk",
                                                 json=ai_sdk_body("t"))
            assert response.status_code == 200
            ended_with_an_outage(protocol, events_of(response.text))
            with anyio.fail_after(30):
                await refused_while_away(client, url)
            await anyio.to_thread.run_sync(outage.end)

            with anyio.fail_after(60):
                thread = (await once_back(client, f"{url}/threads/t")).json()
            results = {m["call_id"]: m["content"] for m in thread["messages"]
                       if m["role"] == "tool"}
            added = [c["arguments"]["text"] for m in thread["messages"]
                     if m["role"] == "assistant" for c in m["tool_calls"]
                     if results.get(c["id"]) == "added"]
            assert added in (["a"], ["a", "b"])  # the last committed step, whole
            assert thread["state"] == {"items": added}  # nothing half-written

            with anyio.fail_after(30):
                await next_message_continues(client, url, added)
            thread = (await client.get(f"{url}/threads/t")).json()
            assert thread["state"] == {"items": ITEMS}, thread
            assert not thread["running"], (thread, outage.store.get_active("t"))
        for run_id in set(run_ids(outage.store, "t")):
            verify_audit(outage.store, run_id)  # type: ignore[arg-type]
