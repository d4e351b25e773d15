"""The realistic concurrency bench: C runs at once, each as a real agent behaves.

Each run: the model's first reply asks for two tools at once, a sync tool that blocks 5 ms (a
database query, `time.sleep`) and an async tool that awaits 20 ms; both change the shared
state; the model's second reply streams 100 tokens 10 ms apart. The ideal run takes the sum of
its waits (20 ms for the parallel tools, 1 s for the tokens). The server (uvicorn, one worker,
asyncio + h11) is pinned to CPU 0, this load generator to CPU 1, as in bench/concurrency.py.

- ours: `create_app` on that agent (`BENCH_MODEL=realistic`), no store.
- floor: a bare Starlette endpoint that writes our stream's frames (encoded once at start-up)
  doing the same waits: the tools' block (in a worker thread) and await before the tool
  results, a 10 ms sleep before each text delta.
- pai (optional): pydantic-ai's AGUIAdapter with the same model, tools and waits.

Per target and C: run latency p50 / p99 (each run's time from its request to its last frame)
against the ideal, server CPU per run (psutil user+sys over the burst / C) against the floor's,
errors and wrong states. Goals (issue "one straight path"): p99 within 1.3x of the ideal, or
where the floor itself cannot keep the pace, within 1.15x the floor's p99; CPU per run within
1.5x the floor's. Run:
    .venv/bin/python bench/realistic.py [--sizes 100,300] [--repeat 2] [--targets ours,floor]
"""

import argparse
import asyncio
import concurrent.futures
import json
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    AG_UI_PATH,
    PLACEHOLDER_RUN,
    PLACEHOLDER_TEXT,
    PLACEHOLDER_THREAD,
    REALISTIC_AWAIT,
    REALISTIC_BLOCK,
    RunResult,
    Server,
    instrument,
    median,
    our_frames,
    pin_self,
    read_run,
    run_input,
    spread,
    table,
)

TARGETS = {"ours": "ours_app", "floor": "realistic:floor_app"}
LABELS = {"ours": "ours (AG-UI)", "floor": "floor: bare Starlette, same waits"}
TOKENS, PACE = 100, 0.010
IDEAL = TOKENS * PACE + max(REALISTIC_BLOCK, REALISTIC_AWAIT)
ENV = {"BENCH_MODEL": "realistic", "BENCH_TOKENS": str(TOKENS),
       "BENCH_PACE_MS": str(PACE * 1000)}
TIMEOUT = 300.0


def floor_app() -> Any:
    """Our frames for one run, written by a bare Starlette endpoint with the same waits."""
    import anyio.to_thread
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # uvicorn calls us in its loop
        frames = pool.submit(asyncio.run, our_frames()).result()
    marks = (PLACEHOLDER_TEXT.encode(), PLACEHOLDER_THREAD.encode(), PLACEHOLDER_RUN.encode())
    patched = {i for i, frame in enumerate(frames) if any(m in frame for m in marks)}
    first_result = next(i for i, f in enumerate(frames) if b'"TOOL_CALL_RESULT"' in f)

    async def tools() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.to_thread.run_sync, time.sleep, REALISTIC_BLOCK)
            group.start_soon(anyio.sleep, REALISTIC_AWAIT)

    async def run(request: Request) -> StreamingResponse:
        body = json.loads(await request.body())
        values = (json.dumps(body["messages"][-1]["content"])[1:-1].encode(),
                  body["threadId"].encode(), body["runId"].encode())

        async def send() -> AsyncIterator[bytes]:
            for index, frame in enumerate(frames):
                if index == first_result:
                    await tools()
                elif b'"TEXT_MESSAGE_CONTENT"' in frame:
                    await asyncio.sleep(PACE)
                if index in patched:
                    for mark, value in zip(marks, values, strict=True):
                        frame = frame.replace(mark, value)
                yield frame

        return StreamingResponse(send(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    return instrument(Starlette(routes=[Route(AG_UI_PATH, run, methods=["POST"])]))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


async def burst(server: Server, c: int) -> tuple[list[RunResult], list[str]]:
    """C runs released together, 25 to an httpx client."""
    per = 25
    clients = [httpx.AsyncClient(timeout=TIMEOUT, limits=httpx.Limits(
        max_connections=per + 5, max_keepalive_connections=per + 5))
        for _ in range((c + per - 1) // per)]
    texts = [f"item-{i}-{uuid.uuid4().hex[:6]}" for i in range(c)]
    go = asyncio.Event()

    async def one(i: int) -> RunResult:
        key = uuid.uuid4().hex
        await go.wait()
        began = time.perf_counter()
        return await read_run(clients[i // per], server.url + AG_UI_PATH,
                              run_input(f"t-{key}", f"r-{key}", texts[i]), began)

    tasks = [asyncio.create_task(one(i)) for i in range(c)]
    await asyncio.sleep(0.05)
    go.set()
    results = list(await asyncio.gather(*tasks))
    for client in clients:
        await client.aclose()
    return results, texts


def measure(target: str, c: int, port: int) -> dict[str, Any]:
    with Server(TARGETS[target], port, env=ENV) as server:
        asyncio.run(burst(server, 3))  # warm-up
        cpu = server.cpu_seconds()
        results, texts = asyncio.run(burst(server, c))
        cpu = server.cpu_seconds() - cpu
    ok = [r for r in results if r.ok]
    wrong = [r for r, text in zip(results, texts, strict=True)
             if r.ok and r.state != {"items": [text], "reserved": text}]
    totals = [r.total for r in ok]
    return {"target": target, "c": c, "cpu_ms": cpu / c * 1000,
            "p50": percentile(totals, 0.5), "p99": percentile(totals, 0.99),
            "errors": len(results) - len(ok), "wrong": len(wrong),
            "first_error": next((r.error for r in results if not r.ok), "")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,300")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--targets", default="ours,floor")
    args = parser.parse_args()
    pin_self(1)
    os.environ.update(ENV)
    port = 18_200
    rows, results = [], []
    for c in [int(s) for s in args.sizes.split(",")]:
        for _ in range(args.repeat):
            for target in args.targets.split(","):
                port += 1
                results.append(measure(target, c, port))
    for c in sorted({r["c"] for r in results}):
        floor = [r for r in results if r["c"] == c and r["target"] == "floor"]
        floor_cpu = median([r["cpu_ms"] for r in floor]) if floor else float("nan")
        floor_p99 = median([r["p99"] for r in floor]) if floor else float("nan")
        for target in args.targets.split(","):
            group = [r for r in results if r["c"] == c and r["target"] == target]
            cpu = [r["cpu_ms"] for r in group]
            p50, p99 = median([r["p50"] for r in group]), median([r["p99"] for r in group])
            rows.append([LABELS[target], c, len(group), f"{median(cpu):.2f}", spread(cpu),
                         f"{median(cpu) / floor_cpu:.2f}x", f"{p50:.3f} / {p99:.3f}",
                         f"{p99 / IDEAL:.2f}x", f"{p99 / floor_p99:.2f}x",
                         sum(r["errors"] for r in group), sum(r["wrong"] for r in group)])
    print(table(["server", "C", "bursts", "server CPU ms/run", "spread", "vs floor",
                 "run p50 / p99 s", "p99 vs ideal", "p99 vs floor's", "errors",
                 "wrong states"], rows))
    print(f"ideal run: {IDEAL:.3f} s (100 tokens 10 ms apart, two tools at once: 5 ms "
          "blocked, 20 ms awaited)")
    errors = [r["first_error"] for r in results if r["first_error"]]
    if errors:
        print("first error:", errors[0])


if __name__ == "__main__":
    main()
