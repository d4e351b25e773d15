"""The server holds up against other users and big or many requests (issue 10's rules)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.server import ServerLimits, bearer_tokens, create_app
from pyox_agents.service import RequestError, RunRequest, RunService
from pyox_agents.stores import MemoryStore

pytestmark = pytest.mark.anyio

TOKENS = {"tok-ann": "ann", "tok-bob": "bob"}


@tool
def add(ctx: RunContext, text: str) -> str:
    """Add an item."""
    ctx.state["items"].append(text)
    return "added"


def agent(script: list[Any] | None = None) -> Agent:
    return Agent(ScriptedModel(script or [ToolCall("add", {"text": "a"}), "done"] * 5),
                 tools=[add])


def body(thread: str, text: str = "go", state: Any = None) -> dict[str, Any]:
    return {"threadId": thread, "runId": "r1", "state": state if state is not None else
            {"items": []}, "messages": [{"id": "m1", "role": "user", "content": text}],
            "tools": [], "context": [], "forwardedProps": {}}


def client(app: Any, token: str | None = None) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                             base_url="http://test", headers=headers)


async def test_without_credentials_the_server_answers_401() -> None:
    app = create_app({"todo": agent()}, store=MemoryStore(), auth=bearer_tokens(TOKENS))
    async with client(app) as anonymous, client(app, "wrong") as stranger:
        for c in (anonymous, stranger):
            response = await c.post("/agents/todo/ag-ui", json=body("t1"))
            assert response.status_code == 401 and "Bearer" in response.json()["error"]
            assert response.headers["www-authenticate"] == "Bearer"


async def test_another_principals_thread_and_run_are_not_found() -> None:
    store = MemoryStore()
    app = create_app({"todo": agent()}, store=store, auth=bearer_tokens(TOKENS))
    async with client(app, "tok-ann") as ann, client(app, "tok-bob") as bob:
        response = await ann.post("/agents/todo/ag-ui", json=body("ann-thread"))
        assert response.status_code == 200
        assert (await ann.get("/threads/ann-thread")).status_code == 200
        assert (await bob.get("/threads/ann-thread")).status_code == 404
        assert (await bob.post("/agents/todo/ag-ui", json=body("ann-thread"))).status_code == 404
        run_id = next(r.run_id for r in [store.load_run(rid) for rid in _runs(store)])
        assert (await ann.get(f"/runs/{run_id}")).status_code == 200
        assert (await bob.get(f"/runs/{run_id}")).status_code == 404
        # another's run and an unknown one answer alike, and say where a run's id is found
        # (a client's AG-UI runId is not it)
        strangers, unknown = (await bob.get(f"/runs/{run_id}")).json()["error"], (
            await ann.get("/runs/r1")).json()["error"]
        assert strangers.replace(run_id, "r1") == unknown
        assert "GET /threads/{id}/history" in unknown and "runId" in unknown
        assert (await bob.get("/agents/todo/ai-sdk/ann-thread/stream")).status_code == 404
    assert store.entry_count("ann-thread") > 0


def _runs(store: MemoryStore) -> list[str]:
    return list(store._runs)  # the test's own window into the store


async def test_a_state_over_the_limit_is_413_and_nothing_runs() -> None:
    store = MemoryStore()
    app = create_app({"todo": agent()}, store=store, limits=ServerLimits(state_bytes=100))
    async with client(app) as c:
        response = await c.post("/agents/todo/ag-ui",
                                json=body("big", state={"items": ["x" * 200]}))
    assert response.status_code == 413 and response.json()["field"] == "state"
    assert "limit is 100" in response.json()["error"] and store.entry_count("big") == 0


async def test_too_many_messages_is_413() -> None:
    app = create_app({"todo": agent()}, limits=ServerLimits(messages=2))
    payload = body("t")
    payload["messages"] = [{"id": f"m{i}", "role": "user", "content": "x"} for i in range(3)]
    async with client(app) as c:
        response = await c.post("/agents/todo/ag-ui", json=payload)
    assert response.status_code == 413 and response.json()["field"] == "messages"


async def test_over_the_concurrency_limit_is_429_with_retry_after() -> None:
    app = create_app({"todo": agent()}, auth=bearer_tokens(TOKENS),
                     limits=ServerLimits(runs_per_principal=0, retry_after=7))
    async with client(app, "tok-ann") as c:
        response = await c.post("/agents/todo/ag-ui", json=body("t"))
        ai = await c.post("/agents/todo/ai-sdk", content=json.dumps({"id": "c", "messages": [],
                                                                    "trigger": "submit-message"}))
    assert response.status_code == 429 and response.headers["retry-after"] == "7"
    assert ai.status_code in (422, 429)


async def test_runs_per_principal_and_in_total_are_counted_while_they_run() -> None:
    release = anyio.Event()

    @tool
    async def wait() -> str:
        """Wait."""
        await release.wait()
        return "ok"

    def waiting() -> Agent:  # a script of its own for each run: `start` runs to the first event
        return Agent(ScriptedModel([ToolCall("wait", {}), "done"]), tools=[wait])

    service = RunService(limits=ServerLimits(runs_per_principal=1, runs_total=2))
    first = await service.start(waiting(), RunRequest("t1", state={}), principal="ann")
    with pytest.raises(RequestError) as mine:
        await service.start(waiting(), RunRequest("t2", state={}), principal="ann")
    assert mine.value.status == 429 and mine.value.headers["Retry-After"]
    second = await service.start(waiting(), RunRequest("t3", state={}), principal="bob")
    with pytest.raises(RequestError, match="the server runs 2 runs") as total:
        await service.start(waiting(), RunRequest("t4", state={}), principal="cy")
    assert total.value.status == 429
    release.set()
    for live in (first, second):
        assert live.task is not None
        await live.task
    again = await service.start(waiting(), RunRequest("t2", state={}), principal="ann")
    assert again.task is not None  # a principal's ended runs no longer count
    await again.task


async def test_without_auth_only_the_servers_run_limit_applies() -> None:
    """Without auth every client is one principal: the per-principal cap would refuse the 51st
    person on the whole server, so only `runs_total` holds."""
    release = anyio.Event()

    @tool
    async def wait() -> str:
        """Wait."""
        await release.wait()
        return "ok"

    def waiting() -> Agent:
        return Agent(ScriptedModel([ToolCall("wait", {}), "done"]), tools=[wait])

    service = RunService(limits=ServerLimits(runs_per_principal=1, runs_total=3))
    started = [await service.start(waiting(), RunRequest(f"t{n}", state={}), principal=None)
               for n in range(3)]
    with pytest.raises(RequestError, match="the server runs 3 runs") as total:
        await service.start(waiting(), RunRequest("t3", state={}), principal=None)
    assert total.value.status == 429
    release.set()
    for live in started:
        assert live.task is not None
        await live.task


async def test_a_server_without_auth_is_not_held_to_the_per_principal_limit() -> None:
    app = create_app({"todo": agent()}, limits=ServerLimits(runs_per_principal=0))
    async with client(app) as c:
        response = await c.post("/agents/todo/ag-ui", json=body("t"))
    assert response.status_code == 200 and '"RUN_FINISHED"' in response.text


async def test_a_run_over_the_servers_duration_limit_fails_with_run_timeout() -> None:
    @tool
    async def hang() -> str:
        """Hang."""
        await anyio.sleep_forever()
        return "never"

    hanging = Agent(ScriptedModel([ToolCall("hang", {}), "x"]), tools=[hang])
    service = RunService(limits=ServerLimits(run_seconds=0.2))
    live = await service.start(hanging, RunRequest("t", state={}))
    events = [e async for e in live.follow()]
    last = events[-1]
    assert type(last).__name__ == "RunFailed" and last.error.code == "run_timeout"  # type: ignore[attr-defined]
    ends = [e for e in events if type(e).__name__ in ("RunFinished", "RunFailed")]
    assert ends == [last]  # one end, the timeout: not "cancelled" first
    assert service.active("t") is None
