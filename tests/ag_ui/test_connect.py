"""POST /agents/{name}/ag-ui/connect on a real uvicorn server: a client that comes back to a
thread gets its messages under the ids they were streamed with, its state, and the live tail of
a run still going, once; and stable ids, GET /threads/{id}, parentRunId and capabilities."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import InputKinds, ScriptedModel
from pyox_agents.server import bearer_tokens, create_app
from pyox_agents.state.messages import ToolCall
from pyox_agents.stores import MemoryStore
from tests.ag_ui.servers import frames, post_run, serving
from tests.ag_ui.verify import check_stream

pytestmark = pytest.mark.anyio

USER = {"id": "u1", "role": "user", "content": "add milk"}


def body(thread: str, messages: list[dict[str, Any]] | None = None, **fields: Any
         ) -> dict[str, Any]:
    return {"threadId": thread, "runId": "r1", "protocolVersion": "1.0",
            "messages": [USER] if messages is None else messages, **fields}


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo."""
    ctx.state.setdefault("todos", []).append(text)
    return "added"


@tool(approval=True)
def clear_todos(ctx: RunContext) -> str:
    """Remove every todo (a person approves first)."""
    ctx.state["todos"] = []
    return "cleared"


def _agent(*replies: Any) -> Agent:
    return Agent(ScriptedModel(list(replies)), tools=[add_todo, clear_todos])


def streamed_ids(events: list[dict[str, Any]]) -> set[str]:
    """The message ids a run's stream gave its messages."""
    ids = {e["messageId"] for e in events
           if e["type"] in ("TEXT_MESSAGE_START", "TOOL_CALL_RESULT")}
    return ids | {e["parentMessageId"] for e in events if e["type"] == "TOOL_CALL_START"}


def snapshot(events: list[dict[str, Any]], at: int = -1) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "MESSAGES_SNAPSHOT"][at]["messages"]


async def connect(client: httpx.AsyncClient, url: str, payload: dict[str, Any],
                  **headers: str) -> list[dict[str, Any]]:
    response = await client.post(f"{url}/agents/a/ag-ui/connect", json=payload, timeout=30,
                                 headers=headers)
    assert response.status_code == 200, response.text
    return frames(response.text)


async def test_a_connect_gives_back_the_messages_under_the_ids_they_were_streamed_with() -> None:
    """"the ids streamed in TEXT_MESSAGE_START / TOOL_CALL_START ... are the ids kept in the
    thread and returned later, so a client never shows a message twice"."""
    app = create_app({"a": _agent(ToolCall("add_todo", {"text": "milk"}), "Added milk.")},
                     store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient() as client:
        _, run = await post_run(client, f"{url}/agents/a/ag-ui", body("t1"))
        held = snapshot(run)  # what the client holds after the run
        again = await connect(client, url, body("t1", held))
        fresh = await connect(client, url, body("t1", []))  # a reloaded page
        thread = (await client.get(f"{url}/threads/t1")).json()
    assert [e["type"] for e in again][:3] == ["RUN_STARTED", "MESSAGES_SNAPSHOT",
                                              "STATE_SNAPSHOT"]
    assert again[-1]["type"] == "RUN_FINISHED"
    assert snapshot(again, 0) == held
    reloaded = snapshot(fresh, 0)
    assert [m["id"] for m in reloaded][1:] == [m["id"] for m in held][1:]
    assert streamed_ids(run) <= {m["id"] for m in reloaded}
    assert [m["id"] for m in thread["messages"]] == [m["id"] for m in reloaded]
    assert fresh[2]["snapshot"] == {"todos": ["milk"]}
    check_stream(again)
    check_stream(fresh)


async def test_ids_stay_the_same_after_an_approval_resume() -> None:
    app = create_app({"a": _agent(ToolCall("clear_todos", {}), "Cleared.")},
                     store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient() as client:
        _, first = await post_run(client, f"{url}/agents/a/ag-ui", body("t2"))
        interrupt = first[-1]["outcome"]["interrupts"][0]["id"]
        held = snapshot(first)
        _, second = await post_run(client, f"{url}/agents/a/ag-ui", body(
            "t2", held, resume=[{"interruptId": interrupt, "status": "resolved",
                                 "payload": {"approved": True}}]))
        held = snapshot(second)
        again = await connect(client, url, body("t2", held))
        fresh = await connect(client, url, body("t2", []))
    assert snapshot(again, 0) == held
    ids = [m["id"] for m in snapshot(fresh, 0)]
    assert ids[1:] == [m["id"] for m in held][1:] and len(ids) == len(set(ids))
    assert (streamed_ids(first) | streamed_ids(second)) <= set(ids)


async def test_a_frontend_tools_result_keeps_the_clients_id() -> None:
    """A tool round through the page: the result the client sent comes back under its id."""
    color = {"name": "pick_color", "description": "Ask the person for a color.",
             "parameters": {"type": "object", "properties": {}}}
    app = create_app({"a": _agent(ToolCall("pick_color", {}), "Blue it is.")},
                     store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient() as client:
        _, first = await post_run(client, f"{url}/agents/a/ag-ui", body("t8", tools=[color]))
        [call] = [e["toolCallId"] for e in first if e["type"] == "TOOL_CALL_START"]
        answer = {"id": "tool-answer-1", "role": "tool", "toolCallId": call, "content": "blue"}
        _, second = await post_run(client, f"{url}/agents/a/ag-ui",
                                   body("t8", [*snapshot(first), answer], tools=[color]))
        held = snapshot(second)
        again = await connect(client, url, body("t8", held))
        fresh = await connect(client, url, body("t8", []))
    assert snapshot(again, 0) == held
    assert "tool-answer-1" in [m["id"] for m in held]
    ids = [m["id"] for m in snapshot(fresh, 0)]
    assert len(ids) == len(set(ids)) == len(held)
    assert streamed_ids(first) | streamed_ids(second) <= set(ids)


async def test_a_connect_to_a_paused_thread_ends_with_its_interrupt() -> None:
    app = create_app({"a": _agent(ToolCall("clear_todos", {}), "Cleared.")},
                     store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient() as client:
        _, first = await post_run(client, f"{url}/agents/a/ag-ui", body("t3"))
        fresh = await connect(client, url, body("t3", []))
    assert fresh[-1]["outcome"] == first[-1]["outcome"]
    check_stream(fresh)


async def test_an_unknown_thread_is_empty_and_leaves_the_clients_state_alone() -> None:
    """A page's new thread: no messages, and no STATE_SNAPSHOT (the server keeps no state for
    it), so the page keeps its initial state and an edit the person made while it connected."""
    async with serving(create_app({"a": _agent()}, store=MemoryStore())) as url, \
            httpx.AsyncClient() as client:
        events = await connect(client, url, body("new-page", []))
    assert [e["type"] for e in events] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert events[1]["messages"] == []
    check_stream(events)


async def test_another_principals_thread_is_not_there() -> None:
    app = create_app({"a": _agent(ToolCall("add_todo", {"text": "x"}), "ok")},
                     store=MemoryStore(), auth=bearer_tokens({"tok-ann": "ann", "tok-bob": "bob"}))
    async with serving(app) as url, httpx.AsyncClient() as client:
        response = await client.post(f"{url}/agents/a/ag-ui", json=body("t4"),
                                     headers={"Authorization": "Bearer tok-ann"})
        assert response.status_code == 200
        bob = await client.post(f"{url}/agents/a/ag-ui/connect", json=body("t4", []),
                                headers={"Authorization": "Bearer tok-bob"})
        nobody = await client.post(f"{url}/agents/a/ag-ui/connect", json=body("t4", []))
        ann = await connect(client, url, body("t4", []), Authorization="Bearer tok-ann")
    assert bob.status_code == 404 and nobody.status_code == 401
    assert len(snapshot(ann, 0)) == 4


class Gate:
    """Holds a tool until the test opens it."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.open = asyncio.Event()


async def test_a_connect_during_a_run_replays_its_tail_once_then_follows_it_live() -> None:
    """A reload mid-run: history before the run, then the run from its start, each message
    once, then RUN_FINISHED."""
    gate = Gate()

    @tool
    async def slow(ctx: RunContext, text: str) -> str:
        """Wait for the gate."""
        ctx.progress("wait", {"text": text})
        gate.entered.set()
        await gate.open.wait()
        ctx.state.setdefault("todos", []).append(text)
        return "done"

    agent = Agent(ScriptedModel([ToolCall("add_todo", {"text": "a"}), "First.",
                                 ToolCall("slow", {"text": "b"}), "Second."]),
                  tools=[add_todo, slow])
    async with serving(create_app({"a": agent}, store=MemoryStore())) as url, \
            httpx.AsyncClient() as client:
        _, first = await post_run(client, f"{url}/agents/a/ag-ui", body("t5"))
        held = snapshot(first)
        user2 = {"id": "u2", "role": "user", "content": "more"}
        async with anyio.create_task_group() as tasks:
            results: dict[str, list[dict[str, Any]]] = {}

            async def run_second() -> None:
                results["run"] = (await post_run(client, f"{url}/agents/a/ag-ui",
                                                 body("t5", [*held, user2])))[1]

            tasks.start_soon(run_second)
            await gate.entered.wait()
            connecting = asyncio.create_task(connect(client, url, body("t5", [])))
            await asyncio.sleep(0.2)
            assert not connecting.done(), "the connect follows the run until it ends"
            gate.open.set()
            tail = await connecting
    run = results["run"]
    restored = snapshot(tail, 0)  # the first run, and the message the second one answers
    assert [m["id"] for m in restored][1:-1] == [m["id"] for m in held][1:]
    assert [m["content"] for m in restored if m["role"] == "user"] == ["add milk", "more"]
    kinds = [e["type"] for e in tail]
    assert kinds[:3] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"]
    assert tail[2]["snapshot"] == {"todos": ["a"]}
    assert kinds.count("ACTIVITY_SNAPSHOT") == 1
    assert [e["messageId"] for e in tail if e["type"] == "TEXT_MESSAGE_START"] == \
        [e["messageId"] for e in run if e["type"] == "TEXT_MESSAGE_START"]
    final = snapshot(tail)
    ids = [m["id"] for m in final]
    assert len(ids) == len(set(ids))
    assert streamed_ids(run) <= set(ids) and streamed_ids(first) <= set(ids)
    assert kinds[-1] == "RUN_FINISHED"
    check_stream(tail)


async def test_run_started_echoes_the_parent_run_id() -> None:
    async with serving(create_app({"a": _agent("Hi.")}, store=MemoryStore())) as url, \
            httpx.AsyncClient() as client:
        _, run = await post_run(client, f"{url}/agents/a/ag-ui",
                                body("t6", parentRunId="run-before"))
        _, plain = await post_run(client, f"{url}/agents/a/ag-ui", body("t7"))
    assert run[0]["parentRunId"] == "run-before"
    assert "parentRunId" not in plain[0]


async def test_capabilities_name_the_tools_and_what_the_agent_streams() -> None:
    @tool(predict_state={"document": "text"})
    def write(ctx: RunContext, text: str) -> str:
        """Write the document."""
        ctx.state["document"] = text
        return "ok"

    agent = Agent(ScriptedModel(["x"]), tools=[add_todo, clear_todos, write])
    async with serving(create_app({"a": agent}, store=MemoryStore())) as url, \
            httpx.AsyncClient() as client:
        response = await client.get(f"{url}/agents/a/ag-ui/capabilities")
        missing = await client.get(f"{url}/agents/nope/ag-ui/capabilities")
    caps = response.json()
    assert [t["name"] for t in caps["tools"]["items"]] == ["add_todo", "clear_todos", "write"]
    assert caps["tools"]["clientProvided"] is True
    assert caps["state"] == {"snapshots": True, "deltas": True, "memory": True,
                             "persistentState": True}
    assert caps["humanInTheLoop"]["interrupts"] is True
    assert caps["custom"]["predictState"] == [
        {"state_key": "document", "tool": "write", "tool_argument": "text"}]
    assert missing.status_code == 404


async def test_capabilities_say_which_inputs_the_agents_model_takes() -> None:
    images_only = ScriptedModel(["x"], inputs=InputKinds({"image/*": ("data", "url")}))
    agents = {"images": Agent(images_only), "all": Agent(ScriptedModel(["x"]))}
    async with serving(create_app(agents)) as url, httpx.AsyncClient() as client:
        images = (await client.get(f"{url}/agents/images/ag-ui/capabilities")).json()
        every = (await client.get(f"{url}/agents/all/ag-ui/capabilities")).json()
    assert images["multimodal"]["input"] == {"image": True, "audio": False, "video": False,
                                             "pdf": False, "file": False}
    assert set(every["multimodal"]["input"].values()) == {True}
