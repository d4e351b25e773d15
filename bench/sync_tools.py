"""Sync tools that block, over HTTP: 100 concurrent runs, each calling one tool that blocks 5 ms.

A sync tool runs in a worker thread. A tool that does real work blocks there (a database query,
a file read): `time.sleep(0.005)` stands for it. The concurrency bench's tool does nothing, so
it cannot see calls queueing behind each other; this one can.

One uvicorn server (asyncio + h11, one worker, pinned to CPU 0) serves two agents on the same
model (a `FunctionModel`, scripted: a call of `query`, then a short answer):

- `sync`: `query` is a sync tool that sleeps 5 ms (the runtime runs it in a worker thread);
- `direct`, the baseline: `query` is an async tool that awaits
  `anyio.to_thread.run_sync(time.sleep, 0.005)` itself.

The two differ only in how the blocking call reaches a thread. Each burst releases C runs
together (C=100), one on each of C connections opened beforehand (a client by hand: httpx
would cost more CPU per stream than the server), and times each run from its release to the
end of its stream; the figures are the median and the worst run of a burst, then their
medians over the bursts, with the ratio sync / direct. A second workload: one run whose model
calls `query` 8 times at once, 8 ms each (parallel calls take one call's time, not eight).
Run:
    .venv/bin/python bench/sync_tools.py [--runs 100] [--bursts 5] [--block-ms 5]
"""

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Server, pin_self, run_input

# ---------------------------------------------------------------- server side


def app() -> Any:
    """Our server with the two agents: `sync` (a sync tool) and `direct` (the baseline)."""
    import anyio.to_thread

    from pyox_agents import Agent, tool
    from pyox_agents.models import FunctionModel, ToolCall
    from pyox_agents.server import create_app
    from pyox_agents.service import ServerLimits

    block = float(os.environ.get("BENCH_BLOCK_MS", "5")) / 1000
    parallel = int(os.environ.get("BENCH_PARALLEL", "1"))

    @tool(name="query")
    def sync_query(n: int) -> str:
        """Look something up in the database (blocks, as a query does)."""
        time.sleep(block)
        return f"row {n}"

    @tool(name="query")
    async def direct_query(n: int) -> str:
        """Look something up in the database, in a worker thread of anyio's."""
        await anyio.to_thread.run_sync(time.sleep, block)
        return f"row {n}"

    def reply(messages: list[Any], tools: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "done"
        return [ToolCall("query", {"n": i}) for i in range(parallel)]

    agents = {name: Agent(FunctionModel(reply), tools=[query], name=name)
              for name, query in (("sync", sync_query), ("direct", direct_query))}
    ours = create_app(agents, limits=ServerLimits(runs_total=None, runs_per_principal=None))

    async def probed(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/_bench/stats":  # the launcher's probe
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"{}"})
            return
        await ours(scope, receive, send)

    return probed


# ---------------------------------------------------------------- client side


class Connection:
    """One kept-alive HTTP/1.1 connection, by hand: a client that costs next to nothing per
    run, so the server's queueing, not the client, sets the times (httpx takes more CPU per
    stream than the server does)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> "Connection":
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    async def run(self, path: str) -> None:
        """POST a run and read its stream to the end (chunked: the zero-size chunk)."""
        body = json.dumps(run_input(uuid.uuid4().hex, uuid.uuid4().hex, "look it up")).encode()
        self.writer.write(f"POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: "
                          f"application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                          + body)
        received = b""
        while not received.endswith(b"\r\n0\r\n\r\n"):
            chunk = await self.reader.read(65536)
            if not chunk:
                raise RuntimeError("the server closed the connection")
            received += chunk
        if b"RUN_FINISHED" not in received:
            raise RuntimeError(f"a run did not finish: {received[-300:]!r}")

    def close(self) -> None:
        self.writer.close()


async def burst(connections: list[Connection], path: str) -> list[float]:
    """Release a run on each connection together; each one's seconds from the release to its
    stream's end."""
    go = asyncio.Event()

    async def one(connection: Connection) -> float:
        await go.wait()
        started = time.perf_counter()
        await connection.run(path)
        return time.perf_counter() - started

    tasks = [asyncio.create_task(one(connection)) for connection in connections]
    await asyncio.sleep(0.1)  # every task waits at the release
    go.set()
    return list(await asyncio.gather(*tasks))


async def bursts(port: int, runs: int, count: int) -> dict[str, list[tuple[float, float]]]:
    """(median, worst) ms of each burst, per agent, the agents' bursts interleaved."""
    seen: dict[str, list[tuple[float, float]]] = {"sync": [], "direct": []}
    connections = [await Connection.open(port) for _ in range(runs)]
    try:
        for name in seen:  # warm-up: threads started, modules imported
            await burst(connections, f"/agents/{name}/ag-ui")
        for _ in range(count):
            for name in seen:
                times = await burst(connections, f"/agents/{name}/ag-ui")
                seen[name].append((statistics.median(times) * 1000, max(times) * 1000))
    finally:
        for connection in connections:
            connection.close()
    return seen


def measure(port: int, runs: int, count: int, block_ms: float, parallel: int
            ) -> dict[str, tuple[float, float]]:
    """(median run, worst run) in ms per agent, medians over `count` bursts."""
    env = {"BENCH_BLOCK_MS": str(block_ms), "BENCH_PARALLEL": str(parallel)}
    with Server("sync_tools:app", port, env=env):
        seen = asyncio.run(bursts(port, runs, count))
    return {name: (statistics.median(m for m, _ in got), statistics.median(w for _, w in got))
            for name, got in seen.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="concurrent runs per burst")
    parser.add_argument("--bursts", type=int, default=5, help="bursts per target")
    parser.add_argument("--block-ms", type=float, default=5.0, help="how long the tool blocks")
    parser.add_argument("--port", type=int, default=8771)
    args = parser.parse_args()
    pin_self(1)
    rows = [
        (f"{args.runs} runs, one {args.block_ms:g} ms sync tool each",
         measure(args.port, args.runs, args.bursts, args.block_ms, 1)),
        ("1 run, 8 parallel sync tools of 8 ms", measure(args.port, 1, args.bursts * 4, 8.0, 8)),
    ]
    for label, figures in rows:
        (ours_median, ours_worst), (base_median, base_worst) = figures["sync"], figures["direct"]
        print(f"{label}: sync tool median {ours_median:.1f} ms, worst {ours_worst:.1f} ms; "
              f"async tool awaiting anyio.to_thread.run_sync median {base_median:.1f} ms, "
              f"worst {base_worst:.1f} ms; sync/direct {ours_median / base_median:.2f}x "
              f"median, {ours_worst / base_worst:.2f}x worst")
    print(json.dumps({"command": " ".join(sys.argv)}))


if __name__ == "__main__":
    main()
