"""Live shared state against a real server, from the outside: hostile and careless clients.

Pins what held when tried: hostile patches are refused with a clear 4xx naming the problem and
change nothing; concurrent stale edits that are committed get unique, consecutive versions that
replay to the kept state, and every follower sees each once, in order; a feed resumes exactly
after its Last-Event-ID and starts again from a snapshot on an id it cannot go on from; a
follower that never reads stalls nobody; the model is told of an in-run edit once."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, Message, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import ServerLimits, create_app
from pyox_agents.state.frozen import freeze, thaw
from pyox_agents.state.patch import apply_json
from pyox_agents.stores import MemoryStore, SQLiteStore
from tests.ag_ui.servers import post_run, serving
from tests.server.test_live_state import _events, ag_ui_body, kept, patch, todo_agent, until

pytestmark = pytest.mark.anyio


def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.mark.parametrize(("body", "status", "words"), [
    ({"base": 2, "patch": [{"op": "add", "path": "/todos/0/text/x", "value": 1}]}, 422,
     "/todos/0/text is not an object or array"),
    ({"base": 2, "patch": [{"op": "add", "path": "/todos/-/text", "value": 1}]}, 422,
     "/todos/- does not exist"),
    ({"base": 2, "patch": [{"op": "replace", "path": "/todos/-", "value": 1}]}, 422,
     "no such place"),
    ({"base": 2, "patch": [{"op": "replace", "path": "/todos/01", "value": 1}]}, 422,
     "no such place"),
    ({"base": 2, "patch": [{"op": "replace", "path": "/todos/-1", "value": 1}]}, 422,
     "no such place"),
    ({"base": 2, "patch": [{"op": "add", "path": "todos", "value": 1}]}, 422,
     "is not a JSON Pointer"),
    ({"base": 2, "patch": [{"op": "remove", "path": ""}]}, 422,
     "cannot remove the whole document"),
    ({"base": 2, "patch": [{"op": "move", "from": "", "path": "/x"}]}, 422,
     "a value cannot move into itself"),
    ({"base": 2, "patch": [{"op": "move", "from": "/todos/0", "path": "/todos/0/text"}]},
     422, "cannot move into itself"),
    ({"base": 2, "patch": [{"op": "add", "path": "/a~2", "value": 1}]}, 422,
     "is not a JSON Pointer"),
    ({"base": 2, "patch": [{"op": "add", "path": "/a~", "value": 1}]}, 422,
     "is not a JSON Pointer"),
    ({"base": 2, "patch": [{"op": "add", "path": "/\ud800", "value": 1}]}, 422,
     "lone surrogate"),
    ({"base": 2, "patch": [{"op": "add", "path": "/x", "value": "a\udc00b"}]}, 422,
     "lone surrogate"),
    ({"base": 2, "patch": [{"op": "add", "path": "/x", "value": {"\ud800": 1}}]}, 422,
     "lone surrogate"),
    ({"base": 2, "patch": [{"op": "add", "path": "/y", "value": 1},
                           {"op": "test", "path": "/todos/0/done", "value": True}]}, 422,
     "patch test failed"),
    ({"base": 2, "patch": [{"op": "add", "path": "/y", "value": 1},
                           {"op": "remove", "path": "/nope"}]}, 422, "cannot remove /nope"),
    ({"base": 2, "patch": [{"op": "add", "path": "/deep", "value": _deep(70)}]}, 422,
     "may nest at most 64 levels"),
    ({"base": 2, "patch": [{"op": "add", "path": "/deep", "value": _deep(63)}]}, 422,
     "nest deeper than 64 levels"),
    ({"base": 2, "patch": [{"op": "add", "path": f"/k{i}", "value": i}
                           for i in range(1001)]}, 413, "an edit may have 1,000"),
    ({"base": 2, "patch": [{"op": "add", "path": "/big", "value": "x" * 1_200_000}]}, 413,
     "max_state_bytes"),
    ({"base": 2, "patch": [{"op": "add", "path": "/big", "value": "x" * 6_000_000}]}, 413,
     "the limit is 5000000"),
    ({"base": 2.0, "patch": []}, 422, "whole number from 1"),
    ({"base": "2", "patch": []}, 422, "whole number from 1"),
    ({"base": -1, "patch": []}, 422, "whole number from 1"),
    ({"base": None, "patch": []}, 422, "whole number from 1"),
    ({"base": 10**30, "patch": []}, 409, "is not one this server keeps"),
    ({"base": 2, "patch": [{"op": ["add"], "path": "/x", "value": 1}]}, 422,
     "unknown patch operation"),
    ({"base": 2, "patch": [{"op": "add", "path": 5, "value": 1}]}, 422, "no string 'path'"),
    ({"base": 2, "patch": [{"op": "move", "path": "/x"}]}, 422, "no string 'from'"),
    ({"base": 2, "patch": [{"op": "add", "path": "/x"}]}, 422, "no 'value'"),
    ([1, 2], 422, "must be a JSON object"),
])
async def test_a_hostile_patch_is_refused_clearly_and_changes_nothing(
    body: Any, status: int, words: str
) -> None:
    """Rule: a patch that does not apply, breaks a limit, or names a bad base is refused with
    a 4xx that names the problem; the thread's state and version stay; the server answers."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        before = await kept(http)
        answer = await http.patch("/agents/todo/threads/t1/state",
                                  content=json.dumps(body).encode(),
                                  headers={"content-type": "application/json"})
        assert answer.status_code == status, answer.text[:300]
        assert words in answer.json()["error"]
        assert await kept(http) == before
        assert (await http.get("/healthz")).status_code == 200


@pytest.mark.parametrize("raw", [b"{nope", b"\xff\xfe{}",
                                 b'{"base":2,"patch":[{"op":"add","path":"/n","value":NaN}]}',
                                 b'{"base":2,"patch":[{"op":"add","path":"/n","value":1e999}]}'])
async def test_a_body_that_is_not_json_is_refused_and_changes_nothing(raw: bytes) -> None:
    """Rule: a body that is not JSON (or holds NaN or infinity) is a 4xx, never a change."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore())
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        before = await kept(http)
        answer = await http.patch("/agents/todo/threads/t1/state", content=raw,
                                  headers={"content-type": "application/json"})
        assert answer.status_code in (400, 422), answer.text
        assert await kept(http) == before


@pytest.mark.parametrize("store", ["memory", "sqlite"])
@pytest.mark.parametrize("kind", ["disjoint", "overlap", "inserts", "mixed"])
async def test_concurrent_stale_edits_get_consecutive_versions_that_replay_to_the_state(
    kind: str, store: str
) -> None:
    """Rule: edits sent at once on one stale base that are committed get unique, consecutive
    versions; their deltas, applied in that order, give the kept state; a follower sees each
    version once, in order."""

    def ops(i: int) -> list[dict[str, Any]]:
        if kind == "disjoint":
            return [{"op": "add", "path": f"/k{i}", "value": i}]
        if kind == "overlap":
            return [{"op": "replace", "path": "/todos/0/text", "value": f"v{i}"}]
        if kind == "inserts":
            return [{"op": "add", "path": "/todos/1", "value": {"text": f"i{i}", "done": False}}]
        return [[{"op": "add", "path": "/todos/0", "value": {"text": f"m{i}", "done": False}}],
                [{"op": "replace", "path": "/todos/1/done", "value": bool(i % 2)}],
                [{"op": "remove", "path": "/todos/1"}],
                [{"op": "add", "path": "/todos/-", "value": i}]][i % 4]

    app = create_app({"todo": todo_agent()},
                     store=MemoryStore() if store == "memory" else SQLiteStore(":memory:"),
                     limits=ServerLimits(edits_per_second=None))
    limits = httpx.Limits(max_connections=100)
    async with serving(app) as url, \
            httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        for j in range(3):  # the base the edits name is 3 versions old
            assert (await patch(http, 2 + j, [{"op": "add", "path": f"/p{j}",
                                               "value": j}])).status_code == 200
        start = await kept(http)
        follower = _events(http, "t1")
        _, snapshot = await anext(follower)
        assert snapshot["version"] == start["version"]
        answers = await asyncio.gather(*(patch(http, 2, ops(i)) for i in range(50)))
        assert {a.status_code for a in answers} <= {200, 409}
        done = sorted((a.json()["version"], a.json()["delta"]) for a in answers
                      if a.status_code == 200 and a.json()["delta"])
        versions = [v for v, _ in done]
        assert versions == list(range(start["version"] + 1, start["version"] + 1 + len(done)))
        state = freeze(start["state"])
        for _, delta in done:
            state = apply_json(state, delta)
        final = await kept(http)
        assert final["version"] == start["version"] + len(done)
        assert thaw(state) == final["state"]
        seen = []
        while len(seen) < len(done):
            _, item = await asyncio.wait_for(anext(follower), 5)
            seen.append((item["version"], item["delta"]))
        assert seen == done
        await follower.aclose()


async def test_a_feed_resumes_exactly_and_starts_again_where_it_cannot() -> None:
    """Rule: a follower that reconnects with Last-Event-ID gets what came after it, nothing
    twice and nothing missed; an id it cannot go on from (garbage, one from the future, or one
    of another thread's feed) gets a fresh snapshot of the latest version."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore(),
                     limits=ServerLimits(edits_per_second=None))
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=10) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(threadId="t2"))
        first = _events(http, "t1")
        snap_id, _ = await anext(first)
        for i in range(10):
            await patch(http, 2 + i, [{"op": "add", "path": f"/e{i}", "value": i}])
        got = [await anext(first) for _ in range(7)]
        await first.aclose()
        for i in range(10, 20):
            await patch(http, 2 + i, [{"op": "add", "path": f"/e{i}", "value": i}])
        again = _events(http, "t1", last=got[-1][0])
        rest = [await anext(again) for _ in range(13)]
        assert [item["version"] for _, item in got + rest] == list(range(3, 23))
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(again), 0.3)
        await again.aclose()

        other = _events(http, "t2")
        await anext(other)
        await patch(http, 2, [{"op": "add", "path": "/x", "value": 1}], thread="t2")
        other_id, _ = await anext(other)
        await other.aclose()
        epoch = snap_id.split("-")[0]
        for last in ["zzz", "abc-12", f"{epoch}--5", f"{epoch}-999999", other_id]:
            fresh = _events(http, "t1", last=last)
            _, item = await anext(fresh)
            assert (item["type"], item["version"]) == ("snapshot", 22), last
            await fresh.aclose()


async def test_a_follower_that_never_reads_stalls_no_one() -> None:
    """Rule: every open tab follows the thread; one that never reads its stream holds up
    neither the edits nor the other tabs."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore(),
                     limits=ServerLimits(edits_per_second=None))
    limits = httpx.Limits(max_connections=300)
    async with serving(app) as url, \
            httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body())
        tabs = [_events(http, "t1") for _ in range(100)]
        assert {(await anext(t))[1]["version"] for t in tabs} == {2}
        host, port = url.removeprefix("http://").split(":")
        slow = socket.create_connection((host, int(port)))
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.sendall(b"GET /threads/t1/events HTTP/1.1\r\nHost: x\r\n\r\n")
        try:
            await asyncio.sleep(0.2)
            started = time.monotonic()
            for i in range(20):
                answer = await patch(http, 2 + i, [{"op": "add" if i == 0 else "replace",
                                                    "path": "/big",
                                                    "value": "y" * 200_000 + str(i)}])
                assert answer.status_code == 200
            for tab in tabs:
                items = [await asyncio.wait_for(anext(tab), 10) for _ in range(20)]
                assert [item["version"] for _, item in items] == list(range(3, 23))
            assert time.monotonic() - started < 20
            assert (await http.get("/healthz")).status_code == 200
        finally:
            slow.close()
            for tab in tabs:
                await tab.aclose()


async def test_the_model_is_told_of_an_in_run_edit_once() -> None:
    """Rule: the model's next request after an edit made during the run carries one note of
    it; the request after that, and the next run's, carry none for it."""
    gates = [asyncio.Event(), asyncio.Event()]
    seen: list[list[Message]] = []

    @tool
    async def tick(ctx: RunContext, index: int) -> str:
        """Tick todo `index`."""
        await gates[index].wait()
        ctx.state["todos"][index]["done"] = True
        return f"ticked {index}"

    def model(messages: list[Message], tools: list[Any]) -> Any:
        seen.append(list(messages))
        done = sum(1 for m in messages if m.role == "tool")
        return ToolCall("tick", {"index": done}, id=f"c{done}") if done < 2 else "done"

    def notes(messages: list[Message]) -> list[str]:
        return [str(m.content) for m in messages
                if m.role == "system" and "The person changed" in str(m.content)]

    app = create_app({"todo": Agent(FunctionModel(model), tools=[tick])}, store=MemoryStore(),
                     limits=ServerLimits(edits_per_second=None))
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=10) as http:
        run = asyncio.create_task(post_run(http, "/agents/todo/ag-ui", ag_ui_body()))
        await until(lambda: len(seen) == 1)
        await asyncio.sleep(0.05)
        assert (await patch(http, 1, [{"op": "add", "path": "/n1",
                                       "value": "first"}])).status_code == 200
        assert (await patch(http, 2, [{"op": "add", "path": "/n2",
                                       "value": "second"}])).status_code == 200
        gates[0].set()
        await until(lambda: len(seen) == 2)
        await asyncio.sleep(0.05)
        assert (await patch(http, 4, [{"op": "replace", "path": "/n1",
                                       "value": "third"}])).status_code == 200
        gates[1].set()
        await run
        assert [len(notes(m)) for m in seen] == [0, 1, 1]
        assert '"first" at /n1' in notes(seen[1])[0] and '"second" at /n2' in notes(seen[1])[0]
        assert '"third"' in notes(seen[2])[0] and "second" not in notes(seen[2])[0]
        state = await kept(http)
        seen.clear()
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(
            runId="r2", state=state["state"], forwardedProps={"stateVersion": state["version"]},
            messages=[{"id": "u1", "role": "user", "content": "tick b"},
                      {"id": "u2", "role": "user", "content": "more"}]))
        assert seen and not any(notes(m) for m in seen)
