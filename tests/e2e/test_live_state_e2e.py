"""Live shared state with the real clients and `@pyox-agents/live-state` (clients/live-state).

Two tabs (`LiveThread`s) follow one thread and edit its todo list at random (add, tick, untick,
delete, reorder) while an `@ag-ui/client` HttpAgent (1.0.0, and 0.0.59: the client CopilotKit
bundles) runs a paced agent that adds todos, and between its runs; the agent's page edits with
`agent.setState` (`followAgent`). One tab's feed is slow and cut now and then (it edits on
stale versions, and reconnects with Last-Event-ID). Once all is quiet, both tabs, the agent
and `GET /threads/{id}` hold the same state, and every edit a tab made is in it unless the
server refused it or another edit overwrote or deleted it after.

The same with the two tabs on two server processes sharing one Redis.

And `stripOldStateParts` with ai 7's `Chat` (`DefaultChatTransport`): the request no longer
carries every past `data-state` part, so it stops growing with the turns.
"""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, Message, RunContext, ToolCall, tool
from pyox_agents.models import FunctionModel
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore
from tests.e2e.conftest import closing_store
from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name

Serve = Callable[[Any], str]
RunNode = Callable[..., dict[str, Any]]

PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "live-state"


def todo_agent(pause: float = 0.5) -> Agent:
    """An agent that adds one todo per message (its tool takes `pause` seconds), then says so."""
    numbers = itertools.count(1)

    @tool
    async def add_todo(ctx: RunContext, text: str) -> str:
        """Add a todo to the shared list."""
        await asyncio.sleep(pause)
        if "todos" not in ctx.state:
            ctx.state["todos"] = []
        ident = f"agent-{next(numbers)}"
        ctx.state["todos"].append({"id": ident, "text": text, "done": False})
        return f"added {ident}"

    def model(messages: list[Message], tools: list[Any]) -> Any:
        last = next(m for m in reversed(messages) if m.role in ("user", "tool"))
        if last.role == "user":
            return ToolCall("add_todo", {"text": str(last.content)[:40]})
        return "Added."

    return Agent(FunctionModel(model), tools=[add_todo])


def kept(base: str, thread: str) -> dict[str, Any]:
    view = httpx.get(f"{base}/threads/{thread}", timeout=10)
    assert view.status_code == 200, view.text
    return view.json()


def ids(state: dict[str, Any]) -> list[str]:
    return [t["id"] for t in state.get("todos", [])]


@pytest.mark.parametrize(("client", "processes"), [
    ("@ag-ui/client", 1), ("agui0059", 1), ("@ag-ui/client", 2)])
def test_two_tabs_and_an_agent_edit_one_thread(serve: Serve, run_node: RunNode,
                                               request: pytest.FixtureRequest, client: str,
                                               processes: int) -> None:
    """With two processes, the agent and tab a use one server and tab b (with the observer)
    another, both on one real Redis: every rule below holds across them."""
    agent = todo_agent()
    if processes == 1:
        base = second = serve(create_app({"todo": agent}, store=MemoryStore()))
    else:
        from pyox_agents.stores.redis import RedisStore

        url, prefix = request.getfixturevalue("redis_server"), f"live-{uuid.uuid4().hex[:8]}:"
        stores = [RedisStore(url, prefix=prefix) for _ in range(2)]
        base, second = (serve(closing_store(create_app({"todo": agent}, store=store), store))
                        for store in stores)
    thread = f"t-{uuid.uuid4().hex[:12]}"
    out = run_node("live_state.mjs", "tabs", base,
                   {"threadId": thread, "client": client, "runs": 4, "seed": 7, "baseB": second},
                   timeout=90)
    server = kept(base, thread)
    final = server["state"]
    tabs = out["tabs"].values()

    # One state everywhere once it is quiet: both tabs, the agent's, the server's kept state.
    assert out["errors"] == []
    for tab in tabs:
        assert tab["state"] == final and tab["version"] == server["version"]
        assert tab["pending"] == 0
    assert out["agentState"] == final

    # The scenario did what it says: edits of both tabs, stale ones, reconnects, runs.
    edits = [e for tab in tabs for e in tab["edits"]]
    assert len(edits) >= 25
    assert {e["kind"] for e in edits} >= {"add", "tick", "untick", "delete", "reorder"}
    assert sum(e["stale"] for e in edits) >= 3, "no edit was made on a stale version"
    assert out["tabs"]["b"]["reconnects"] >= 1  # with Last-Event-ID
    assert out["runs"] == 4 and out["runErrors"] == []
    versions = [r["forwardedProps"].get("stateVersion") for r in out["runRequests"]]
    assert versions[0] is None and all(isinstance(v, int) for v in versions[1:]), versions

    # Every edit was answered: committed, or refused and the page told why.
    committed = [e for e in edits if e["outcome"] == "committed"]
    refused = [e for e in edits if e["outcome"] == "refused"]
    assert len(committed) + len(refused) == len(edits)
    assert all(e["error"] for e in refused)
    assert len(refused) == sum(len(tab["refusals"]) for tab in tabs)
    assert not {e["id"] for e in refused if e["kind"] == "add"} & set(ids(final))

    # The client sent each edit for the todo it was made for, on a version the server keeps
    # (its ops read on that version), and every version reached the observer.
    assert all(e["sentRight"] is True for e in committed), [
        e for e in committed if e["sentRight"] is not True]
    assert all(e["applied"] is not None for e in committed)

    # Every committed edit is in the final state, as the server applied it, unless a later
    # one removed or overwrote it: each tab's new todos are there unless removed, and each
    # todo's `done` is the last value written to it.
    removed = {i for e in committed for i in e["applied"]["removed"]}
    for e in committed:
        if e["kind"] == "add":
            assert e["id"] in ids(final) or e["id"] in removed, e
    # The agent's page edited through agent.setState (followAgent): the thread has it.
    assert "page-2" in ids(final) and ("page-1" in ids(final) or "page-1" in removed)
    agents = {i for i in out["history"] if i.startswith("agent-")}
    assert len(agents) == 4, agents  # each run's todo, kept as its run committed it
    assert all(i in ids(final) or i in removed for i in agents)
    last: dict[str, tuple[int, bool]] = {}
    for e in sorted(committed, key=lambda e: e["version"]):
        for ident, value in e["applied"]["writes"]:
            last[ident] = (e["version"], value)
    twice = {i for i, seen in out["history"].items()  # in a version twice (see below)
             if len({v for v, _ in seen}) < len(seen)}
    for todo in final["todos"]:
        if todo["id"] in last and todo["id"] not in twice:
            assert todo["done"] is last[todo["id"]][1], (todo, out["history"][todo["id"]])

    # Where the server applied an edit to the todo it was made for, its effect is there: a
    # deleted todo is gone; a todo is in the list once. The server does not always (see
    # test_a_stale_edit_lands_on_the_todo_it_was_made_for): a move it misplaced may re-add a
    # todo (then twice in the list, or back after a delete), a todo deleted in its stead is
    # gone, and an edit it rebased to nothing leaves its todo as it was.
    misplaced = [e for e in committed if not e["appliedRight"]]
    readded = {e["id"] for e in misplaced if e["kind"] == "reorder"}
    for e in committed:
        if e["kind"] == "delete" and e["appliedRight"]:
            assert e["id"] not in ids(final) or e["id"] in readded, e
    assert twice <= readded, (twice, misplaced)


def todo(ident: str, done: bool = False) -> dict[str, Any]:
    return {"id": ident, "done": done}


@pytest.mark.parametrize(("others", "stale", "meant"), [
    pytest.param(  # e added, then a removed; the stale tick is for c (index 2 at version 1)
        [[{"op": "add", "path": "/todos/-", "value": todo("e")}],
         [{"op": "remove", "path": "/todos/0"}]],
        [{"op": "replace", "path": "/todos/2/done", "value": True}],
        [todo("b"), todo("c", True), todo("d"), todo("e")], id="tick"),
    pytest.param(  # b moved to the end; the stale edit moves b to the front
        [[{"op": "remove", "path": "/todos/1"},
          {"op": "add", "path": "/todos/3", "value": todo("b")}]],
        [{"op": "remove", "path": "/todos/1"},
         {"op": "add", "path": "/todos/0", "value": todo("b")}],
        [todo("b"), todo("a"), todo("c"), todo("d")], id="move"),
])
def test_a_stale_edit_lands_on_the_todo_it_was_made_for(
        serve: Serve, others: list[list[dict[str, Any]]], stale: list[dict[str, Any]],
        meant: list[dict[str, Any]]) -> None:
    """A tab's edit made on version 1 after others' edits (versions 2, 3) is applied to the
    todos it was made for, or refused (409) changing nothing; never to other todos."""
    base = serve(create_app({"todo": Agent(FunctionModel(lambda m, t: "ok"))},
                            store=MemoryStore()))
    start = {"todos": [todo(i) for i in "abcd"]}
    run = httpx.post(f"{base}/agents/todo/ag-ui", timeout=30, json={
        "threadId": "t1", "runId": "r1", "state": start,
        "messages": [{"id": "u1", "role": "user", "content": "hi"}]})
    assert run.status_code == 200 and kept(base, "t1")["version"] == 1
    url = f"{base}/agents/todo/threads/t1/state"
    for number, ops in enumerate(others, start=1):
        assert httpx.patch(url, json={"base": number, "patch": ops}).status_code == 200
    before = kept(base, "t1")
    answer = httpx.patch(url, json={"base": 1, "patch": stale})
    after = kept(base, "t1")
    if answer.status_code == 409:
        assert after == before
    else:
        assert answer.status_code == 200, answer.text
        assert after["state"]["todos"] == meant


def test_stripping_old_state_parts_keeps_the_request_from_growing(
        serve: Serve, run_node: RunNode) -> None:
    base = serve(create_app({"todo": todo_agent(pause=0.05)}, store=MemoryStore()))
    chats = {"plain": f"c-{uuid.uuid4().hex[:12]}", "stripped": f"c-{uuid.uuid4().hex[:12]}"}
    out = run_node("live_state.mjs", "aisdk", base,
                   {"chats": chats, "turns": 5, "blob": 50_000}, timeout=90)
    plain, stripped = out["plain"], out["stripped"]
    assert plain["errors"] == [] and stripped["errors"] == []
    # Each turn's answer brings the state (one todo more): the plain chat sends them all back.
    assert plain["sizes"][-1] > 4 * 50_000
    assert all(b > a + 40_000 for a, b in itertools.pairwise(plain["sizes"][1:]))
    assert max(stripped["sizes"]) < 2 * 50_000 + 20_000
    assert stripped["sizes"][-1] - stripped["sizes"][1] < 10_000
    # The server still reads which version the page holds, and keeps the same state.
    assert all(isinstance(v, int) for v in stripped["sentVersions"][1:])
    for name, chat in chats.items():
        state = kept(base, chat)["state"]
        assert len(state["todos"]) == 5 and len(state["blob"]) == 50_000, name
        assert out[name]["state"] == {**state, "blob": 50_000}


def test_the_package_unit_tests_pass() -> None:
    """The pure parts (applyOps, diffState, stripOldStateParts): `node --test`."""
    proc = subprocess.run(["node", "--test", str(PACKAGE / "test")], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
