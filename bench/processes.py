"""Two uvicorn worker processes against one, sharing a RedisStore; and a run followed from the
other process.

Throughput: bursts of C=500 AG-UI runs (the concurrency bench's run: `add_item` changes the
shared state, then 50 text deltas) against `pyox-agents serve` with one worker and with
`--workers 2` (each worker a listening socket of its own, `SO_REUSEPORT`), and against
`uvicorn --workers 2` (one socket the workers share) beside them; the same app and the same
Redis (a redis-server started here), nothing pinned: the workers, Redis and this load generator
share the machine's 2 cores. All three on uvicorn's `auto` loop and parser (uvloop and
httptools when installed), as `serve` runs by default; `BENCH_LOOP=asyncio BENCH_HTTP=h11`
runs all three on asyncio's loop and h11 instead. Rounds interleave the three; runs per second = C /
the burst's wall time, median over the rounds. The client is a bare asyncio protocol (one
connection per run, `Connection: close`), which only collects the bytes while the burst runs:
every run is checked after the burst (it must end with RUN_FINISHED and the state
`{"items": [<its text>]}`), so that the load generator takes as little of the 2 cores as it
can; its CPU in the burst is printed, and so is each worker's share of the server's CPU.

Follow latency: two single-worker servers A and B on the same Redis. `F` AI SDK runs are started
on A at once (a paced model: `--tokens` deltas `--pace` ms apart); each chat is followed from B
(`GET /agents/bench/ai-sdk/{chat}/stream`, the AI SDK's resume, which follows the run through
the store: XREAD BLOCK). Per token: the time it reached the client from B minus its commit time
(the ms timestamp of its Redis stream id, XADD `*`; same machine clock), for the tokens committed
after B's stream began (the ones before are the catch-up). Goal: p99 under 20 ms.

Round trips: Redis round trips and thread hops per run (`round_trips.py`: MONITOR over 20 runs
one after another; deterministic, where runs/s is noisy), of this library and, with
`--baseline PATH`, of another copy of `pyox_agents` (e.g. `git archive` of an earlier commit).

Run: .venv/bin/python bench/processes.py [--quick] [--rounds N] [--c 500] [--follows 20]
     [--baseline PATH]
"""

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    AG_UI_PATH,
    AI_SDK_PATH,
    Server,
    ai_sdk_body,
    dechunk,
    median,
    process_cpu_seconds,
    run_input,
    spread,
    table,
    write_section,
)

REDIS_PORT = 16391


class Redis:
    """A throwaway redis-server on 127.0.0.1:`port`, no persistence."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.dir = tempfile.mkdtemp(prefix="bench-redis-")

    def __enter__(self) -> "Redis":
        server = shutil.which("redis-server")
        if server is None:
            raise SystemExit("redis-server is not installed (apt-get install redis-server)")
        self.proc = subprocess.Popen([server, "--port", str(self.port), "--save", "",
                                      "--appendonly", "no", "--dir", self.dir],
                                     stdout=subprocess.DEVNULL)
        import redis

        client = redis.Redis(port=self.port)
        for _ in range(100):
            try:
                client.ping()
                return self
            except redis.ConnectionError:
                time.sleep(0.05)
        raise SystemExit("redis-server did not start")

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------- a cheap HTTP client


class _Fetch(asyncio.Protocol):
    """One request written on connect; the response's bytes kept until the server closes."""

    def __init__(self, request: bytes, done: "asyncio.Future[bytes]") -> None:
        self.request, self.done = request, done
        self.parts: list[bytes] = []

    def connection_made(self, transport: Any) -> None:
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.parts.append(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(b"".join(self.parts))


async def lean_post(port: int, path: str, body: dict[str, Any]) -> bytes:
    """POST `body` as JSON with `Connection: close`; the whole raw response, unparsed."""
    payload = json.dumps(body).encode()
    request = (b"POST %s HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
               b"accept: text/event-stream\r\nconnection: close\r\ncontent-length: %d\r\n\r\n"
               % (path.encode(), len(payload)) + payload)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[bytes] = loop.create_future()
    await loop.create_connection(lambda: _Fetch(request, done), "127.0.0.1", port)
    return await done


def parse_response(data: bytes) -> tuple[int, bytes]:
    """(status, body) of a raw HTTP/1.1 response, its chunked body decoded."""
    head, _, rest = data.partition(b"\r\n\r\n")
    if not head:
        return 0, b""
    status = int(head.split(b" ", 2)[1])
    if b"transfer-encoding: chunked" in head.lower():
        rest = dechunk(rest)
    return status, rest


def check_run(status: int, body: bytes, text: str) -> str:
    """'' if the AG-UI stream ended with RUN_FINISHED and state {"items": [text]}, else why."""
    import jsonpatch

    if status != 200:
        return f"status {status}"
    state: Any = None
    last: dict[str, Any] = {}
    for frame in body.split(b"\n\n"):
        if frame.startswith(b"id:"):  # the frame's SSE id, then its data
            frame = frame[frame.find(b"\n") + 1:]
        if not frame.startswith(b"data:"):
            continue
        if b'"STATE_' in frame[:40]:
            event = json.loads(frame[5:])
            state = (event["snapshot"] if event["type"] == "STATE_SNAPSHOT"
                     else jsonpatch.apply_patch(state, event["delta"]))
        last = {"frame": frame}
    if not last or b"RUN_FINISHED" not in last["frame"]:
        return "no RUN_FINISHED"
    if state != {"items": [text]}:
        return f"wrong state {state!r}"
    return ""


# ---------------------------------------------------------------- throughput


async def burst(port: int, c: int) -> tuple[float, float, list[str]]:
    """C runs released together; (wall seconds, this client's CPU seconds in the burst,
    errors). The responses are checked after the burst, outside both figures."""
    texts = [f"item-{i}-{uuid.uuid4().hex[:6]}" for i in range(c)]
    go = asyncio.Event()

    async def one(text: str) -> bytes | str:
        key = uuid.uuid4().hex
        await go.wait()
        try:
            return await lean_post(port, AG_UI_PATH, run_input(f"t-{key}", f"r-{key}", text))
        except OSError as exc:
            return f"{type(exc).__name__}: {exc}"

    tasks = [asyncio.create_task(one(text)) for text in texts]
    await asyncio.sleep(0.05)
    cpu = time.process_time()
    start = time.perf_counter()
    go.set()
    results = await asyncio.gather(*tasks)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    errors = [result if isinstance(result, str) else check_run(*parse_response(result), text)
              for result, text in zip(results, texts, strict=True)]
    return wall, cpu, [error for error in errors if error]


def redis_cpu(redis_server: "Redis") -> float:
    """CPU seconds of the redis-server process so far."""
    import psutil

    times = psutil.Process(redis_server.proc.pid).cpu_times()
    return float(times.user + times.system)


SETUPS = {"serve, 1 worker": (1, True), "serve --workers 2": (2, True),
          "uvicorn --workers 2": (2, False)}
"""The servers each round measures: (worker processes, `pyox-agents serve` or uvicorn's)."""

STACK = {"loop": os.environ.get("BENCH_LOOP", "auto"),
         "http": os.environ.get("BENCH_HTTP", "auto")}
"""uvicorn's loop and HTTP parser for every server here: `auto`, as `serve` runs, by default."""


def throughput_round(setup: str, c: int, port: int, redis_server: "Redis") -> dict[str, Any]:
    workers, serve = SETUPS[setup]
    redis_url = redis_server.url
    env = {"BENCH_BEFORE": "0", "BENCH_AFTER": "50", "BENCH_REDIS": redis_url}
    server = Server("ours_app", port, cpu="0,1", env=env, workers=workers, serve=serve,
                    **STACK)
    with server:
        time.sleep(1.0 * workers)  # every worker imported and listening
        asyncio.run(burst(port, 10 * workers))  # warm-up, every worker
        pids = server.pids()
        before = [process_cpu_seconds(pid) for pid in pids]
        load = os.getloadavg()[0]
        store_cpu = redis_cpu(redis_server)
        wall, client, errors = asyncio.run(burst(port, c))
        used = [process_cpu_seconds(pid) - was for pid, was in zip(pids, before, strict=True)]
        store_cpu = redis_cpu(redis_server) - store_cpu
    shares = used[1:] if workers > 1 else used  # the workers, not the parent that watches them
    return {"setup": setup, "workers": workers, "rps": c / wall, "wall": wall,
            "server_cpu_ms": sum(used) / c * 1000, "client_cpu": client, "errors": errors,
            "load": load, "redis_cpu_ms": store_cpu / c * 1000,
            "busiest_share": max(shares) / sum(shares)}




# ---------------------------------------------------------------- follow latency

TOKEN = re.compile(rb"(f\d+-[0-9a-f]{4})t(\d+) ")


async def follow_latency(a: int, b: int, redis_url: str, follows: int) -> dict[str, Any]:
    """`follows` AI SDK runs on A, each followed from B; latencies of B's tokens, seconds."""
    received: dict[bytes, float] = {}
    started_at: dict[str, float] = {}
    order_ok = True
    async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=4 * follows)) \
            as client:

        async def one(i: int) -> None:
            nonlocal order_ok
            chat = f"c{i}-{uuid.uuid4().hex[:8]}"
            text = f"f{i}-{uuid.uuid4().hex[:4]}"
            async with client.stream("POST", f"http://127.0.0.1:{a}{AI_SDK_PATH}",
                                     json=ai_sdk_body(chat, text)) as origin:
                origin_iter = origin.aiter_raw()
                await anext(origin_iter)  # the run is on
                url = f"http://127.0.0.1:{b}{AI_SDK_PATH}/{chat}/stream"
                async with client.stream("GET", url) as follower:
                    if follower.status_code != 200:
                        raise RuntimeError(f"follow {url}: status {follower.status_code}")
                    seen = -1
                    first = True
                    async for chunk in follower.aiter_raw():
                        now = time.time()
                        if first:
                            started_at[text] = now
                            first = False
                        for match in TOKEN.finditer(chunk):
                            index = int(match.group(2))
                            order_ok &= index == seen + 1
                            seen = index
                            received.setdefault(match.group(0), now)
                async for _ in origin_iter:
                    pass

        await asyncio.gather(*(one(i) for i in range(follows)))
    import redis

    commits: dict[bytes, float] = {}
    store = redis.Redis.from_url(redis_url)
    for key in store.scan_iter("pyox:events:*"):
        for entry_id, fields in store.xrange(key):
            ms = int(entry_id.split(b"-")[0]) / 1000
            for match in TOKEN.finditer(fields.get(b"event", b"")):
                commits.setdefault(match.group(0), ms)
    latencies = []
    for token, at in received.items():
        committed = commits.get(token)
        run = token.split(b"t")[0].decode()
        if committed is not None and committed > started_at.get(run, float("inf")):
            latencies.append(at - committed)
    return {"latencies": sorted(latencies), "tokens": len(received), "order_ok": order_ok,
            "missing": sum(1 for token in commits if token not in received)}


def round_trips(redis_url: str, library: str | None) -> dict[str, Any]:
    """Round trips and thread hops per run of `library` (None: this checkout)."""
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "BENCH_REDIS": redis_url, "PYTHONPATH": library or root}
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("round_trips.py")),
                           "20"], env=env, capture_output=True, text=True, check=True)
    counted: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return counted


def percentile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, round(q * (len(values) - 1)))] if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--c", type=int, default=500, help="runs per burst")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of (1 worker, 2 workers)")
    parser.add_argument("--follows", type=int, default=20, help="runs followed at once")
    parser.add_argument("--tokens", type=int, default=100)
    parser.add_argument("--pace", type=float, default=10.0, help="ms between tokens")
    parser.add_argument("--quick", action="store_true", help="2 rounds, 5 follows")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--baseline", help="a copy of pyox_agents to count round trips of too")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.follows = 2, 5
    port = 18950
    rows: list[dict[str, Any]] = []
    with Redis(REDIS_PORT) as redis_server:
        trips = {"this": round_trips(redis_server.url, None)}
        if args.baseline:
            trips["baseline"] = round_trips(redis_server.url, args.baseline)
        for name, counted in trips.items():
            print(f"{name}: {counted['round_trips']:.1f} round trips/run, "
                  f"{counted['hops']:.1f} thread hops/run {counted['hops_by_function']}, "
                  f"{counted['by_kind']}", flush=True)
        for round_ in range(args.rounds):
            order = list(SETUPS) if round_ % 2 == 0 else list(reversed(SETUPS))
            for setup in order:
                port += 1
                row = throughput_round(setup, args.c, port, redis_server)
                rows.append(row)
                print(f"{setup}: {row['rps']:.0f} runs/s, wall {row['wall']:.2f} s, "
                      f"server CPU {row['server_cpu_ms']:.2f} ms/run, busiest worker "
                      f"{row['busiest_share']:.0%} of it, redis-server "
                      f"{row['redis_cpu_ms']:.2f} ms/run, client CPU "
                      f"{row['client_cpu']:.2f} s, errors {len(row['errors'])}, load "
                      f"{row['load']:.1f}", flush=True)
        env = {"BENCH_MODEL": "paced", "BENCH_TOKENS": str(args.tokens),
               "BENCH_PACE_MS": str(args.pace), "BENCH_REDIS": redis_server.url}
        with Server("ours_app", port + 1, cpu="0,1", env=env, **STACK) as a, \
                Server("ours_app", port + 2, cpu="0,1", env=env, **STACK) as b:
            load = os.getloadavg()[0]
            follow = asyncio.run(follow_latency(a.port, b.port, redis_server.url,
                                                args.follows))
    print(report(rows, follow, args, load, trips))
    if not args.no_write:
        write_section("processes", report(rows, follow, args, load, trips))


def trips_table(trips: dict[str, dict[str, Any]]) -> str:
    """Round trips and thread hops per run, by kind, this library and the baseline."""
    kinds = sorted({kind for counted in trips.values() for kind in counted["by_kind"]})
    names = list(trips)
    rows = [["round trips per run", *(f"{trips[n]['round_trips']:.1f}" for n in names)],
            ["thread hops per run (all)", *(f"{trips[n]['hops']:.1f}" for n in names)]]
    rows += [[f"  {kind}", *(f"{trips[n]['by_kind'].get(kind, 0):.1f}" for n in names)]
             for kind in kinds]
    return table(["per run (20 runs one after another, MONITOR)", *names], rows)


def report(rows: list[dict[str, Any]], follow: dict[str, Any], args: Any, load: float,
           trips: dict[str, dict[str, Any]]) -> str:
    by = {setup: [r for r in rows if r["setup"] == setup] for setup in SETUPS}
    one = median([r["rps"] for r in by["serve, 1 worker"]])
    out = []
    for setup, group in by.items():
        rps = [r["rps"] for r in group]
        out.append([setup, len(group), f"{median(rps):.0f}", spread(rps),
                    f"{median(rps) / one:.2f}x",
                    f"{median([r['server_cpu_ms'] for r in group]):.2f}",
                    " ".join(f"{r['busiest_share']:.0%}" for r in group),
                    f"{median([r['redis_cpu_ms'] for r in group]):.2f}",
                    f"{median([r['client_cpu'] for r in group]):.2f}",
                    f"{median([r['load'] for r in group]):.1f}",
                    sum(len(r["errors"]) for r in group)])
    ratio = median([r["rps"] for r in by["serve --workers 2"]]) / one
    shared = median([r["rps"] for r in by["uvicorn --workers 2"]]) / one
    lat = follow["latencies"]
    ms = [x * 1000 for x in lat]
    lines = [
        table(["server", "bursts", f"runs/s (C={args.c}, median)", "spread", "vs 1 worker",
               "server CPU ms/run (all workers)", "busiest worker's share of it, by burst",
               "redis-server CPU ms/run", "client CPU s/burst",
               "load average (1 min) before", "errors + wrong states"], out),
        "",
        f"Two workers vs one (`pyox-agents serve --workers 2`): {ratio:.2f}x the runs per "
        f"second (goal ≥ 1.7x: {'met' if ratio >= 1.7 else 'NOT met'}); `uvicorn --workers 2`, "
        f"whose workers share one socket: {shared:.2f}x.",
        "",
        trips_table(trips),
        "",
        "Thread hops: `anyio.to_thread.run_sync` calls; the sync tool `add_item` is one per "
        "run by design (a sync tool runs in a worker thread), the rest were store calls. "
        + (f"Baseline: the `pyox_agents` in `{args.baseline}`." if args.baseline else ""),
        "",
        f"Follow from the other process ({args.follows} AI SDK runs at once, {args.tokens} "
        f"tokens {args.pace:g} ms apart, each resumed from process B): {len(lat)} tokens "
        f"committed after the follow began; delivery after commit p50 "
        f"{percentile(ms, 0.5):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, max "
        f"{max(ms, default=float('nan')):.1f} ms (goal p99 < 20 ms: "
        f"{'met' if percentile(ms, 0.99) < 20 else 'NOT met'}); tokens in order: "
        f"{follow['order_ok']}; committed but never delivered: {follow['missing']}. Commit time "
        f"= the ms of the Redis stream id (1 ms resolution); load average {load:.1f}.",
        "",
        "Both servers unpinned; redis-server, the servers and this client share 2 cores, and "
        "other processes ran on the machine too (load average column).",
        "",
        "Command: `" + "".join(f"{k}={os.environ[k]} " for k in ("BENCH_LOOP", "BENCH_HTTP")
                              if k in os.environ)
        + ".venv/bin/python bench/processes.py " + " ".join(sys.argv[1:]) + "`",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
