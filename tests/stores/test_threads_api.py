"""The threads API over every store, on a real uvicorn server: a principal's threads listed,
renamed, archived and deleted; a thread's history of runs; a fork at a run or a message, a
rewind, and the undo of one run's changes (rebased over later ones, a conflict refused)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import bearer_tokens, create_app
from pyox_agents.state.messages import Message
from pyox_agents.stores import MemoryStore, SQLiteStore, Store
from tests.ag_ui.servers import serving

pytestmark = pytest.mark.anyio

TOKENS = {"tok-ann": "ann", "tok-bob": "bob"}
ANN = {"Authorization": "Bearer tok-ann"}
BOB = {"Authorization": "Bearer tok-bob"}


@tool
def edit(ctx: RunContext, changes: dict[str, Any]) -> str:
    """Set each key of `changes` in the shared state (None removes it)."""
    for key, value in changes.items():
        if value is None:
            del ctx.state[key]
        else:
            ctx.state[key] = value
    return "edited"


def editor() -> Agent:
    """An agent whose model sets, for a user message whose text is a JSON object, those keys
    of the shared state, then says "Done."."""

    def reply(messages: list[Message], tools: Any) -> Any:
        last = messages[-1]
        if last.role == "user" and last.content.startswith("{"):
            return ToolCall("edit", {"changes": json.loads(last.content)})
        return "Done."

    return Agent(FunctionModel(reply), tools=[edit])


@pytest.fixture(params=["memory", "sqlite", "redis", "postgres"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "memory":
        return MemoryStore()
    if request.param == "sqlite":
        return SQLiteStore(tmp_path / "t.db")
    store: Store = request.getfixturevalue(f"{request.param}_store")
    return store


@pytest.fixture
async def client(any_store: Store) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app({"ed": editor()}, store=any_store, auth=bearer_tokens(TOKENS))
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        yield http


async def send(http: httpx.AsyncClient, thread: str, message_id: str, text: Any,
               headers: dict[str, str] = ANN) -> None:
    """One AG-UI request with one new user message (`text`, or a JSON object of changes)."""
    content = text if isinstance(text, str) else json.dumps(text)
    body = {"threadId": thread, "runId": "r", "messages": [
        {"id": message_id, "role": "user", "content": content}]}
    response = await http.post("/agents/ed/ag-ui", json=body, headers=headers)
    assert response.status_code == 200, response.text
    assert "RUN_FINISHED" in response.text


async def thread(http: httpx.AsyncClient, thread_id: str) -> dict[str, Any]:
    response = await http.get(f"/threads/{thread_id}", headers=ANN)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def history(http: httpx.AsyncClient, thread_id: str) -> list[dict[str, Any]]:
    response = await http.get(f"/threads/{thread_id}/history", headers=ANN)
    assert response.status_code == 200, response.text
    runs: list[dict[str, Any]] = response.json()["runs"]
    return runs


async def test_a_principal_lists_renames_archives_and_deletes_their_threads(
        client: httpx.AsyncClient, any_store: Store) -> None:
    for n in range(3):
        await send(client, f"ann-{n}", f"u{n}", f"Plan trip {n}")
    await send(client, "bobs", "b1", "Bob's own", BOB)
    page = (await client.get("/threads?limit=2", headers=ANN)).json()
    assert [t["id"] for t in page["threads"]] == ["ann-2", "ann-1"]
    assert page["threads"][0]["title"] == "Plan trip 2" and page["threads"][0]["run"] is None
    rest = (await client.get(f"/threads?limit=2&cursor={page['next']}", headers=ANN)).json()
    assert [t["id"] for t in rest["threads"]] == ["ann-0"] and rest["next"] is None

    renamed = await client.patch("/threads/ann-0", json={"title": "Lisbon"}, headers=ANN)
    assert renamed.json() == {"id": "ann-0", "title": "Lisbon"}
    await client.patch("/threads/ann-1", json={"archived": True}, headers=ANN)
    listed = (await client.get("/threads", headers=ANN)).json()["threads"]
    assert [(t["id"], t["title"]) for t in listed] == [("ann-2", "Plan trip 2"),
                                                        ("ann-0", "Lisbon")]
    archived = (await client.get("/threads?archived=true", headers=ANN)).json()["threads"]
    assert [t["id"] for t in archived] == ["ann-1"]

    run_id = (await history(client, "ann-0"))[0]["run_id"]
    deleted = await client.delete("/threads/ann-0", headers=ANN)
    assert deleted.json() == {"id": "ann-0", "deleted": True, "runs": [run_id]}
    assert (await client.get("/threads/ann-0", headers=ANN)).status_code == 404
    assert (await client.get(f"/runs/{run_id}", headers=ANN)).status_code == 404
    assert any_store.load_audit(run_id) == [] and any_store.load_kept_state("ann-0") is None
    assert any_store.load_checkpoints("ann-0") == []
    assert [t["id"] for t in (await client.get("/threads", headers=BOB)).json()["threads"]] == [
        "bobs"]


async def test_the_history_lists_each_run_with_its_message_status_and_version(
        client: httpx.AsyncClient) -> None:
    await send(client, "t", "u1", {"a": 1})
    await send(client, "t", "u2", "no change")
    await send(client, "t", "u3", {"b": 2})
    runs = await history(client, "t")
    assert [(r["answers"], r["status"], r["version"], r["current"]) for r in runs] == [
        ("u1", "completed", 2, True), ("u2", "completed", 2, True),
        ("u3", "completed", 3, True)]
    assert [r["asked"] for r in runs] == ['{"a": 1}', "no change", '{"b": 2}']


async def test_a_regenerate_leaves_a_branch_the_history_lists(client: httpx.AsyncClient) -> None:
    await send(client, "t", "u1", {"a": 1})
    await send(client, "t", "u2", {"b": 2})
    body = {"threadId": "t", "runId": "r", "messages": [
        {"id": "u1", "role": "user", "content": json.dumps({"a": 1})},
        {"id": "u2", "role": "user", "content": json.dumps({"b": 2})}]}
    regenerated = await client.post("/agents/ed/ag-ui", json=body, headers=ANN)
    assert regenerated.status_code == 200
    response = (await client.get("/threads/t/history", headers=ANN)).json()
    runs = response["runs"]
    assert [(r["answers"], r["current"]) for r in runs] == [
        ("u1", True), ("u2", False), ("u2", True)]
    (branch,) = response["branches"]
    assert branch["after_message"] == "u2" and branch["runs"] == [runs[1]["run_id"]]


async def test_a_fork_at_a_run_has_the_conversation_and_state_of_then(
        client: httpx.AsyncClient) -> None:
    await send(client, "t", "u1", {"a": 1})
    then = await thread(client, "t")
    await send(client, "t", "u2", {"a": 2, "b": 3})
    first = (await history(client, "t"))[0]["run_id"]
    response = await client.post("/threads/t/fork", json={"run_id": first, "thread_id": "t2"},
                                 headers=ANN)
    assert response.status_code == 201, response.text
    assert response.json() == {"id": "t2", "history_length": response.json()["history_length"],
                               "state": {"a": 1}}
    forked = await thread(client, "t2")
    assert (forked["messages"], forked["state"]) == (then["messages"], then["state"])
    assert (await thread(client, "t"))["state"] == {"a": 2, "b": 3}  # the thread is as it was
    await send(client, "t2", "u3", {"c": 4})  # the fork goes on from there
    assert (await thread(client, "t2"))["state"] == {"a": 1, "c": 4}
    listed = [t["id"] for t in (await client.get("/threads", headers=ANN)).json()["threads"]]
    assert listed == ["t2", "t"]
    taken = await client.post("/threads/t/fork", json={"run_id": first, "thread_id": "t2"},
                              headers=ANN)
    assert taken.status_code == 409 and taken.json()["field"] == "thread_id"


async def test_a_fork_at_a_message_ends_with_it_and_has_the_state_it_was_sent_with(
        client: httpx.AsyncClient) -> None:
    await send(client, "t", "u1", {"a": 1})
    await send(client, "t", "u2", {"a": 2})
    response = await client.post("/threads/t/fork", json={"message_id": "u2"}, headers=ANN)
    assert response.status_code == 201, response.text
    forked = await thread(client, response.json()["id"])
    assert [m["id"] for m in forked["messages"] if m["role"] == "user"] == ["u1", "u2"]
    assert forked["messages"][-1]["id"] == "u2" and forked["state"] == {"a": 1}


async def test_a_rewind_takes_the_conversation_and_state_back_to_right_after_a_run(
        client: httpx.AsyncClient) -> None:
    await send(client, "t", "u1", {"a": 1})
    then = await thread(client, "t")
    await send(client, "t", "u2", {"b": 2})
    first, second = (r["run_id"] for r in await history(client, "t"))
    response = await client.post("/threads/t/rewind", json={"run_id": first}, headers=ANN)
    assert response.status_code == 200, response.text
    now = await thread(client, "t")
    assert (now["messages"], now["state"]) == (then["messages"], then["state"])
    assert [(r["run_id"], r["current"]) for r in await history(client, "t")] == [
        (first, True), (second, False)]
    await send(client, "t", "u3", {"c": 3})
    assert (await thread(client, "t"))["state"] == {"a": 1, "c": 3}


async def test_an_undo_reverses_one_runs_changes_over_the_later_ones(
        client: httpx.AsyncClient) -> None:
    await send(client, "t", "u1", {"a": 1, "keep": True})
    await send(client, "t", "u2", {"b": 2, "a": None})
    await send(client, "t", "u3", {"c": 3})
    second = (await history(client, "t"))[1]["run_id"]
    response = await client.post("/threads/t/undo", json={"run_id": second}, headers=ANN)
    assert response.status_code == 200, response.text
    assert response.json()["state"] == {"a": 1, "keep": True, "c": 3}
    assert (await thread(client, "t"))["state"] == {"a": 1, "keep": True, "c": 3}


async def test_an_undo_that_conflicts_with_a_later_change_is_refused_naming_the_place(
        client: httpx.AsyncClient) -> None:
    await send(client, "t", "u1", {"a": 1})
    await send(client, "t", "u2", {"a": 5})
    first = (await history(client, "t"))[0]["run_id"]
    response = await client.post("/threads/t/undo", json={"run_id": first}, headers=ANN)
    assert response.status_code == 409
    assert response.json()["field"] == "run_id" and "at /a" in response.json()["error"]
    assert (await thread(client, "t"))["state"] == {"a": 5}


@pytest.mark.parametrize("any_store", ["redis", "postgres"], indirect=True)
async def test_a_deleted_thread_leaves_nothing_of_it_in_a_shared_store(
        client: httpx.AsyncClient, any_store: Any) -> None:
    """Its entries, kept state, checkpoints, runs, audit records and event logs all go; another
    thread's stay as they were."""
    from tests.stores.conftest import snapshot

    await send(client, "keep", "k1", {"x": 1})
    before = snapshot(any_store)
    await send(client, "t", "u1", {"a": 1})
    await send(client, "t", "u2", {"b": 2})
    assert (await client.delete("/threads/t", headers=ANN)).status_code == 200
    after = snapshot(any_store)
    changed = {key for key in {*before, *after} if before.get(key) != after.get(key)}
    counters = {f"{getattr(any_store, 'prefix', '')}{name}"
                for name in ("threads-order", "lease-tokens")}  # (Redis's; none in PostgreSQL)
    assert changed <= counters, changed  # its entries, runs, audit, checkpoints, events: gone
