"""Issue 10: every bad request gets its documented 4xx, never a 500, and persists nothing.

Each case of `corpus_ag_ui.CASES` and `corpus_ai_sdk.CASES` is one test: a fresh app (driven
through httpx's ASGITransport, as for finished runs; bearer auth, a SQLiteStore in a file) with
two threads of ann's already saved (`ann-thread`, finished; `ann-paused`, waiting for the
approval of `wipe`), the request, then: the status; an AG-UI error body that is JSON
`{"error", "field"?}`, or an AI SDK one that is plain text; and every table of the store
unchanged. The few requests the protocols accept on purpose (status 200) must stream to a proper
end instead.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pydantic
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import ServerLimits, bearer_tokens, create_app
from pyox_agents.stores import SQLiteStore
from tests.reliability import corpus_ag_ui, corpus_ai_sdk
from tests.reliability.corpus_common import (
    BUGS,
    INTERRUPT,
    MAX_BODY,
    MESSAGES,
    RUNS_PER_PRINCIPAL,
    STATE_BYTES,
    TOKENS,
    Case,
)

pytestmark = pytest.mark.anyio


def sse_data(text: str) -> list[str]:
    """The `data:` payloads of an SSE body."""
    return [line[5:].strip() for line in text.replace("\r\n", "\n").split("\n")
            if line.startswith("data:")]


class Todos(pydantic.BaseModel):
    items: list[str] = []


class Gate:
    """Holds the `hold` tool's calls until released; tells the test of each call that came."""

    def __init__(self) -> None:
        self.arrive, self.arrived = anyio.create_memory_object_stream[str](100)
        self.release = anyio.Event()

    def close(self) -> None:
        """Close both ends of the arrival stream (an unclosed stream warns when collected)."""
        self.arrive.close()
        self.arrived.close()


def agents(gate: Gate) -> dict[str, Agent]:
    @tool
    def add(ctx: RunContext, text: str) -> str:
        """Add an item."""
        ctx.state["items"].append(text)
        return "added"

    @tool(approval=True)
    def wipe(ctx: RunContext) -> str:
        """Remove every item (a person approves)."""
        ctx.state["items"] = []
        return "wiped"

    @tool
    async def hold() -> str:
        """Wait until the test lets go."""
        await gate.arrive.send("hold")
        await gate.release.wait()
        return "held"

    def reply(messages: list[Any], tools: list[Any]) -> Any:
        last = messages[-1]
        if last.role == "tool":
            return "Done."
        for word in ("wipe", "hold"):
            if last.role == "user" and word in last.content:
                return ToolCall(word, {})
        if last.role == "user" and "add" in last.content:
            return ToolCall("add", {"text": "x"})
        return "ok"

    return {"todo": Agent(FunctionModel(reply), tools=[add, wipe, hold]),
            "typed": Agent(FunctionModel(reply), tools=[add], state_type=Todos)}


def dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of the SQLite store at `path` (read by a connection of ours)."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        tables = [name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {name: sorted(db.execute(f"SELECT * FROM {name}").fetchall(), key=repr)
                for name in tables}


def auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


async def seed(client: httpx.AsyncClient) -> str:
    """ann's two threads; returns the id of the approval `ann-paused` waits for."""
    for thread, text in (("ann-thread", "add one"), ("ann-paused", "wipe")):
        response = await client.post("/agents/todo/ag-ui", headers=auth("tok-ann"), json={
            "threadId": thread, "runId": "seed", "state": {"items": ["kept"]},
            "messages": [{"id": "u1", "role": "user", "content": text}]})
        assert response.status_code == 200, response.text
    last = json.loads(sse_data(response.text)[-1])
    assert last["outcome"]["type"] == "interrupt", last
    return str(last["outcome"]["interrupts"][0]["id"])


async def hold_thread(client: httpx.AsyncClient, thread: str) -> None:
    """Run ann's `hold` on `thread`: it waits in its tool until the gate is released."""
    response = await client.post("/agents/todo/ag-ui", headers=auth("tok-ann"), json={
        "threadId": thread, "runId": "r", "state": {"items": []},
        "messages": [{"id": "u", "role": "user", "content": "hold"}]})
    assert response.status_code == 200
    assert json.loads(sse_data(response.text)[-1])["type"] == "RUN_FINISHED"


def params(cases: list[Case]) -> list[Any]:
    ids = [case.id for case in cases]
    assert len(ids) == len(set(ids)), "case ids are unique"
    return [pytest.param(case, id=f"{case.id}-{case.status}",
                         marks=[pytest.mark.xfail(strict=True, reason=BUGS[case.bug])]
                         if case.bug else []) for case in cases]


async def check(case: Case, endpoint: str, tmp_path: Path,
                error_body: Callable[[httpx.Response, Case], None]) -> None:
    gate = Gate()
    path = tmp_path / "store.db"
    store = SQLiteStore(path)
    app = create_app(agents(gate), store=store, auth=bearer_tokens(TOKENS), max_body=MAX_BODY,
                     limits=ServerLimits(state_bytes=STATE_BYTES, messages=MESSAGES,
                                         runs_per_principal=RUNS_PER_PRINCIPAL))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client, \
            anyio.create_task_group() as tg:
        interrupt = await seed(client)
        holding = {"busy": ["ann-busy"], "busy2": ["ann-busy", "ann-busy2"]}.get(case.setup, [])
        for thread in holding:
            tg.start_soon(hold_thread, client, thread)
        with anyio.fail_after(10):
            for _ in holding:
                await gate.arrived.receive()
        before = dump(path)
        response = await client.request(
            case.method, case.path or endpoint,
            content=case.body.replace(INTERRUPT.encode(), interrupt.encode()),
            headers={"content-type": "application/json", **auth(case.token), **case.headers})
        after = dump(path)
        gate.release.set()
        assert (await client.get("/healthz")).status_code == 200, "the server serves on"
    gate.close()
    store.close()
    assert response.status_code == case.status, (case.checks, response.text[:500])
    error_body(response, case)
    if case.status == 200:
        return
    assert after == before, f"{case.id}: the refused request changed the store"


def ag_ui_error(response: httpx.Response, case: Case) -> None:
    if case.status == 200:  # accepted on purpose: the run streams to its end
        assert json.loads(sse_data(response.text)[-1])["type"] == "RUN_FINISHED"
        return
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert isinstance(body["error"], str) and body["error"]
    if case.field is not None:
        assert body.get("field") == case.field, body
    if case.status == 401:
        assert response.headers["www-authenticate"] == "Bearer"
    if case.status == 429:
        assert int(response.headers["retry-after"]) > 0


def ai_sdk_error(response: httpx.Response, case: Case) -> None:
    if case.status == 200:  # accepted on purpose: the run streams to its end
        *chunks, done = sse_data(response.text)
        finish = json.loads(chunks[-1])
        finish.pop("messageMetadata", None)  # the run's usage and cost: not what is checked here
        assert done == "[DONE]" and finish == {"type": "finish", "finishReason": "stop"}
        return
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text.strip()
    if case.status == 401:
        assert response.headers["www-authenticate"] == "Bearer"
    if case.status == 429:
        assert int(response.headers["retry-after"]) > 0


def test_the_corpora_are_big_enough() -> None:
    for cases in (corpus_ag_ui.CASES, corpus_ai_sdk.CASES):
        refused = [case for case in cases if case.status != 200]
        assert len(refused) >= 40
        assert {case.status for case in refused} == {400, 401, 404, 409, 413, 415, 422, 429}


@pytest.mark.parametrize("case", params(corpus_ag_ui.CASES))
async def test_ag_ui_bad_request(case: Case, tmp_path: Path) -> None:
    await check(case, "/agents/todo/ag-ui", tmp_path, ag_ui_error)


@pytest.mark.parametrize("case", params(corpus_ai_sdk.CASES))
async def test_ai_sdk_bad_request(case: Case, tmp_path: Path) -> None:
    await check(case, "/agents/todo/ai-sdk", tmp_path, ai_sdk_error)
