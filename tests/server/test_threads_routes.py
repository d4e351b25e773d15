"""The threads routes' own rules, on a real uvicorn server: each is scoped to its principal
(another's thread is not there), a thread a run holds is listed "running" and not changed
under it, one waiting for a person is listed "paused", bad bodies are refused naming the field,
and the AG-UI stop route stops a run where a disconnect only detaches it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import bearer_tokens, create_app
from pyox_agents.state.messages import Message
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.servers import serving

pytestmark = pytest.mark.anyio

TOKENS = {"tok-ann": "ann", "tok-bob": "bob"}
ANN = {"Authorization": "Bearer tok-ann"}
BOB = {"Authorization": "Bearer tok-bob"}


class Gate:
    """Holds the `wait` tool until the test lets it go on."""

    def __init__(self) -> None:
        self.reached = anyio.Event()
        self.release = anyio.Event()


def agent(gate: Gate) -> Agent:
    @tool
    async def wait(ctx: RunContext) -> str:
        """Wait for the test."""
        ctx.state["waited"] = True
        gate.reached.set()
        await gate.release.wait()
        return "went on"

    @tool(approval=True)
    def pay(ctx: RunContext, amount: int) -> str:
        """Pay (a person approves first)."""
        return "paid"

    def reply(messages: list[Message], tools: Any) -> Any:
        last = messages[-1]
        if last.role == "user" and last.content in ("wait", "pay"):
            return ToolCall(last.content, {"amount": 5} if last.content == "pay" else {})
        return "Done."

    return Agent(FunctionModel(reply), tools=[wait, pay])


def body(thread: str, text: str, message_id: str = "u1", run_id: str = "r") -> dict[str, Any]:
    return {"threadId": thread, "runId": run_id,
            "messages": [{"id": message_id, "role": "user", "content": text}]}


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, Gate, Any]]:
    gate = Gate()
    app = create_app({"a": agent(gate)}, store=SQLiteStore(tmp_path / "t.db"),
                     auth=bearer_tokens(TOKENS))
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        yield http, gate, app


async def listed(http: httpx.AsyncClient) -> list[tuple[str, Any]]:
    threads = (await http.get("/threads", headers=ANN)).json()["threads"]
    return [(t["id"], t["run"]) for t in threads]


async def test_another_principals_thread_is_not_there_on_any_threads_route(
        served: tuple[httpx.AsyncClient, Gate, Any]) -> None:
    http, _, _ = served
    assert (await http.post("/agents/a/ag-ui", json=body("anns", "hi"), headers=ANN)).is_success
    run_id = (await http.get("/threads/anns/history", headers=ANN)).json()["runs"][0]["run_id"]
    calls = [("GET", "history", None), ("PATCH", "", {"title": "mine now"}), ("DELETE", "", None),
             ("POST", "fork", {"run_id": run_id}), ("POST", "rewind", {"run_id": run_id}),
             ("POST", "undo", {"run_id": run_id})]
    for method, tail, payload in calls:
        for thread in ("anns", "missing"):
            path = f"/threads/{thread}/{tail}".rstrip("/")
            answer = await http.request(method, path, json=payload, headers=BOB)
            assert answer.status_code == 404, (method, path, answer.text)
            assert answer.json() == {"error": f"no thread {thread!r}"}
    stop = await http.post("/agents/a/ag-ui/anns/stop", headers=BOB)
    assert stop.status_code == 404
    assert (await http.get("/threads", headers=BOB)).json() == {"threads": [], "next": None}
    assert await listed(http) == [("anns", None)]


async def test_a_thread_a_run_holds_is_listed_running_and_not_changed_under_it(
        served: tuple[httpx.AsyncClient, Gate, Any]) -> None:
    http, gate, _ = served
    assert (await http.post("/agents/a/ag-ui", json=body("t", "hi"), headers=ANN)).is_success
    run_id = (await http.get("/threads/t/history", headers=ANN)).json()["runs"][0]["run_id"]
    async with http.stream("POST", "/agents/a/ag-ui", json=body("t", "wait", "u2"),
                           headers=ANN) as stream:
        with anyio.fail_after(10):
            await gate.reached.wait()
        assert await listed(http) == [("t", "running")]
        for method, path, payload in (("DELETE", "/threads/t", None),
                                      ("POST", "/threads/t/rewind", {"run_id": run_id}),
                                      ("POST", "/threads/t/undo", {"run_id": run_id})):
            answer = await http.request(method, path, json=payload, headers=ANN)
            assert answer.status_code == 409 and "already active" in answer.json()["error"]
        gate.release.set()
        await stream.aread()
    assert await listed(http) == [("t", None)]


async def test_a_thread_waiting_for_a_person_is_listed_paused_and_not_rewound(
        served: tuple[httpx.AsyncClient, Gate, Any]) -> None:
    http, _, _ = served
    assert (await http.post("/agents/a/ag-ui", json=body("t", "hi"), headers=ANN)).is_success
    paused = await http.post("/agents/a/ag-ui", json=body("t", "pay", "u2"), headers=ANN)
    assert '"interrupt"' in paused.text
    assert await listed(http) == [("t", "paused")]
    first = (await http.get("/threads/t/history", headers=ANN)).json()["runs"][0]["run_id"]
    for action in ("rewind", "undo"):
        answer = await http.post(f"/threads/t/{action}", json={"run_id": first}, headers=ANN)
        assert answer.status_code == 409 and "waits for a person" in answer.json()["error"]
    deleted = await http.delete("/threads/t", headers=ANN)  # a paused thread may go
    assert deleted.status_code == 200 and await listed(http) == []


async def test_bad_input_to_the_threads_routes_is_refused_naming_the_field(
        served: tuple[httpx.AsyncClient, Gate, Any]) -> None:
    http, _, _ = served
    assert (await http.post("/agents/a/ag-ui", json=body("t", "hi"), headers=ANN)).is_success
    refused: list[tuple[str, str, Any, int, str]] = [
        ("GET", "/threads?limit=0", None, 422, "limit"),
        ("GET", "/threads?limit=many", None, 422, "limit"),
        ("GET", "/threads?archived=yes", None, 422, "archived"),
        ("GET", "/threads?cursor=not-ours", None, 400, "cursor"),
        ("PATCH", "/threads/t", {}, 422, "title"),
        ("PATCH", "/threads/t", {"title": "x" * 81}, 422, "title"),
        ("PATCH", "/threads/t", {"archived": "yes"}, 422, "archived"),
        ("POST", "/threads/t/fork", {}, 422, "run_id"),
        ("POST", "/threads/t/fork", {"run_id": "ab" * 32}, 422, "run_id"),
        ("POST", "/threads/t/fork", {"message_id": "nope"}, 422, "message_id"),
        ("POST", "/threads/t/fork", {"message_id": "u1", "thread_id": "a/b"}, 422, "thread_id"),
        ("POST", "/threads/t/rewind", {}, 422, "run_id"),
        ("POST", "/threads/t/undo", {"run_id": 7}, 422, "run_id"),
    ]
    for method, path, payload, status, field in refused:
        answer = await http.request(method, path, json=payload, headers=ANN)
        assert (answer.status_code, answer.json().get("field")) == (status, field), (
            method, path, answer.text)
    assert (await http.get("/threads/t", headers=ANN)).status_code == 200


async def test_archived_any_lists_the_archived_threads_too_with_their_flag_page_by_page(
        served: tuple[httpx.AsyncClient, Gate, Any]) -> None:
    http, _, _ = served
    for thread in ("t1", "t2", "t3"):
        assert (await http.post("/agents/a/ag-ui", json=body(thread, "hi"), headers=ANN)).is_success
    assert (await http.patch("/threads/t2", json={"archived": True}, headers=ANN)).is_success

    async def page(query: str) -> tuple[list[tuple[str, bool]], str | None]:
        answer = (await http.get(f"/threads?{query}", headers=ANN)).json()
        return [(t["id"], t["archived"]) for t in answer["threads"]], answer["next"]

    assert (await page("archived=any"))[0] == [("t3", False), ("t2", True), ("t1", False)]
    first, cursor = await page("archived=any&limit=2")
    assert first == [("t3", False), ("t2", True)] and cursor is not None
    assert await page(f"archived=any&limit=2&cursor={cursor}") == ([("t1", False)], None)
    assert (await page("archived=true"))[0] == [("t2", True)]
    assert (await page("archived=false"))[0] == (await page(""))[0] == [("t3", False),
                                                                        ("t1", False)]
    refused = await http.get("/threads?archived=all", headers=ANN)
    assert refused.status_code == 422
    assert refused.json() == {"field": "archived", "error": "archived must be true (the archived "
                              "threads only), false (the others, the default) or any (both)"}


async def test_a_threads_change_from_a_page_on_another_site_is_refused(
        served: tuple[httpx.AsyncClient, Gate, Any]) -> None:
    http, _, _ = served
    assert (await http.post("/agents/a/ag-ui", json=body("t", "hi"), headers=ANN)).is_success
    evil = {**ANN, "Origin": "https://evil.example"}
    for method, path, payload in (("PATCH", "/threads/t", {"title": "x"}),
                                  ("DELETE", "/threads/t", None),
                                  ("POST", "/agents/a/ag-ui/t/stop", None)):
        answer = await http.request(method, path, json=payload, headers=evil)
        assert answer.status_code == 403, (method, path)
    assert await listed(http) == [("t", None)]


async def test_the_ag_ui_stop_route_stops_the_run_and_a_disconnect_only_detaches(
        served: tuple[httpx.AsyncClient, Gate, Any]) -> None:
    http, gate, app = served
    async with http.stream("POST", "/agents/a/ag-ui", json=body("t", "wait"), headers=ANN):
        with anyio.fail_after(10):
            await gate.reached.wait()
        live = app.state.pyox.runs.active("t")
    # the client went away: the run goes on, detached, and stays stoppable
    assert await listed(http) == [("t", "running")] and not live.done
    stopped = await http.post("/agents/a/ag-ui/t/stop", json={"runId": "r"}, headers=ANN)
    assert stopped.json() == {"stopped": True}
    with anyio.fail_after(10):
        await asyncio.wait([live.task])
    last = json.loads(json.dumps(live.events[-1].outcome))
    assert last == "cancelled"
    run_id = live.run_id
    assert (await http.get(f"/runs/{run_id}", headers=ANN)).json()["status"] == "stopped"
    history = (await http.get("/threads/t/history", headers=ANN)).json()["runs"]
    assert [(r["run_id"], r["status"]) for r in history] == [(run_id, "stopped")]
    assert (await http.get("/threads/t", headers=ANN)).json()["state"] == {}  # nothing committed
    again = await http.post("/agents/a/ag-ui/t/stop", headers=ANN)
    assert again.json() == {"stopped": False}
    gate.release.set()


async def test_a_stop_that_names_an_ended_run_leaves_the_threads_next_run_going(
        served: tuple[httpx.AsyncClient, Gate, Any]) -> None:
    """Rule: a stop whose body names a runId stops the run that request started and no other
    (CopilotKit's stop for a run that ended arrives once the thread's next run goes)."""
    http, gate, app = served
    first = await http.post("/agents/a/ag-ui", json=body("t", "hi", "u1", "run-1"), headers=ANN)
    assert first.is_success and "RUN_FINISHED" in first.text
    async with http.stream("POST", "/agents/a/ag-ui", json=body("t", "wait", "u2", "run-2"),
                           headers=ANN) as second:
        with anyio.fail_after(10):
            await gate.reached.wait()
        live = app.state.pyox.runs.active("t")
        stale = await http.post("/agents/a/ag-ui/t/stop", json={"runId": "run-1"}, headers=ANN)
        assert stale.json() == {"stopped": False}
        await asyncio.sleep(0.1)
        assert not live.done and await listed(http) == [("t", "running")]
        stop = await http.post("/agents/a/ag-ui/t/stop", json={"runId": "run-2"}, headers=ANN)
        assert stop.json() == {"stopped": True}
        text = (await second.aread()).decode()
    assert live.done and "RUN_FINISHED" in text and "went on" not in text
    runs = (await http.get("/threads/t/history", headers=ANN)).json()["runs"]
    assert [r["status"] for r in runs] == ["completed", "stopped"]
    gate.release.set()


async def test_a_stop_body_that_is_not_a_runid_is_refused_saying_what_to_send(
        served: tuple[httpx.AsyncClient, Gate, Any]) -> None:
    http, _, _ = served
    stop = "/agents/a/ag-ui/t/stop"
    usage = 'send {"runId": "<the runId of the run to stop>"}, or no body to stop any run'
    not_json = await http.post(stop, content=b"run-1", headers=ANN)
    assert (not_json.status_code, not_json.json()) == (
        422, {"error": f"the body is not JSON: {usage}"})
    a_list = await http.post(stop, json=["run-1"], headers=ANN)
    assert (a_list.status_code, a_list.json()) == (
        422, {"error": f"the body must be a JSON object: {usage}"})
    for bad, shown in ((7, "7"), (None, "null"), ("", '""')):
        answer = await http.post(stop, json={"runId": bad}, headers=ANN)
        assert (answer.status_code, answer.json()) == (422, {
            "error": f"runId must be a non-empty string, got {shown}: {usage}",
            "field": "runId"})
    for empty in ({}, {"other": 1}, None):  # no runId: whichever run goes on (none here)
        answer = await http.post(stop, json=empty, headers=ANN)
        assert answer.json() == {"stopped": False}, answer.text


async def test_a_server_without_a_store_has_no_threads_to_list() -> None:
    app = create_app({"a": agent(Gate())})
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        answer = await http.get("/threads")
        assert answer.status_code == 404 and "without a store" in answer.json()["error"]


async def test_an_undo_of_a_run_that_paused_reverses_what_it_did_before_and_after(
        tmp_path: Path) -> None:
    """A run that paused for a person is recorded from the state it started from, not the one
    it went on from: its undo takes back its changes from before the pause too."""

    @tool
    def note(ctx: RunContext) -> str:
        """Note the plan."""
        ctx.state["planned"] = True
        return "noted"

    @tool(approval=True)
    def book(ctx: RunContext) -> str:
        """Book it (a person approves first)."""
        ctx.state["booked"] = True
        return "booked"

    def reply(messages: list[Message], tools: Any) -> Any:
        last = messages[-1]
        if last.role == "user":
            return ToolCall("note", {})
        if last.role == "tool" and last.content == "noted":
            return ToolCall("book", {})
        return "Done."

    app = create_app({"a": Agent(FunctionModel(reply), tools=[note, book])},
                     store=SQLiteStore(tmp_path / "t.db"))
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        paused = await http.post("/agents/a/ag-ui", json=body("t", "plan and book"))
        interrupt = paused.text.split('"interrupts":[{"id":"')[1].split('"')[0]
        resumed = await http.post("/agents/a/ag-ui", json={**body("t", "plan and book"), "resume": [
            {"interruptId": interrupt, "status": "resolved", "payload": {"approved": True}}]})
        assert "RUN_FINISHED" in resumed.text
        (run,) = (await http.get("/threads/t/history")).json()["runs"]
        assert run["status"] == "completed"
        assert (await http.get("/threads/t")).json()["state"] == {"planned": True,
                                                                  "booked": True}
        undone = await http.post("/threads/t/undo", json={"run_id": run["run_id"]})
        assert undone.json()["state"] == {}


async def test_a_rewind_and_an_undo_are_versions_every_follower_sees_and_edits_build_on(
        tmp_path: Path) -> None:
    """A rewind or an undo changes the shared state as a new version: the thread's feed tells
    every tab following it (no reload needed), and a person's edit made on that version builds
    on it (the server does not go on from what it had before)."""

    @tool
    def add(ctx: RunContext, text: str) -> str:
        """Add an item."""
        ctx.state["items"].append(text)
        return "added"

    def reply(messages: list[Message], tools: Any) -> Any:
        last = messages[-1]
        return ToolCall("add", {"text": last.content}) if last.role == "user" else "Done."

    app = create_app({"a": Agent(FunctionModel(reply), tools=[add])},
                     store=SQLiteStore(tmp_path / "t.db"))
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        for n, text in enumerate(["a", "b"]):
            sent = {**body("t", text, f"u{n}"), "state": {"items": []} if n == 0 else None}
            assert "RUN_FINISHED" in (await http.post("/agents/a/ag-ui", json={
                k: v for k, v in sent.items() if v is not None})).text
        first = (await http.get("/threads/t/history")).json()["runs"][0]["run_id"]
        async with http.stream("GET", "/threads/t/events") as feed:
            items = (json.loads(line[6:]) async for line in feed.aiter_lines()
                     if line.startswith("data: "))
            snapshot = await _next(items)
            assert snapshot["state"] == {"items": ["a", "b"]}
            rewound = (await http.post("/threads/t/rewind", json={"run_id": first})).json()
            assert rewound["state"] == {"items": ["a"]}
            told = await _next(items)
            assert (told["type"], told["version"]) == ("state", rewound["version"])
            assert told["delta"] == [{"op": "remove", "path": "/items/1"}]
            edited = await http.patch("/agents/a/threads/t/state", json={
                "base": rewound["version"], "patch": [{"op": "add", "path": "/items/-",
                                                       "value": "c"}]})
            assert edited.status_code == 200, edited.text
            assert (await _next(items))["version"] == edited.json()["version"]
            undone = (await http.post("/threads/t/undo", json={"run_id": first})).json()
            assert undone["state"] == {"items": ["c"]}
            told = await _next(items)
            assert (told["type"], told["version"]) == ("state", undone["version"])
        assert (await http.get("/threads/t")).json()["state"] == {"items": ["c"]}


async def _next(items: AsyncIterator[dict[str, Any]]) -> dict[str, Any]:
    """The feed's next item, within 10 s (one that never comes fails the test, not hangs it)."""
    with anyio.fail_after(10):
        return await anext(items)
