"""Live shared state: followers of a thread, and a person's edit, against a bare floor.

Two uvicorn servers, each pinned to CPU 0 (the client on CPU 1), serve the same two routes:

- `ours`: `create_app` with a MemoryStore: `PATCH /agents/bench/threads/{id}/state` (a person's
  edit: rebased, checked against the limits, kept, fanned out) and `GET /threads/{id}/events`
  (the thread's feed: a snapshot, then every version);
- `floor`: a bare Starlette app: the PATCH parses the body, bumps a number, puts the item on
  each follower's queue and answers; the events route streams each follower's queue. No
  rebase, no limits, no store: what any server that fans edits out must do at least.

Three workloads:

1. fan-out: `--tabs` followers (100) of one thread; `--edits` edits (50), one every 20 ms; the
   time from sending each edit to each follower reading its version: p50 and p99, and the ratio
   ours / floor.
2. an edit's round trip on a big state: the thread holds `--items` items (100,000); `--edits`
   edits that each tick one item, one after another; the server's CPU per edit (ours: the
   patch applied to the kept version, rebased, checked, kept), and the ratio to the floor's
   (which applies it with `jsonpatch` in place).
3. idle followers: `--idle` followers (1,000), each of its own thread; the server's memory per
   follower (RSS growth / followers), and the ratio ours / floor.
4. fan-out across two processes (`--across`, on by default): two `ours` processes share a
   RedisStore on a throwaway redis-server; the followers read process B while the edits go to
   process A, so every version travels through the thread's feed log in Redis. p50 and p99,
   and the ratio to workload 1's one process (goal: p99 within 50 ms).

Run:
    .venv/bin/python bench/live_state.py [--tabs 100] [--edits 50] [--items 100000]
        [--idle 1000] [--no-across] [--no-write]
"""

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Server, instrument, pin_self, table, write_section

VERSION = re.compile(rb'"type":"state","version":(\d+)')

# ---------------------------------------------------------------- server side


def ours_app() -> Any:
    """pyox-agents' server; a thread's state is seeded by a run (`POST .../ag-ui` with the
    state), whose model answers at once."""
    from pyox_agents import Agent
    from pyox_agents.models import FunctionModel
    from pyox_agents.server import ServerLimits, create_app
    from pyox_agents.stores import MemoryStore

    agent = Agent(FunctionModel(lambda messages, tools: "ok"))
    return instrument(create_app({"bench": agent}, store=MemoryStore(), limits=ServerLimits(
        edits_per_second=None, state_bytes=None)))


def shared_app() -> Any:
    """`ours_app` on the RedisStore at `$BENCH_REDIS` (several processes share it)."""
    import os

    from pyox_agents import Agent
    from pyox_agents.models import FunctionModel
    from pyox_agents.server import ServerLimits, create_app
    from pyox_agents.stores.redis import RedisStore

    agent = Agent(FunctionModel(lambda messages, tools: "ok"))
    store = RedisStore(os.environ["BENCH_REDIS"], prefix="live:")
    return instrument(create_app({"bench": agent}, store=store, limits=ServerLimits(
        edits_per_second=None, state_bytes=None)))


def floor_app() -> Any:
    """A bare fan-out: a version number, each follower's queue, `jsonpatch` in place."""
    import jsonpatch  # type: ignore[import-untyped]
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, StreamingResponse
    from starlette.routing import Route

    threads: dict[str, dict[str, Any]] = {}

    def thread(thread_id: str) -> dict[str, Any]:
        return threads.setdefault(thread_id, {"version": 0, "state": {}, "queues": set()})

    async def seed(request: Request) -> JSONResponse:
        body = json.loads(await request.body())
        kept = thread(body["threadId"])
        kept["state"], kept["version"] = body["state"], 1
        return JSONResponse({})

    async def edit(request: Request) -> JSONResponse:
        kept = thread(request.path_params["thread_id"])
        body = json.loads(await request.body())
        jsonpatch.apply_patch(kept["state"], body["patch"], in_place=True)
        kept["version"] += 1
        item = json.dumps({"type": "state", "version": kept["version"],
                           "delta": body["patch"]}, separators=(",", ":"))
        for queue in kept["queues"]:
            queue.put_nowait(item)
        return JSONResponse({"version": kept["version"]})

    async def events(request: Request) -> StreamingResponse:
        kept = thread(request.path_params["thread_id"])
        queue: asyncio.Queue[str] = asyncio.Queue()
        kept["queues"].add(queue)

        async def frames() -> Any:
            try:
                yield 'data: {"type":"snapshot"}\n\n'
                while True:
                    yield f"data: {await queue.get()}\n\n"
            finally:
                kept["queues"].discard(queue)

        return StreamingResponse(frames(), media_type="text/event-stream")

    return instrument(Starlette(routes=[
        Route("/agents/bench/ag-ui", seed, methods=["POST"]),
        Route("/agents/bench/threads/{thread_id}/state", edit, methods=["PATCH"]),
        Route("/threads/{thread_id}/events", events, methods=["GET"]),
    ]))


# ---------------------------------------------------------------- client side


class Follower:
    """One follower's connection (by hand: an HTTP client would cost more than the server),
    noting when it reads each version."""

    def __init__(self) -> None:
        self.seen: dict[int, float] = {}
        self.ready = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def follow(self, port: int, thread_id: str) -> None:
        reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        self.writer.write(f"GET /threads/{thread_id}/events HTTP/1.1\r\nHost: b\r\n\r\n"
                          .encode())
        buffer = b""
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                return
            now = time.perf_counter()
            buffer += chunk
            if b'"snapshot"' in buffer:
                self.ready.set()
            for match in VERSION.finditer(buffer):
                self.seen.setdefault(int(match.group(1)), now)
            buffer = buffer[-64:]

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.task is not None:
            self.task.cancel()


async def request(port: int, method: str, path: str, body: Any) -> dict[str, Any]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    data = json.dumps(body).encode()
    writer.write(f"{method} {path} HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)
    raw = await reader.read()
    writer.close()
    head, _, payload = raw.partition(b"\r\n\r\n")
    if b" 200 " not in head.split(b"\r\n", 1)[0]:
        raise RuntimeError(f"{method} {path}: {raw[:300]!r}")
    if b"chunked" in head.lower():
        payload = payload.split(b"\r\n", 1)[1].rsplit(b"\r\n0\r\n", 1)[0]
    return json.loads(payload) if payload.strip() else {}


async def seed(port: int, thread_id: str, state: Any) -> None:
    """Start the thread from `state` (version 1): a run, read to its end."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    data = json.dumps({"threadId": thread_id, "runId": "r", "state": state, "messages": [
        {"id": "u", "role": "user", "content": "hi"}]}).encode()
    writer.write(f"POST /agents/bench/ag-ui HTTP/1.1\r\nHost: b\r\nContent-Type: "
                 f"application/json\r\nContent-Length: {len(data)}\r\nConnection: close"
                 "\r\n\r\n".encode() + data)
    raw = await reader.read()
    writer.close()
    if b" 200 " not in raw.split(b"\r\n", 1)[0]:
        raise RuntimeError(f"seeding {thread_id}: {raw[:300]!r}")


async def follow_all(port: int, threads: list[str]) -> list[Follower]:
    followers = []
    for thread_id in threads:
        follower = Follower()
        follower.task = asyncio.create_task(follower.follow(port, thread_id))
        followers.append(follower)
    await asyncio.gather(*(ready(f) for f in followers))
    return followers


async def ready(follower: Follower) -> None:
    """Wait for the follower's snapshot; raise if its feed ended first (it was refused)."""
    assert follower.task is not None
    waiting = asyncio.ensure_future(follower.ready.wait())
    await asyncio.wait({waiting, follower.task}, return_when=asyncio.FIRST_COMPLETED)
    if not follower.ready.is_set():
        waiting.cancel()
        raise RuntimeError("a follower's feed ended before its snapshot: the server refused it")


async def fan_out(port: int, tabs: int, edits: int, follow_port: int | None = None
                  ) -> list[float]:
    """Latencies (ms) from sending each edit to each follower (on `follow_port`, else `port`)
    reading its version."""
    await seed(port, "fan", {"todos": [{"n": 0}] * 10})
    followers = await follow_all(follow_port or port, ["fan"] * tabs)
    sent: dict[int, float] = {}
    base = 1
    for index in range(edits):
        started = time.perf_counter()
        answer = await request(port, "PATCH", "/agents/bench/threads/fan/state", {
            "base": base, "patch": [{"op": "replace", "path": f"/todos/{index % 10}/n",
                                     "value": index + 1}]})
        base = answer["version"]
        sent[base] = started
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.5)
    latencies = [(f.seen[version] - at) * 1000 for version, at in sent.items()
                 for f in followers if version in f.seen]
    missing = len(sent) * len(followers) - len(latencies)
    for follower in followers:
        follower.close()
    if missing:
        raise RuntimeError(f"{missing} (follower, version) pairs never arrived")
    return latencies


async def big_edits(server: Server, items: int, edits: int) -> float:
    """The server's CPU ms per edit of one item of an `items`-item state."""
    port = server.port
    await seed(port, "big", {"items": [{"n": i, "done": False} for i in range(items)]})
    base = 1
    answer = await request(port, "PATCH", "/agents/bench/threads/big/state", {
        "base": base, "patch": [{"op": "replace", "path": "/items/0/done", "value": True}]})
    base = answer["version"]
    before = server.cpu_seconds()
    for index in range(edits):
        answer = await request(port, "PATCH", "/agents/bench/threads/big/state", {
            "base": base, "patch": [{"op": "replace", "path": f"/items/{index * 997 % items}"
                                     "/done", "value": True}]})
        base = answer["version"]
    return (server.cpu_seconds() - before) / edits * 1000


async def idle(server: Server, count: int) -> float:
    """The server's memory (KiB) per idle follower, each of its own thread (started first: a
    thread that does not exist yet cannot be followed)."""
    threads = [f"idle{i}" for i in range(count)]
    for start in range(0, count, 20):
        await asyncio.gather(*(seed(server.port, thread_id, {"n": 0})
                               for thread_id in threads[start:start + 20]))
    await asyncio.sleep(0.3)
    before = server.memory()[0]
    followers = await follow_all(server.port, threads)
    await asyncio.sleep(0.5)
    after = server.memory()[0]
    for follower in followers:
        follower.close()
    return (after - before) * 1024 / count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tabs", type=int, default=100)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--no-across", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    pin_self(1)
    rows = []
    figures: dict[str, dict[str, float]] = {}
    for name, port in (("ours", 8741), ("floor", 8742)):
        with Server(f"live_state:{name}_app", port) as server:
            late = asyncio.run(fan_out(port, args.tabs, args.edits))
            cpu = asyncio.run(big_edits(server, args.items, args.edits))
            memory = asyncio.run(idle(server, args.idle))
        quantiles = statistics.quantiles(late, n=100)
        figures[name] = {"p50": statistics.median(late), "p99": quantiles[98], "cpu": cpu,
                         "memory": memory}
    for key, label in (("p50", "fan-out p50, ms"), ("p99", "fan-out p99, ms"),
                       ("cpu", f"edit of a {args.items:,}-item state, server CPU ms"),
                       ("memory", "an idle follower, server KiB")):
        ours, floor = figures["ours"][key], figures["floor"][key]
        rows.append([label, f"{ours:.2f}", f"{floor:.2f}", f"{ours / floor:.2f}x"])
    if not args.no_across:
        late = across(args.tabs, args.edits)
        one = figures["ours"]
        for index, key in ((49, "p50"), (98, "p99")):
            at = statistics.quantiles(late, n=100)[index]
            rows.append([f"fan-out across two processes on Redis, {key}, ms", f"{at:.2f}",
                         f"{one[key]:.2f} (ours, one process)", f"{at / one[key]:.2f}x"])
    text = table(["workload", "ours", "floor", "ours / floor"], rows)
    text += (f"\n\n{args.tabs} followers of one thread, {args.edits} edits 20 ms apart; "
             f"{args.idle} idle followers of their own threads. `python bench/live_state.py`")
    print(text)
    if not args.no_write:
        write_section("Live shared state", text)


def across(tabs: int, edits: int) -> list[float]:
    """Workload 4: followers on process B, edits to process A, one redis-server between."""
    from processes import Redis

    with Redis(8749) as redis, Server("live_state:shared_app", 8743,
                                      env={"BENCH_REDIS": redis.url}), \
            Server("live_state:shared_app", 8744, env={"BENCH_REDIS": redis.url}):
        return asyncio.run(fan_out(8743, tabs, edits, follow_port=8744))


if __name__ == "__main__":
    main()
