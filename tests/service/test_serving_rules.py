"""What the service and the server promise, whatever the protocol: refusals name their real
cause, a client that goes away does not stop its run, a run on another process is pushed to its
followers, and building an app leaves the process's settings alone."""

from __future__ import annotations

import asyncio
import gc
import json
import uuid
from typing import Any

import anyio
import httpx
import pytest
import redis

from pyox_agents import Agent, RunContext, ag_ui, ai_sdk, tool
from pyox_agents.events import RunFinished
from pyox_agents.models import ScriptedModel
from pyox_agents.server import create_app, tune_gc
from pyox_agents.service import RunRequest, RunService
from pyox_agents.state.messages import Message, ToolCall
from pyox_agents.stores import MemoryStore, RedisStore
from tests.ag_ui.servers import serving
from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name

pytestmark = pytest.mark.anyio


def ag_ui_body(thread: str, text: str) -> dict[str, Any]:
    return {"threadId": thread, "runId": uuid.uuid4().hex, "state": {}, "tools": [],
            "context": [], "forwardedProps": {},
            "messages": [{"id": "u1", "role": "user", "content": text}]}


def ai_sdk_body(chat: str, text: str) -> dict[str, Any]:
    return {"id": chat, "trigger": "submit-message",
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}]}


async def test_a_model_without_a_provider_is_the_servers_fault_not_a_conflict() -> None:
    """A thread conflict is 409; an agent whose model name has no provider is the server's
    configuration: 500, with the model's error, on both protocols."""
    app = create_app({"broken": Agent(model="frobnicate-9")}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as client:
        ag = await client.post("/agents/broken/ag-ui", json=ag_ui_body("t1", "hi"))
        sdk = await client.post("/agents/broken/ai-sdk", json=ai_sdk_body("c1", "hi"))
    assert ag.status_code == 500, ag.text
    assert "no provider configured for model 'frobnicate-9'" in ag.json()["error"]
    assert sdk.status_code == 500 and "no provider configured" in sdk.text
    assert sdk.headers["content-type"].startswith("text/plain")  # the AI SDK's error format


async def test_creating_and_starting_an_app_leaves_the_gc_settings_alone() -> None:
    """A library must not change process-wide settings on import or app creation: the CLI
    chooses `tune_gc()`, or the app's author does."""
    before = gc.get_threshold()
    app = create_app({"a": Agent(ScriptedModel(["hi"]))})
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as client:
        assert (await client.get("/healthz")).status_code == 200
        assert gc.get_threshold() == before
    try:
        tune_gc()
        assert gc.get_threshold() == (10_000, 5, 400)
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def gated_agent(opened: anyio.Event, store: Any) -> Agent:
    @tool
    async def wait_for_gate(ctx: RunContext) -> str:
        """Wait until the test opens the gate, then add an item."""
        await opened.wait()
        ctx.state["items"] = ["done"]
        return "ok"

    script = [ToolCall("wait_for_gate", {}), "finished"]
    return Agent(ScriptedModel(script), tools=[wait_for_gate], store=store)


@pytest.mark.parametrize("protocol", ["ag-ui", "ai-sdk"])
async def test_a_reader_that_stops_reading_does_not_stop_the_run(protocol: str) -> None:
    """One rule for both protocols' library streams, as under the server: "A client that
    disconnects does not lose the run's committed work" (DESIGN.md). The run goes on to its
    end after the consumer has gone."""
    opened = anyio.Event()
    store = MemoryStore()
    agent = gated_agent(opened, store)
    service = RunService(store)
    if protocol == "ag-ui":
        stream: Any = ag_ui.stream(agent, ag_ui_body("t-left", "go"), service=service)
    else:
        stream = ai_sdk.stream(agent, ai_sdk_body("t-left", "go"), service=service)
    await stream.__anext__()  # the run has started; the reader goes away
    await stream.aclose()
    live = service.active("t-left")
    assert live is not None and not live.done
    opened.set()
    with anyio.fail_after(10):
        async for _ in live.follow():
            pass
    assert isinstance(live.events[-1], RunFinished)
    assert live.events[-1].state == {"items": ["done"]}
    assert store.load("t-left").answer == "finished"


def _xread_calls(client: Any) -> int:
    stats = client.info("commandstats")
    return int(stats.get("cmdstat_xread", {}).get("calls", 0)) + int(
        stats.get("cmdstat_xrange", {}).get("calls", 0))


async def test_a_run_of_another_process_reaches_its_follower_by_push_not_polling(
    redis_server: str,  # noqa: F811
) -> None:
    """A follower on another process waits on the store's push (XREAD BLOCK): through a
    second of silence it reads the log a handful of times, not every 100 ms."""
    prefix = f"follow-{uuid.uuid4().hex[:8]}:"
    opened = anyio.Event()
    runner_store = RedisStore(redis_server, prefix=prefix)
    follower_store = RedisStore(redis_server, prefix=prefix)
    running = RunService(runner_store, owner="a", lease_ttl=30)
    following = RunService(follower_store, owner="b", lease_ttl=30)
    agent = gated_agent(opened, runner_store)
    request = RunRequest("t-far", messages=(Message.user("go"),), state={})
    live = await running.start(agent, request)
    found = await following.follow("t-far")
    assert found is not None
    events, _ = found
    plain = redis.Redis.from_url(redis_server)
    seen: list[Any] = []

    async def read() -> None:
        async for index, batch in events:  # (numbered as the runner numbers them)
            assert index == len(seen)
            seen.extend(batch)

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        await anyio.sleep(0.3)  # the follower caught up and waits
        calls = _xread_calls(plain)
        await anyio.sleep(1.0)
        quiet = _xread_calls(plain) - calls
        opened.set()
    assert quiet <= 3, f"the follower read the log {quiet} times in a second of silence"
    assert isinstance(seen[-1], RunFinished) and seen[-1].state == {"items": ["done"]}
    assert live.task is not None
    await asyncio.wait([live.task])  # the end is logged before the runner's process adds it
    assert [type(e) for e in seen] == [type(e) for e in live.events]
    await running.close()
    await runner_store.aclose()
    await follower_store.aclose()


@pytest.mark.parametrize("protocol", ["ag-ui", "ai-sdk"])
async def test_a_refusal_that_names_a_lone_surrogate_key_is_answered_not_a_500(
    protocol: str,
) -> None:
    """"Bad input is answered before any stream (400, ...), never with a 500" (README): also
    when the path the refusal names holds a key that is not text (written as its escape)."""
    doc: Any = {"\udcff": [[None]]}
    for _ in range(69):
        doc = {"a": doc}
    body = ag_ui_body("t-deep", "hi") if protocol == "ag-ui" else ai_sdk_body("t-deep", "hi")
    body["state"] = {"doc": doc}
    raw = json.dumps(body).encode()
    app = create_app({"a": Agent(ScriptedModel(["hi"]))})
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as client:
        refused = await client.post(f"/agents/a/{protocol}", content=raw,
                                    headers={"content-type": "application/json"})
    assert refused.status_code == 400, refused.text
    assert "nests deeper than" in refused.text and "\\udcff" in refused.text


class _QuickModel:
    """Streams 300 short tokens at once, as a fast model's chunks arrive together."""

    name = "quick"

    async def stream(self, request: Any) -> Any:
        from pyox_agents.models.base import TextChunk

        for i in range(300):
            yield TextChunk(f"t{i} ")


async def test_a_shared_runs_log_takes_the_deltas_that_come_together_as_one(
    redis_server: str,  # noqa: F811
) -> None:
    """The store logs each event of a shared run on its own (a write each), so deltas of one
    part that reach the log in one batch are merged first: a follower on another process
    reads the same text, in order, in a few events rather than one per token, and the runner's
    own followers read the same events as the log holds."""
    prefix = f"merge-{uuid.uuid4().hex[:8]}:"
    store = RedisStore(redis_server, prefix=prefix)
    service = RunService(store, owner="a", lease_ttl=30)
    live = await service.start(Agent(_QuickModel()),
                               RunRequest("t-quick", messages=(Message.user("go"),), state={}))
    assert live.task is not None and live.run_key is not None
    await asyncio.wait([live.task])
    logged = [json.loads(text) for _, text in await store.aread_events(live.run_key)]
    deltas = [event for event in logged if event["type"] == "TextDelta"]
    assert "".join(event["delta"] for event in deltas) == "".join(f"t{i} " for i in range(300))
    assert len(deltas) <= 10, f"{len(deltas)} deltas logged for 300 tokens"
    assert len(logged) == len(live.events)  # the same events the runner's followers read
    await service.close()
    await store.aclose()
