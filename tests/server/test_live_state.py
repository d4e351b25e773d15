"""Live shared state on a real server: every version has a number the clients see, a person's
edit (`PATCH /agents/{name}/threads/{id}/state`) is committed at once, run or no run, with the
person's rule, and every follower of the thread (`GET /threads/{id}/events`) sees it."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pydantic
import pytest

from pyox_agents import Agent, Message, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import ServerLimits, bearer_tokens, create_app
from pyox_agents.stores import MemoryStore, SQLiteStore
from tests.ag_ui.servers import frames, post_run, serving
from tests.server.slow_store import SlowRead

pytestmark = pytest.mark.anyio

TODOS = {"todos": [{"text": "a", "done": False}, {"text": "b", "done": False}]}


def todo_agent(gate: asyncio.Event | None = None, seen: list[list[Message]] | None = None,
               **options: Any) -> Agent:
    """An agent that ticks todo 1 (waiting on `gate` first), then answers."""

    @tool
    async def tick(ctx: RunContext, index: int) -> str:
        """Tick todo `index`."""
        if gate is not None:
            await gate.wait()
        ctx.state["todos"][index]["done"] = True
        return f"ticked {index}"

    def model(messages: list[Message], tools: list[Any]) -> Any:
        if seen is not None:
            seen.append(list(messages))
        if not any(m.role == "tool" for m in messages):
            return ToolCall("tick", {"index": 1}, id="c1")
        return "done: " + str(messages[-1].content)

    return Agent(FunctionModel(model), tools=[tick], **options)


def append_agent() -> Agent:
    """An agent that appends `x` to `items` when asked "add x", and answers otherwise."""

    @tool
    def append(ctx: RunContext, text: str) -> str:
        """Append `text`."""
        ctx.state["items"].append(text)
        return "ok"

    def model(messages: list[Message], tools: list[Any]) -> Any:
        asked = str(messages[-1].content)
        if messages[-1].role == "user" and asked.startswith("add "):
            return ToolCall("append", {"text": asked[4:]}, id=f"c{len(messages)}")
        return "ok"

    return Agent(FunctionModel(model), tools=[append])


def ag_ui_body(**fields: Any) -> dict[str, Any]:
    return {"threadId": "t1", "runId": "r1", "state": TODOS,
            "messages": [{"id": "u1", "role": "user", "content": "tick b"}], **fields}


async def until(condition: Any) -> None:
    """Wait until `condition()` holds (the model was asked: the tool is about to wait)."""
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the run never got there")


async def patch(http: httpx.AsyncClient, base: int, ops: list[dict[str, Any]],
                thread: str = "t1", **headers: str) -> httpx.Response:
    return await http.patch(f"/agents/todo/threads/{thread}/state",
                            json={"base": base, "patch": ops}, headers=headers)


async def kept(http: httpx.AsyncClient, thread: str = "t1") -> dict[str, Any]:
    view = (await http.get(f"/threads/{thread}")).json()
    return {"state": view["state"], "version": view["version"]}


async def test_every_state_event_names_its_version() -> None:
    """Rule: every version a client is shown has a number (AG-UI `metadata.stateVersion`),
    the same the thread keeps it under."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        _, events = await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        states = [(e["type"], e["metadata"]["stateVersion"]) for e in events
                  if e["type"].startswith("STATE_")]
        assert states == [("STATE_SNAPSHOT", 1), ("STATE_DELTA", 2)]
        assert (await kept(http))["version"] == 2


async def test_an_ai_sdk_message_carries_the_number_of_its_state() -> None:
    """Rule: the AI SDK stream numbers its state too: a `data-state-version` part beside each
    `data-state` part, and each transient delta's id, so the page's next request names the
    version it holds."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        body = {"id": "c1", "trigger": "submit-message", "state": TODOS,
                "messages": [{"id": "u1", "role": "user",
                              "parts": [{"type": "text", "text": "tick b"}]}]}
        response = await http.post("/agents/todo/ai-sdk", json=body)
        chunks = [c for c in frames(response.text.replace("data: [DONE]", ""))]
        versions = [c["data"]["version"] for c in chunks if c["type"] == "data-state-version"]
        deltas = [c["id"] for c in chunks if c["type"] == "data-state-delta"]
        assert versions[-1] == 2 and deltas == ["v2"]


async def test_an_idle_edit_is_committed_as_the_next_version() -> None:
    """Rule: a person's edit is a commit, at once, with no run: kept as the next version."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        answer = await patch(http, 2, [{"op": "add", "path": "/todos/-",
                                        "value": {"text": "c", "done": False}}])
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"version": 3, "delta": [
            {"op": "add", "path": "/todos/2", "value": {"text": "c", "done": False}}]}
        assert await kept(http) == {"version": 3, "state": {"todos": [
            {"text": "a", "done": False}, {"text": "b", "done": True},
            {"text": "c", "done": False}]}}


async def test_a_stale_tab_keeps_the_runs_work() -> None:
    """Rule: an edit made on an older version is rebased onto the latest: the run's tick and
    the stale tab's new todo are both kept (the old guess lost the run's work)."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())  # version 1 -> 2 (tick b)
        answer = await patch(http, 1, [{"op": "remove", "path": "/todos/0"}])
        assert answer.status_code == 200, answer.text
        assert (await kept(http))["state"] == {"todos": [{"text": "b", "done": True}]}


async def test_an_undo_of_the_agents_tick_is_kept() -> None:
    """Rule: a person's undo is an edit like any other: unticking what the run ticked, on the
    version that has the tick, is committed (never guessed away)."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        answer = await patch(http, 2, [{"op": "replace", "path": "/todos/1/done",
                                        "value": False}])
        assert answer.status_code == 200, answer.text
        assert (await kept(http))["state"] == TODOS


async def test_a_whole_state_sent_with_its_version_is_taken_against_it() -> None:
    """Rule: a plain AG-UI client that sends its whole state names the version it was made on
    (`forwardedProps.stateVersion`): its undo (a state equal to an older version) is kept, not
    read as a stale tab with no edits."""
    agent = todo_agent()
    app = create_app({"todo": agent}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        undone = ag_ui_body(runId="r2", state=TODOS, forwardedProps={"stateVersion": 2},
                            messages=[{"id": "u1", "role": "user", "content": "tick b"},
                                      {"id": "u2", "role": "user", "content": "thanks"}])
        _, events = await post_run(http, "/agents/todo/ag-ui", undone)
        snapshot = next(e for e in events if e["type"] == "STATE_SNAPSHOT")
        assert snapshot["snapshot"]["todos"][1]["done"] is False


def held(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages a client holds after a stream: its last MESSAGES_SNAPSHOT's."""
    return [e for e in events if e["type"] == "MESSAGES_SNAPSHOT"][-1]["messages"]


@pytest.mark.parametrize(("before", "asks", "edited"), [
    (TODOS, [], TODOS),  # the run ticks b; the person unticks it: an older version's content
    ({"items": []}, ["add milk"], {"items": []}),  # the page's Clear button
    ({"items": []}, ["add milk", "add eggs"], {"items": ["milk!", "by hand", "eggs"]}),
], ids=["undo", "clear", "change and insert"])
async def test_a_whole_state_from_a_client_that_holds_every_message_is_its_edit_of_the_latest(
        before: Any, asks: list[str], edited: Any) -> None:
    """Rule: a plain `@ag-ui/client` or CopilotKit page that names no version, and holds every
    message of the thread (it saw the last run end), made its edits on the latest version: an
    undo or a clear back to an older version's content is kept (it was read as a tab that had
    missed the run, with no edit), and a change beside an insert lands once (it was taken
    against the closest older version, which put the run's item in twice)."""
    app = create_app({"todo": todo_agent() if before is TODOS else append_agent()},
                     store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        messages: list[dict[str, Any]] = []
        state = before
        for n, text in enumerate(["tick b"] if before is TODOS else asks):
            messages.append({"id": f"u{n}", "role": "user", "content": text})
            _, events = await post_run(http, "/agents/todo/ag-ui", ag_ui_body(
                runId=f"r{n}", state=state, messages=messages))
            messages = held(events)
            state = (await kept(http))["state"]
        assert state != edited  # the runs changed it
        messages.append({"id": "last", "role": "user", "content": "thanks"})
        _, events = await post_run(http, "/agents/todo/ag-ui", ag_ui_body(
            runId="last", state=edited, messages=messages))
        assert next(e for e in events if e["type"] == "STATE_SNAPSHOT")["snapshot"] == edited
        assert (await kept(http))["state"] == edited


async def milk_then_thanks(http: httpx.AsyncClient) -> list[dict[str, Any]]:
    """A run of "add milk" from `{"items": []}`; the messages a plain page then sends: those it
    holds (the run's last MESSAGES_SNAPSHOT) and its next, "thanks"."""
    _, events = await post_run(http, "/agents/todo/ag-ui", ag_ui_body(
        runId="r0", state={"items": []},
        messages=[{"id": "u0", "role": "user", "content": "add milk"}]))
    return [*held(events), {"id": "u1", "role": "user", "content": "thanks"}]


async def test_a_page_that_holds_every_message_keeps_an_edit_another_page_made_since() -> None:
    """Rule: a plain page that names no version made its edits on the state the last run left
    (its messages say it saw that run end), not on the latest: another page's edit since then
    (`PATCH`), which it never saw, stays, with its own edit beside it."""
    app = create_app({"todo": append_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        messages = await milk_then_thanks(http)
        ran = await kept(http)
        answer = await patch(http, ran["version"], [{"op": "add", "path": "/items/0",
                                                     "value": "bread"}])  # another page
        assert answer.status_code == 200, answer.text
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(
            runId="r1", state={"items": ["milk", "jam"]}, messages=messages))
        assert (await kept(http))["state"] == {"items": ["bread", "milk", "jam"]}


@pytest.mark.parametrize(("asks", "edited", "expected"), [
    (["add milk"], ["milk", "tea"], ["milk", "eggs", "tea"]),  # its add: the run's eggs stay
    (["add milk"], [], ["eggs"]),  # its delete (back to the thread's first state)
    (["add milk", "add b"], ["milk"], ["milk", "eggs"]),  # its undo of a run's add
], ids=["add", "delete", "undo"])
async def test_a_tab_that_missed_a_run_made_its_edits_on_the_state_it_saw(
        asks: list[str], edited: list[str], expected: list[str]) -> None:
    """Rule: a plain page that names no version and missed a run (another tab's) made its
    edits on the state the run that answered its own last message left: its add, its delete
    and its undo are kept, beside the run it missed. By content, the add was read as replacing
    the run's item, and the delete and the undo as no edit at all."""
    app = create_app({"todo": append_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        messages: list[dict[str, Any]] = []
        for n, text in enumerate(asks):  # both tabs see these
            messages.append({"id": f"u{n}", "role": "user", "content": text})
            _, events = await post_run(http, "/agents/todo/ag-ui", ag_ui_body(
                runId=f"r{n}", state={"items": []} if n == 0 else None, messages=messages))
            messages = held(events)
        other = [*messages, {"id": "elsewhere", "role": "user", "content": "add eggs"}]
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(runId="e", state=None,
                                                              messages=other))
        mine = [*messages, {"id": "mine", "role": "user", "content": "thanks"}]
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(
            runId="mine", state={"items": edited}, messages=mine))
        assert (await kept(http))["state"] == {"items": expected}


@pytest.mark.parametrize(("edited", "expected"), [
    (["milk"], ["milk"]), (["milk", "jam"], ["milk", "jam"]), ([], [])])
async def test_a_page_that_saw_a_version_no_longer_kept_keeps_what_came_since(
        edited: list[str], expected: list[str]) -> None:
    """Rule: a plain page whose run's version has left the kept versions (20 edits by another
    page since) is still read against that run's state (its checkpoint): the other page's
    edits stay, with the page's own. Matched by content, its unchanged state took them back."""
    app = create_app({"todo": append_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        messages = await milk_then_thanks(http)
        for n in range(20):  # another page
            base = (await kept(http))["version"]
            answer = await patch(http, base, [{"op": "add", "path": "/n", "value": n}])
            assert answer.status_code == 200, answer.text
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(
            runId="r1", state={"items": edited}, messages=messages))
        assert (await kept(http))["state"] == {"items": expected, "n": 19}


async def test_the_person_wins_where_both_wrote_and_a_gone_place_is_refused() -> None:
    """Rule: where the run and a person wrote one place, the person's write wins; an edit of
    a place that is gone is refused with 409 and the current version and state, changing
    nothing."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        wins = await patch(http, 1, [{"op": "replace", "path": "/todos/1/done",
                                      "value": False}])
        assert wins.status_code == 200 and (await kept(http))["state"] == TODOS
        gone = await patch(http, 3, [{"op": "remove", "path": "/todos"}])
        assert gone.status_code == 200
        refused = await patch(http, 3, [{"op": "replace", "path": "/todos/0/done",
                                         "value": True}])
        assert refused.status_code == 409, refused.text
        body = refused.json()
        assert body["version"] == 4 and body["state"] == {} and "/todos" in body["error"]
        assert await kept(http) == {"version": 4, "state": {}}


async def test_a_whole_state_that_writes_inside_a_place_gone_meanwhile_is_refused() -> None:
    """Rule (the same everywhere, a whole state sent with a request too): a stale tab's state
    that renames a todo another tab deleted meanwhile, on the version it names, is refused
    with 409 and the current version and state; nothing of the request applies (the todo is
    not brought back, no message is added). (Without the version the server reads the state
    by content, where it is a todo added to the latest: the guide says to send it.)"""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(messages=[
            {"id": "u1", "role": "user", "content": "hi"}]))  # version 2: b ticked
        deleted = await patch(http, 2, [{"op": "remove", "path": "/todos/1"}])
        assert deleted.status_code == 200, deleted.text
        before = await kept(http)
        messages = (await http.get("/threads/t1")).json()["messages"]
        stale = {"todos": [{"text": "a", "done": False}, {"text": "b!", "done": True}]}
        response = await http.post("/agents/todo/ag-ui", json=ag_ui_body(
            runId="r2", state=stale, forwardedProps={"stateVersion": 2},
            messages=[{"id": "u1", "role": "user", "content": "hi"},
                      {"id": "u2", "role": "user", "content": "more"}]))
        assert response.status_code == 409, response.text
        body = response.json()
        assert body["field"] == "state" and "/todos/1" in body["error"]
        assert (body["version"], body["state"]) == (before["version"], before["state"])
        assert await kept(http) == before == {"version": 3, "state": {"todos": [
            {"text": "a", "done": False}]}}
        assert (await http.get("/threads/t1")).json()["messages"] == messages


async def test_a_whole_state_made_on_a_version_no_longer_kept_is_refused() -> None:
    """Rule: a tab away for longer than the kept versions names one the server cannot rebase
    its state from: 409 with the current version and state, not a guess that puts its old
    values over a run's work. A state that is the latest is no edit, whatever version its
    messages name (a page that follows the thread live)."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(messages=[
            {"id": "u1", "role": "user", "content": "hi"}]))
        for number in range(20):  # 20 versions past the tab's 2
            answer = await patch(http, 2 + number, [{"op": "add", "path": "/n",
                                                     "value": number}])
            assert answer.status_code == 200, answer.text
        before = await kept(http)
        response = await http.post("/agents/todo/ag-ui", json=ag_ui_body(
            runId="r2", state={**TODOS, "note": "mine"}, forwardedProps={"stateVersion": 2},
            messages=[{"id": "u1", "role": "user", "content": "hi"},
                      {"id": "u2", "role": "user", "content": "more"}]))
        assert response.status_code == 409, response.text
        body = response.json()
        assert "version 2 of the thread's state is not one the server keeps" in body["error"]
        assert (body["version"], body["state"]) == (22, before["state"])
        assert await kept(http) == before and before["state"]["n"] == 19
        follows = await http.post("/agents/todo/ag-ui", json=ag_ui_body(  # a page that
            runId="r3", state=before["state"], forwardedProps={"stateVersion": 2},  # follows
            messages=[{"id": "u1", "role": "user", "content": "hi"},  # live: no edit
                      {"id": "u2", "role": "user", "content": "more"}]))
        assert follows.status_code == 200, follows.text


@pytest.mark.parametrize(("body", "status", "field", "words"), [
    ({"base": 1, "patch": [{"op": "replace", "path": "/nope/0", "value": 1}]}, 422, "patch",
     "/nope does not exist"),
    ({"base": 1, "patch": [{"op": "jump", "path": "/x"}]}, 422, "patch", "unknown patch op"),
    ({"base": 99, "patch": []}, 409, "base", "version 99 is not one"),
    ({"base": 0, "patch": []}, 422, "base", "whole number from 1"),
    ({"base": True, "patch": []}, 422, "base", "whole number from 1"),
    ({"base": 1, "patch": {"op": "add"}}, 422, "patch", "list of RFC 6902"),
    ({"base": 1, "patch": [{"op": "add", "path": "/big", "value": "x" * 3000}]}, 413,
     "patch", "max_state_bytes"),
    ({"base": 1, "patch": [{"op": "add", "path": "/todos/0/done", "value": "maybe"}]}, 422,
     "patch", "state_type"),
])
async def test_a_bad_edit_gets_a_clear_error_and_changes_nothing(
    body: dict[str, Any], status: int, field: str, words: str
) -> None:
    """Rule: a hostile or broken edit (a path that does not exist, a huge value, a value the
    state's type refuses, a forged base version) is refused naming what was wrong, and the
    state stays as it was."""

    class Todo(pydantic.BaseModel):
        text: str
        done: bool

    class Todos(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="allow")
        todos: list[Todo] = []

    app = create_app({"todo": todo_agent(state_type=Todos)}, store=MemoryStore(),
                     limits=ServerLimits(state_bytes=2000))
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(messages=[
            {"id": "u1", "role": "user", "content": "hi"}]))
        before = await kept(http)
        answer = await http.patch("/agents/todo/threads/t1/state", json=body)
        assert answer.status_code == status, answer.text
        assert answer.json()["field"] == field and words in answer.json()["error"]
        assert await kept(http) == before


async def test_only_the_owner_edits_or_follows_a_thread() -> None:
    """Rule: another principal's thread is not there (404), for an edit and for its feed."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore(),
                     auth=bearer_tokens({"tok-ann": "ann", "tok-bob": "bob"}))
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        ann = {"Authorization": "Bearer tok-ann"}
        bob = {"Authorization": "Bearer tok-bob"}
        await http.post("/agents/todo/ag-ui", json=ag_ui_body(), headers=ann)
        edit = await patch(http, 2, [{"op": "remove", "path": "/todos/0"}], **bob)
        follow = await http.get("/threads/t1/events", headers=bob)
        assert (edit.status_code, follow.status_code) == (404, 404)
        view = await http.get("/threads/t1", headers=ann)
        assert view.json()["version"] == 2


async def test_edits_past_the_rate_are_refused_with_retry_after() -> None:
    """Rule: an edit is held to a rate per client: a flood is refused 429 with Retry-After."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore(),
                     limits=ServerLimits(edits_per_second=2))
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        codes = [(await patch(http, 2, [])).status_code for _ in range(8)]
        assert codes[:4] == [200] * 4 and 429 in codes
        refused = await patch(http, 2, [])
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1


async def test_an_edit_during_a_run_is_committed_and_its_tools_rebase_onto_it() -> None:
    """Rule: an edit made while the agent works is committed at once through the run: its
    stream shows it, a tool that finishes later keeps it (disjoint places), the thread keeps
    both, and the model is told what the person changed."""
    gate = asyncio.Event()
    seen: list[list[Message]] = []
    app = create_app({"todo": todo_agent(gate, seen)}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        run = asyncio.create_task(post_run(http, "/agents/todo/ag-ui", ag_ui_body()))
        await until(lambda: bool(seen))
        await asyncio.sleep(0.05)
        answer = await patch(http, 1, [{"op": "add", "path": "/todos/-",
                                        "value": {"text": "mine", "done": False}}])
        assert answer.status_code == 200, answer.text
        assert answer.json()["version"] == 2
        gate.set()
        _, events = await run
        deltas = [(e["metadata"]["stateVersion"], e["delta"]) for e in events
                  if e["type"] == "STATE_DELTA"]
        assert deltas == [
            (2, [{"op": "add", "path": "/todos/2", "value": {"text": "mine", "done": False}}]),
            (3, [{"op": "replace", "path": "/todos/1/done", "value": True}])]
        assert (await kept(http))["state"]["todos"] == [
            {"text": "a", "done": False}, {"text": "b", "done": True},
            {"text": "mine", "done": False}]
        note = [m.content for m in seen[-1] if m.role == "system"]
        assert note and 'added {"text": "mine", "done": false} at /todos/2' in note[-1]


async def test_a_tool_that_wrote_what_the_person_wrote_meanwhile_is_refused() -> None:
    """Rule: a running tool that finishes after a person's edit to a place it wrote is
    refused, and the model reads why; the person's write stands."""
    gate = asyncio.Event()
    seen: list[list[Message]] = []
    app = create_app({"todo": todo_agent(gate, seen)}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        run = asyncio.create_task(post_run(http, "/agents/todo/ag-ui", ag_ui_body()))
        await until(lambda: bool(seen))
        await asyncio.sleep(0.05)
        answer = await patch(http, 1, [{"op": "remove", "path": "/todos/1"}])
        assert answer.status_code == 200, answer.text
        gate.set()
        await run
        assert (await kept(http))["state"] == {"todos": [{"text": "a", "done": False}]}
        result = next(m for m in seen[-1] if m.role == "tool")
        assert "changed" in str(result.content)


async def test_the_state_of_a_paused_run_takes_the_edit() -> None:
    """Rule: an edit of a thread whose run waits for a person's approval is in the state the
    run goes on from once approved."""

    @tool(approval=True)
    def pay(ctx: RunContext) -> str:
        """Pay."""
        ctx.state["paid"] = True
        return "paid"

    def model(messages: list[Message], tools: list[Any]) -> Any:
        return "ok" if any(m.role == "tool" for m in messages) else ToolCall("pay", {}, id="p")

    app = create_app({"todo": Agent(FunctionModel(model), tools=[pay])},
                     store=SQLiteStore(":memory:"))
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        _, first = await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        interrupt = first[-1]["outcome"]["interrupts"][0]
        answer = await patch(http, 1, [{"op": "add", "path": "/note", "value": "hi"}])
        assert answer.status_code == 200, answer.text
        resume = [{"interruptId": interrupt["id"], "status": "resolved",
                   "payload": {"approved": True}}]
        _, second = await post_run(http, "/agents/todo/ag-ui", ag_ui_body(
            runId="r2", resume=resume, state=None))
        assert second[-1]["type"] == "RUN_FINISHED"
        state = (await kept(http))["state"]
        assert state["note"] == "hi" and state["paid"] is True


async def _events(http: httpx.AsyncClient, thread: str, last: str | None = None,
                  query: bool = False) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    headers = {"Last-Event-ID": last} if last and not query else {}
    params = {"after": last} if last and query else {}
    async with http.stream("GET", f"/threads/{thread}/events", headers=headers,
                           params=params) as response:
        assert response.status_code == 200
        ident = ""
        async for line in response.aiter_lines():
            if line.startswith("id: "):
                ident = line[4:]
            elif line.startswith("data: "):
                yield ident, json.loads(line[6:])


async def test_an_idle_tab_follows_the_thread_and_resumes_after_its_last_event() -> None:
    """Rule: every open tab follows the thread live, idle or not: a snapshot, then each
    version (people's and runs'), runs starting and ending, and the messages each run added;
    a reconnect with Last-Event-ID goes on after it, missing nothing and repeating nothing."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=10) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        got: list[tuple[str, dict[str, Any]]] = []
        stream = _events(http, "t1")
        got.append(await anext(stream))
        assert got[0][1] == {"type": "snapshot", "version": 2, "running": False,
                             "state": {"todos": [{"text": "a", "done": False},
                                                 {"text": "b", "done": True}]}}
        await patch(http, 2, [{"op": "replace", "path": "/todos/0/done", "value": True}])
        got.append(await anext(stream))
        assert got[1][1] == {"type": "state", "version": 3, "by": "person", "run_id": None,
                             "delta": [{"op": "replace", "path": "/todos/0/done",
                                        "value": True}]}
        await stream.aclose()
        later = _events(http, "t1", last=got[1][0])
        await patch(http, 3, [{"op": "remove", "path": "/todos/0"}])
        _, item = await anext(later)
        assert (item["type"], item["version"]) == ("state", 4)
        await http.post("/agents/todo/ag-ui", json=ag_ui_body(runId="r2", state=None,
                        messages=[{"id": "u1", "role": "user", "content": "tick b"},
                                  {"id": "u2", "role": "user", "content": "again"}]))
        items = [(await anext(later))[1] for _ in range(3)]
        assert [item["type"] for item in items] == ["run_started", "messages", "run_finished"]
        added = items[1]["messages"]  # all the run added, as GET /threads gives them
        thread = (await http.get("/threads/t1")).json()
        assert added == thread["messages"][-len(added):]
        assert added[0]["role"] == "user" and added[0]["content"] == "again"
        assert added[-1]["role"] == "assistant"
        await later.aclose()


async def test_a_stale_ai_sdk_page_is_taken_against_the_version_it_echoes() -> None:
    """Rule: the AI SDK page echoes the `data-state-version` it last received; the state it
    sends is its edits on exactly that version, rebased over what others committed since: its
    delete and another tab's new todo are both kept, and the run's tick too."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        first = {"id": "c1", "trigger": "submit-message", "state": TODOS,
                 "messages": [{"id": "u1", "role": "user",
                               "parts": [{"type": "text", "text": "tick b"}]}]}
        response = await http.post("/agents/todo/ai-sdk", json=first)
        chunks = frames(response.text.replace("data: [DONE]", ""))
        parts = [c for c in chunks if c["type"] in ("data-state", "data-state-version")]
        assert parts[-1] == {"type": "data-state-version", "id": "state-version",
                             "data": {"version": 2}}
        other_tab = await patch(http, 2, [{"op": "add", "path": "/todos/-",
                                           "value": {"text": "c", "done": False}}], "c1")
        assert other_tab.json()["version"] == 3
        assistant = {"id": "a1", "role": "assistant", "parts": [
            {"type": c["type"], "id": c["id"], "data": c["data"]} for c in parts[-2:]]}
        mine = {"todos": [{"text": "b", "done": True}]}  # the page deleted a, on version 2
        second = {"id": "c1", "trigger": "submit-message", "state": mine, "messages": [
            *first["messages"], assistant,
            {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "thanks"}]}]}
        await http.post("/agents/todo/ai-sdk", json=second)
        assert (await kept(http, "c1"))["state"]["todos"] == [
            {"text": "b", "done": True}, {"text": "c", "done": False}]


async def test_a_stale_ag_ui_tab_that_names_its_version_keeps_the_runs_append() -> None:
    """Rule: a tab that missed a run sends its whole state with the version it was made on
    (`forwardedProps.stateVersion`): its append and the run's are both kept, in order (by
    content alone, [a, c] against [a, b] read as "b renamed c" and lost the run's b)."""

    app = create_app({"todo": append_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        one = [{"id": "u1", "role": "user", "content": "hi"}]
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(state={"items": ["a"]},
                                                              messages=one))  # version 1
        two = [*one, {"id": "u2", "role": "user", "content": "add b"}]
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(runId="r2", state=None,
                                                              messages=two))  # tab 1: v2
        three = [*one, {"id": "u3", "role": "user", "content": "thanks"}]
        _, events = await post_run(http, "/agents/todo/ag-ui", ag_ui_body(
            runId="r3", state={"items": ["a", "c"]}, messages=[*two, *three[1:]],
            forwardedProps={"stateVersion": 1}))  # tab 2 appended c on version 1
        assert next(e for e in events if e["type"] == "STATE_SNAPSHOT")["snapshot"] == {
            "items": ["a", "b", "c"]}


async def test_a_feed_followed_before_the_thread_exists_is_refused_and_leaks_nothing() -> None:
    """Rule: only the thread's owner follows it; a thread not started yet is not there (404,
    the same as another principal's), so a principal who guesses an id before its owner
    starts it hears nothing of it."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore(),
                     auth=bearer_tokens({"tok-ann": "ann", "tok-bob": "bob"}))
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        bob = {"Authorization": "Bearer tok-bob"}
        early = await http.get("/threads/secret/events", headers=bob)
        edit = await patch(http, 1, [], "secret", **bob)
        assert (early.status_code, early.json()) == (404, {"error": "no thread 'secret'"})
        assert (edit.status_code, edit.json()) == (404, {"error": "no thread 'secret'"})
        await http.post("/agents/todo/ag-ui", json=ag_ui_body(threadId="secret"),
                        headers={"Authorization": "Bearer tok-ann"})
        late = await http.get("/threads/secret/events", headers=bob)
        assert (late.status_code, late.json()) == (404, {"error": "no thread 'secret'"})


async def test_two_tabs_editing_at_once_are_both_committed() -> None:
    """Rule: edits that meet are committed one after the other, each rebased onto the one
    before; none is refused for running into another."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore(),
                     limits=ServerLimits(edits_per_second=None))
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        answers = await asyncio.gather(*(  # (the server keeps 16 versions to edit on)
            patch(http, 2, [{"op": "add", "path": f"/k{i}", "value": i}]) for i in range(12)))
        assert [a.status_code for a in answers] == [200] * 12
        assert sorted(a.json()["version"] for a in answers) == list(range(3, 15))
        state = (await kept(http))["state"]
        assert all(state[f"k{i}"] == i for i in range(12))


async def test_edits_racing_the_ends_of_runs_are_never_lost() -> None:
    """Rule: an edit answered 200 is in the thread's state, whether it met a run going, a
    run ending or no run (one that came as a run told its end is committed after it)."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore(),
                     limits=ServerLimits(edits_per_second=None))
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        accepted: list[int] = []

        async def edits() -> None:
            for i in range(40):
                base = (await kept(http))["version"]
                answer = await patch(http, base, [{"op": "add", "path": f"/e{i}", "value": i}])
                if answer.status_code == 200:
                    accepted.append(i)
                await asyncio.sleep(0)

        async def runs() -> None:
            for i in range(8):
                await http.post("/agents/todo/ag-ui", json=ag_ui_body(
                    runId=f"r{i}", state=None, messages=[
                        {"id": "u1", "role": "user", "content": "tick b"},
                        {"id": f"m{i}", "role": "user", "content": f"again {i}"}]))

        await asyncio.gather(edits(), runs())
        state = (await kept(http))["state"]
        assert accepted and all(state.get(f"e{i}") == i for i in accepted)


async def test_a_garbage_last_event_id_starts_again_from_a_snapshot() -> None:
    """Rule: a reconnect whose `Last-Event-ID` this server cannot place (other digits, too
    long) gets a fresh snapshot, never an error."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=10) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        for last in ("abc-\u00b2", "abc-" + "9" * 5000, "-", "x"):
            stream = _events(http, "t1", last=last, query=True)
            _, first = await anext(stream)
            assert first["type"] == "snapshot"
            await stream.aclose()


async def test_a_stale_edit_lands_on_the_item_it_was_made_on() -> None:
    """Rule: an edit made on an older version is moved past the changes committed since as
    they were made (a removal is that item's removal), so it writes the item the person
    meant, never its neighbour (a diff by place ticked d for c)."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore(),
                     limits=ServerLimits(edits_per_second=None))
    four = {"todos": [{"text": t, "done": False} for t in "abcd"]}
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(
            state=four, messages=[{"id": "u1", "role": "user", "content": "hi"}]))
        base = (await kept(http))["version"]  # (the agent ticked b)
        await patch(http, base, [{"op": "add", "path": "/todos/-",
                                  "value": {"text": "e", "done": False}}])
        await patch(http, base + 1, [{"op": "remove", "path": "/todos/0"}])
        tick = await patch(http, base, [{"op": "replace", "path": "/todos/2/done",
                                         "value": True}])
        gone = await patch(http, base, [{"op": "remove", "path": "/todos/3"}])
        assert (tick.status_code, gone.status_code) == (200, 200), (tick.text, gone.text)
        todos = (await kept(http))["state"]["todos"]
        assert [(t["text"], t["done"]) for t in todos] == [
            ("b", True), ("c", True), ("e", False)]


async def test_an_edit_that_writes_what_is_there_changes_nothing() -> None:
    """Rule: ticking a todo that is ticked makes no version: the answer is the latest
    version and an empty delta, as a run going on answers."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        same = await patch(http, 2, [{"op": "replace", "path": "/todos/1/done", "value": True}])
        assert same.json() == {"version": 2, "delta": []}
        assert (await kept(http))["version"] == 2


async def test_a_runs_start_that_brings_changes_tells_them_on_the_feed() -> None:
    """Rule: a run whose request changed the state (a whole state sent with it) starts from
    a version of its own; the feed's `run_started` carries that version's delta, so a tab
    that follows stays exact."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=10) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        stream = _events(http, "t1")
        await anext(stream)  # the snapshot, version 2
        changed = {"todos": [{"text": "a", "done": True}, {"text": "b", "done": True}]}
        await http.post("/agents/todo/ag-ui", json=ag_ui_body(
            runId="r2", state=changed, forwardedProps={"stateVersion": 2},
            messages=[{"id": "u1", "role": "user", "content": "tick b"},
                      {"id": "u2", "role": "user", "content": "more"}]))
        _, started = await anext(stream)
        assert started["type"] == "run_started" and started["version"] == 3
        assert started["delta"] == [{"op": "replace", "path": "/todos/0/done", "value": True}]
        await stream.aclose()


class _KeptWriteFails(SQLiteStore):
    """A SQLiteStore whose writes of a thread's kept state fail while `failing` (a full disk
    for that one table): the run's own records are still written."""

    failing = False

    def write_kept_state(self, thread_id: str, kept: Any, token: int | None = None) -> None:
        if self.failing:
            raise OSError("injected: no space left on device")
        super().write_kept_state(thread_id, kept, token)

    def append_kept_changes(self, thread_id: str, since: int, changes: Any,
                            token: int | None = None) -> None:
        if self.failing:
            raise OSError("injected: no space left on device")
        super().append_kept_changes(thread_id, since, changes, token)


async def test_a_kept_state_the_store_failed_to_write_is_read_again_from_the_store(
    tmp_path: Any,
) -> None:
    """Rule: the kept states a process holds in memory are only what the store holds. When a
    write of one failed, the process lets go of it and reads the thread again from the store
    and its run's record (which may hold the version the kept state missed: the full-disk test
    shows the thread then), never a state of its own the store does not have."""

    store = _KeptWriteFails(tmp_path / "s.db")
    app = create_app({"todo": append_agent()}, store=store)
    runs = app.state.pyox.runs
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        one = [{"id": "u1", "role": "user", "content": "add a"}]
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(state={"items": []},
                                                              messages=one))
        assert runs.kept_states.get("t1").state == {"items": ["a"]}
        store.failing = True
        _, events = await post_run(http, "/agents/todo/ag-ui", ag_ui_body(
            runId="r2", state=None,
            messages=[*one, {"id": "u2", "role": "user", "content": "add b"}]))
        assert events[-1]["type"] == "RUN_ERROR"  # the page is told its state was not kept
        assert runs.kept_states.get("t1") is None
        store.failing = False
        assert (await kept(http))["state"] == {"items": ["a"]}  # what the store holds


@contextlib.asynccontextmanager
async def _looked_at_as_the_run_ends(slow: str) -> AsyncIterator[
        tuple[httpx.AsyncClient, SlowRead, list[dict[str, Any]], asyncio.Task[httpx.Response]]]:
    """A run that ends while `GET /threads/t1`, begun as it went on, waits for the store's
    read of `slow`: the client, the store, the run's events and that look, still waiting."""
    gate = asyncio.Event()
    seen: list[list[Message]] = []
    store = SlowRead()
    app = create_app({"todo": todo_agent(gate, seen)}, store=store)
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        run = asyncio.create_task(post_run(http, "/agents/todo/ag-ui", ag_ui_body()))
        await until(lambda: bool(seen))  # version 1 shown, the tool waits
        store.slow = slow
        look = asyncio.create_task(http.get("/threads/t1"))
        await store.began.wait()  # it read the store before the run's end
        gate.set()
        _, events = await run
        yield http, store, events, look


async def test_a_read_of_the_kept_state_that_a_run_outlasts_is_not_taken_as_the_latest() -> None:
    """Rule: an edit named on the last version a client was shown is taken. A reader of the
    thread (a tab that starts following it, a reload) read its kept state from the store while
    the run went on; the run ended, keeping newer versions, before that read came back. The
    read's older version must not become what the server thinks it keeps: a CI run of the
    CopilotKit demo refused the person's next edit so ("version 4 is not one this server
    keeps (the latest is 1)")."""
    async with _looked_at_as_the_run_ends("kept") as (http, store, events, look):
        shown = [e["metadata"]["stateVersion"] for e in events if e["type"].startswith("STATE_")]
        assert shown[-1] == 2
        store.answer.set()
        assert (await look).status_code == 200
        answer = await patch(http, 2, [{"op": "add", "path": "/todos/-",
                                        "value": {"text": "c", "done": False}}])
        assert answer.status_code == 200, answer.text
        assert answer.json()["version"] == 3
        assert (await kept(http))["version"] == 3


async def test_a_thread_read_while_its_run_ends_names_the_version_of_the_state_it_gives() -> None:
    """Rule: `GET /threads/{id}` gives a state and the number of that very state. Begun while a
    run went on, on a slow store, it answered after the run had ended and a person's edit had
    made the next version: it named that version with the state of the one before, so a page
    that took it would never show the person's item."""
    async with _looked_at_as_the_run_ends("conversation") as (http, store, events, look):
        last = [e["metadata"]["stateVersion"] for e in events if e["type"].startswith("STATE_")]
        edited = await patch(http, last[-1], [{"op": "add", "path": "/todos/-",
                                                "value": {"text": "mine", "done": False}}])
        assert edited.status_code == 200, edited.text
        store.answer.set()
        view = (await look).json()
        assert {"version": view["version"], "state": view["state"]} == await kept(http)


@pytest.mark.parametrize("named", [None, {"runId": "r1"}], ids=["any run", "the client's run"])
async def test_a_stop_sent_while_the_run_starts_stops_it(named: dict[str, str] | None) -> None:
    """Rule: a stop pressed right after the message stops its run, also one that names the
    run by the id its client gave it (CopilotKit's). One that came while the run started (its
    thread taken, its start not saved yet: here the store's read of the thread's state is
    slow) answered `stopped: false`, and the run went on."""
    gate = asyncio.Event()
    store = SlowRead()
    store.slow = "kept"
    app = create_app({"todo": todo_agent(gate)}, store=store)
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        run = asyncio.create_task(post_run(http, "/agents/todo/ag-ui", ag_ui_body()))
        await store.began.wait()  # the run's start reads the thread's kept state
        stop = asyncio.create_task(http.post("/agents/todo/ag-ui/t1/stop", json=named))
        await asyncio.sleep(0.1)
        store.answer.set()
        assert (await stop).json() == {"stopped": True}
        _, events = await run
        assert events[-1]["type"] == "RUN_FINISHED", events[-1]
        runs = (await http.get("/threads/t1/history")).json()["runs"]
        assert [r["status"] for r in runs] == ["stopped"]
        gate.set()
