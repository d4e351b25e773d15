"""Soak: mixed traffic on one server process for minutes, watching for leaks.

    .venv/bin/python bench/soak.py --minutes 30            # the full run (a sample a minute)
    .venv/bin/python bench/soak.py --minutes 3 --interval 10   # the CI run (tests/reliability)

A server process (`--serve`, started by this script) serves two agents with a SQLiteStore:
"todo" (two tool calls that change the shared state, then an answer) and "gate" (a tool that
needs approval). `--clients` concurrent clients (50) loop over five kinds of traffic: an AG-UI
run, an AI SDK run, an approval answered by a resume, a client that disconnects after a few
events (its run goes on, detached), and an AI SDK run left then followed again through the
resume GET. Every `--interval` seconds the server's RSS, open file descriptors, asyncio tasks
and threads are sampled (`GET /soak/stats`, after a garbage collection).

Verdict, on two quiet moments (traffic paused, detached runs ended): after the first sixth
of the run, and at the end. Memory at the end within 10 % of memory after the first sixth;
file descriptors, tasks and threads no more than then (plus 2, for a worker thread of the
pool that happens to be alive). Exit status 0 when it holds, 1 when not.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- the server process


def _stats() -> dict[str, float]:
    gc.collect()
    with open("/proc/self/statm") as statm:
        rss_pages = int(statm.read().split()[1])
    return {"rss_mb": rss_pages * os.sysconf("SC_PAGE_SIZE") / 2**20,
            "fds": len(os.listdir("/proc/self/fd")), "tasks": len(asyncio.all_tasks()),
            "threads": threading.active_count()}


def soak_app(db: str) -> Any:
    """The served app: our agents on a SQLiteStore, plus `GET /soak/stats`."""
    import anyio

    from pyox_agents import Agent, RunContext, tool
    from pyox_agents.models import FunctionModel, ToolCall
    from pyox_agents.server import ServerLimits, create_app
    from pyox_agents.stores import SQLiteStore

    @tool
    async def add(ctx: RunContext, text: str) -> str:
        """Add an item to the list."""
        await anyio.sleep(0.005)
        items = ctx.state.setdefault("items", [])
        items.append(text)
        if len(items) > 20:  # a long-lived thread's state stays small
            del items[0]
        return "added"

    @tool(approval=True)
    async def ship(ctx: RunContext, what: str) -> str:
        """Ship something (a person approves first)."""
        ctx.state["shipped"] = what
        return "shipped"

    def todo(messages: Any, tools: Any) -> Any:
        since = [m for m in messages[_last_user(messages) + 1:] if m.role == "tool"]
        return ToolCall("add", {"text": f"item {len(since)}"}) if len(since) < 2 else "Done."

    def gate(messages: Any, tools: Any) -> Any:
        since = [m for m in messages[_last_user(messages) + 1:] if m.role == "tool"]
        return ToolCall("ship", {"what": "parcel"}) if not since else "Shipped."

    app = create_app({"todo": Agent(FunctionModel(todo), tools=[add]),
                      "gate": Agent(FunctionModel(gate), tools=[ship])},
                     store=SQLiteStore(db), tune_gc=True, keepalive=5,
                     # detached runs (clients that left) count too: room for all of them
                     limits=ServerLimits(runs_total=2000, runs_per_principal=2000))

    async def with_stats(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/soak/stats":
            body = json.dumps(_stats()).encode()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, send)

    return with_stats


def _last_user(messages: Any) -> int:
    return max(i for i, m in enumerate(messages) if m.role == "user")


def serve(port: int, db: str) -> None:
    import uvicorn

    uvicorn.run(soak_app(db), host="127.0.0.1", port=port, log_level="warning")


# ---------------------------------------------------------------- the clients


def _user(text: str, id: str) -> dict[str, Any]:
    return {"id": id, "role": "user", "content": text}


class Traffic:
    """The five kinds of traffic, each one request sequence against the server at `url`."""

    def __init__(self, client: Any, url: str, rng: random.Random) -> None:
        self.client = client
        self.url = url
        self.rng = rng
        self.counts: dict[str, int] = {}
        self.failures: list[str] = []

    def _thread(self) -> str:
        return f"t{self.rng.randrange(10**12)}"

    async def _events(self, method: str, path: str, body: Any = None,
                      stop_after: int | None = None) -> list[Any]:
        events: list[Any] = []
        async with self.client.stream(method, self.url + path, json=body) as response:
            if response.status_code == 204:
                return events
            if response.status_code != 200:
                raise RuntimeError(f"{path}: {response.status_code} {await response.aread()!r}")
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    text = line[5:].strip()
                    events.append(text if text == "[DONE]" else json.loads(text))
                    if stop_after is not None and len(events) >= stop_after:
                        break
        return events

    async def ag_ui(self) -> None:
        thread = self._thread()
        for n in range(2):  # a first message, then the next one on the same thread
            events = await self._events("POST", "/agents/todo/ag-ui", {
                "threadId": thread, "runId": f"r{n}", "state": {}, "protocolVersion": "1.0",
                "messages": [_user("add two", f"u{n}")]})
            _expect(events[-1]["type"] == "RUN_FINISHED", events[-1])

    async def ai_sdk(self) -> None:
        events = await self._events("POST", "/agents/todo/ai-sdk", {
            "id": self._thread(), "trigger": "submit-message",
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text",
                                                                 "text": "add two"}]}]})
        _expect(events[-1] == "[DONE]", events[-3:])

    async def approval(self) -> None:
        thread = self._thread()
        body = {"threadId": thread, "runId": "r1", "state": {}, "protocolVersion": "1.0",
                "messages": [_user("ship it", "u1")]}
        events = await self._events("POST", "/agents/gate/ag-ui", body)
        (asked,) = events[-1]["outcome"]["interrupts"]
        resume = {**body, "runId": "r2", "resume": [{"interruptId": asked["id"],
                                                     "status": "resolved",
                                                     "payload": {"approved": True}}]}
        events = await self._events("POST", "/agents/gate/ag-ui", resume)
        _expect(events[-1]["outcome"]["type"] == "success", events[-1])

    async def disconnect(self) -> None:
        await self._events("POST", "/agents/todo/ag-ui", {
            "threadId": self._thread(), "runId": "r1", "state": {}, "protocolVersion": "1.0",
            "messages": [_user("add two", "u1")]}, stop_after=3)

    async def resume(self) -> None:
        chat = self._thread()
        await self._events("POST", "/agents/todo/ai-sdk", {
            "id": chat, "trigger": "submit-message",
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text",
                                                                 "text": "add two"}]}]},
            stop_after=3)
        events = await self._events("GET", f"/agents/todo/ai-sdk/{chat}/stream")
        _expect(not events or events[-1] == "[DONE]", events[-3:])

    async def one(self) -> None:
        kinds: list[Callable[[], Awaitable[None]]] = [
            self.ag_ui, self.ai_sdk, self.approval, self.disconnect, self.resume]
        kind = self.rng.choice(kinds)
        try:
            await kind()
        except Exception as exc:  # counted, and shown at the end
            self.failures.append(f"{kind.__name__}: {type(exc).__name__}: {exc}"[:300])
        self.counts[kind.__name__] = self.counts.get(kind.__name__, 0) + 1


def _expect(holds: bool, what: Any) -> None:
    if not holds:
        raise AssertionError(f"unexpected end: {what!r}"[:300])


async def _quiet_stats(client: Any, url: str) -> dict[str, float]:
    """Stats once traffic has stopped and detached runs ended: tasks and open fds the same for
    6 s, longer than uvicorn's keep-alive timeout (5 s), so the idle connections of the paused
    clients have been closed and are not counted as the server's."""
    last: dict[str, float] = {}
    stable = 0
    for _ in range(40):
        await asyncio.sleep(1)
        now = (await client.get(url + "/soak/stats")).json()
        same = last and now["tasks"] == last["tasks"] and now["fds"] == last["fds"]
        stable = stable + 1 if same else 0
        last = now
        if stable >= 6:
            break
    return last


async def drive(url: str, minutes: float, interval: float, clients: int) -> bool:
    import httpx

    limits = httpx.Limits(max_connections=clients + 10, max_keepalive_connections=clients + 10)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        traffic = Traffic(client, url, random.Random(22))
        go, idle = asyncio.Event(), asyncio.Event()
        go.set()
        busy = 0
        end = time.monotonic() + minutes * 60

        async def worker() -> None:
            nonlocal busy
            while time.monotonic() < end:
                await go.wait()
                busy += 1
                try:
                    await traffic.one()
                finally:
                    busy -= 1
                    if not busy and not go.is_set():
                        idle.set()

        async def pause() -> dict[str, float]:
            go.clear()
            if busy:
                await idle.wait()
            quiet = await _quiet_stats(client, url)
            go.set()
            return quiet

        print(f"{'min':>6} {'rss MB':>8} {'fds':>5} {'tasks':>6} {'threads':>8} {'requests':>9}")
        start = time.monotonic()
        workers = [asyncio.create_task(worker()) for _ in range(clients)]
        early: dict[str, float] = {}
        while time.monotonic() < end:
            await asyncio.sleep(min(interval, max(0.0, end - time.monotonic())))
            if not early and time.monotonic() - start >= minutes * 60 / 6:
                early = await pause()
                _row("quiet", early, sum(traffic.counts.values()))
                continue
            stats = (await client.get(url + "/soak/stats")).json()
            _row(f"{(time.monotonic() - start) / 60:.1f}", stats, sum(traffic.counts.values()))
        await asyncio.gather(*workers)
        final = await _quiet_stats(client, url)
        _row("quiet", final, sum(traffic.counts.values()))
    return _verdict(early, final, traffic)


def _row(when: str, stats: dict[str, float], requests: int) -> None:
    print(f"{when:>6} {stats['rss_mb']:8.1f} {stats['fds']:5.0f} {stats['tasks']:6.0f} "
          f"{stats['threads']:8.0f} {requests:9d}", flush=True)


def _verdict(early: dict[str, float], final: dict[str, float], traffic: Traffic) -> bool:
    print("traffic:", ", ".join(f"{k} {v}" for k, v in sorted(traffic.counts.items())))
    growth = final["rss_mb"] / early["rss_mb"] - 1
    checks = {
        f"memory at the end within 10% of after the first sixth ({growth:+.1%})":
            abs(growth) <= 0.10,
        f"open fds {early['fds']:.0f} -> {final['fds']:.0f}": final["fds"] <= early["fds"] + 2,
        f"asyncio tasks {early['tasks']:.0f} -> {final['tasks']:.0f}":
            final["tasks"] <= early["tasks"] + 2,
        f"threads {early['threads']:.0f} -> {final['threads']:.0f}":
            final["threads"] <= early["threads"] + 2,
        f"failed requests: {len(traffic.failures)}": not traffic.failures,
    }
    for failure in traffic.failures[:10]:
        print("  failure:", failure)
    for check, held in checks.items():
        print(("ok   " if held else "FAIL ") + check)
    return all(checks.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--interval", type=float, default=60.0, help="seconds between samples")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.db)
        return
    with tempfile.TemporaryDirectory(prefix="pyox-soak-") as folder:
        port = _free_port()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT), os.environ.get("PYTHONPATH", "")])}
        server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--db",
                                   str(Path(folder) / "soak.db")], env=env)
        try:
            _wait_for(f"http://127.0.0.1:{port}/healthz", server)
            print(f"soak: {args.minutes:g} min, {args.clients} clients, a sample every "
                  f"{args.interval:g} s, server pid {server.pid}", flush=True)
            held = asyncio.run(drive(f"http://127.0.0.1:{port}", args.minutes, args.interval,
                                     args.clients))
        finally:
            server.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.wait(timeout=30)
            if server.poll() is None:
                server.kill()
    sys.exit(0 if held else 1)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(url: str, server: subprocess.Popen[bytes]) -> None:
    import httpx

    deadline = time.monotonic() + 30
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1).status_code == 200:
                return
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the soak server did not start (exit {server.poll()})")
        time.sleep(0.1)


if __name__ == "__main__":
    main()
