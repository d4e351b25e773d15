"""Bursts of 100, 500 and 1,000 concurrent runs against one uvicorn process on one core.

Each run: the model calls `add_item(text=<the user's message>)`, which appends to the shared
state `{"items": []}`, then streams 50 text deltas. The server (uvicorn, asyncio + h11, one
worker) is pinned to CPU 0 and this script, the load generator, to CPU 1. A fresh server per
measurement (so its peak RSS, VmHWM, covers only that burst), 3 sequential warm-up runs, then C
runs released together from one event, spread over httpx AsyncClients of 25 runs each (30
connections: one big pool makes httpcore the bottleneck, see encode/httpcore#1035).

Per burst: server CPU seconds per run (psutil user+sys delta / C), TTFE p50/p99 (time from the
release to the first SSE event of each run), wall time, the server's peak RSS, errors (HTTP,
transport, a stream not ending in RUN_FINISHED) and wrong final states (the state rebuilt from
the stream's STATE_SNAPSHOT/STATE_DELTA events must be exactly `{"items": [<my text>]}`), the
longest event-loop pause (max lateness of a 10 ms sleep in a ticker task in the server) and the
time the server spent in the cyclic GC. Targets, with the floor measured in the same run:
server CPU per run ≤ 1.3x the floor's (issue 21; it was 2x), flat from C=100 to 1,000, no
loop pause over 100 ms.

Ours and the floor get at least `--repeat` bursts per size, and more for small sizes so that each
covers `--min-runs` runs (10 bursts of 100); pydantic-ai gets `--pai-repeat`. Every run is
cancelled 240 s after its burst starts. Run:
    .venv/bin/python bench/concurrency.py [--quick] [--repeat N] [--min-runs N]
                                          [--targets ours,pai,floor]
"""

import argparse
import asyncio
import os
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    AG_UI_PATH,
    Background,
    RunResult,
    Server,
    median,
    pin_self,
    read_run,
    run_input,
    spread,
    table,
    write_section,
)

FACTORIES = {"ours": "ours_app", "fast": "ours_app", "pai": "pai_app", "floor": "floor_app",
             "floorfast": "floor_app"}
LABELS = {"ours": "ours (AG-UI)", "fast": "ours, uvloop + httptools",
          "pai": "pydantic-ai AGUIAdapter", "floor": "floor",
          "floorfast": "floor, uvloop + httptools"}
STACKS = {"fast": ("uvloop", "httptools"), "floorfast": ("uvloop", "httptools")}
"""uvicorn (--loop, --http) per target; the others use BENCH_LOOP/BENCH_HTTP (asyncio, h11)."""
PER_CLIENT = 25
TARGET = 1.3
"""Server CPU per run of ours at most this many times the floor's, at every C."""
BURST_TIMEOUT = 240.0


@dataclass
class Burst:
    target: str
    c: int
    wall: float
    cpu_per_run_ms: float
    ttfe_p50: float
    ttfe_p99: float
    rss_idle: float
    rss_peak: float
    errors: int
    wrong_states: int
    max_pause_ms: float
    gc_s: float
    gc_max_ms: float
    client_cpu: float
    first_error: str
    background: float


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def burst(server: Server, c: int) -> tuple[list[RunResult], list[str], float]:
    """C runs released together; returns their results, their texts and the wall time."""
    clients = [
        httpx.AsyncClient(timeout=BURST_TIMEOUT, limits=httpx.Limits(
            max_connections=PER_CLIENT + 5, max_keepalive_connections=PER_CLIENT + 5))
        for _ in range((c + PER_CLIENT - 1) // PER_CLIENT)
    ]
    texts = [f"item-{i}-{uuid.uuid4().hex[:6]}" for i in range(c)]
    go = asyncio.Event()
    started = 0.0

    async def one(i: int) -> RunResult:
        key = uuid.uuid4().hex
        body = run_input(f"t-{key}", f"r-{key}", texts[i])
        await go.wait()
        try:
            async with asyncio.timeout(BURST_TIMEOUT):
                return await read_run(clients[i // PER_CLIENT], server.url + AG_UI_PATH, body,
                                      started)
        except TimeoutError:
            return RunResult(error=f"cancelled after {BURST_TIMEOUT:.0f} s")

    tasks = [asyncio.create_task(one(i)) for i in range(c)]
    await asyncio.sleep(0.05)  # every task is waiting at the barrier
    started = time.perf_counter()
    go.set()
    results = await asyncio.gather(*tasks)
    wall = time.perf_counter() - started
    for client in clients:
        await client.aclose()
    return results, texts, wall


async def warm_up(server: Server) -> None:
    async with httpx.AsyncClient(timeout=60) as client:
        for i in range(3):
            key = uuid.uuid4().hex
            result = await read_run(client, server.url + AG_UI_PATH,
                                    run_input(key, key, f"warm-{i}"), time.perf_counter())
            if not result.ok:
                raise RuntimeError(f"warm-up run failed on {server.factory}: {result.error}")
        await client.post(server.url + "/_bench/reset")


def measure(target: str, c: int, port: int, env: dict[str, str]) -> Burst:
    server_ = Server(FACTORIES[target], port, env=env)
    if target in STACKS:
        server_.loop, server_.http = STACKS[target]
    with server_ as server:
        asyncio.run(warm_up(server))
        rss_idle, _ = server.memory()
        cpu = server.cpu_seconds()
        client_cpu = time.process_time()
        with Background([server]) as background:
            results, texts, wall = asyncio.run(burst(server, c))
        client_cpu = time.process_time() - client_cpu
        cpu = server.cpu_seconds() - cpu
        _, rss_peak = server.memory()
        stats = httpx.get(server.url + "/_bench/stats").json()
    errors = [r for r in results if not r.ok]
    wrong = [r for r, text in zip(results, texts, strict=True)
             if r.ok and r.state != {"items": [text]}]
    ttfe = [r.ttfe for r in results if r.ok]
    first_error = errors[0].error if errors else (repr(wrong[0].state) if wrong else "")
    return Burst(target, c, wall, cpu / c * 1000, percentile(ttfe, 0.5), percentile(ttfe, 0.99),
                 rss_idle, rss_peak, len(errors), len(wrong), stats["max_late_ms"],
                 sum(stats["gc_s"]), stats["gc_max_ms"], client_cpu, first_error, background.share)


def report(bursts: list[Burst], command: str, env_note: str) -> str:
    groups: dict[tuple[str, int], list[Burst]] = {}
    for b in bursts:
        groups.setdefault((b.target, b.c), []).append(b)
    cs = sorted({b.c for b in bursts})
    targets = [t for t in FACTORIES if any(b.target == t for b in bursts)]

    def med(target: str, c: int, attr: str) -> float:
        return median([getattr(b, attr) for b in groups.get((target, c), [])])

    rows = []
    for c in cs:
        for t in targets:
            group = groups.get((t, c))
            if not group:
                continue
            cpu = [b.cpu_per_run_ms for b in group]
            floor_cpu = med("floor", c, "cpu_per_run_ms")
            rows.append([
                LABELS[t], c, len(group), f"{median(cpu):.2f}", spread(cpu),
                f"{median(cpu) / floor_cpu:.1f}x" if floor_cpu == floor_cpu else "-",
                f"{med(t, c, 'ttfe_p50'):.2f} / {med(t, c, 'ttfe_p99'):.2f}",
                f"{med(t, c, 'wall'):.2f}",
                f"{med(t, c, 'rss_peak'):.0f} ({med(t, c, 'rss_idle'):.0f})",
                f"{med(t, c, 'max_pause_ms'):.0f} (max {max(b.max_pause_ms for b in group):.0f})",
                f"{med(t, c, 'gc_s'):.2f} / {med(t, c, 'gc_max_ms'):.0f}",
                f"{med(t, c, 'client_cpu'):.1f}",
                sum(b.errors for b in group), sum(b.wrong_states for b in group),
            ])
    header = ["server", "C", "bursts", "server CPU ms/run", "spread", "vs floor",
              "TTFE p50 / p99 s", "wall s", "peak RSS MiB (idle)", "max loop lateness ms",
              "GC s / longest GC pause ms", "client CPU s", "errors", "wrong states"]
    lines = [table(header, rows), ""]
    if "ours" in targets and "floor" in targets:
        ratios = {c: med("ours", c, "cpu_per_run_ms") / med("floor", c, "cpu_per_run_ms")
                  for c in cs}
        flat = med("ours", cs[-1], "cpu_per_run_ms") / med("ours", cs[0], "cpu_per_run_ms")
        pause = max(b.max_pause_ms for b in bursts if b.target == "ours")
        gc_pause = max(b.gc_max_ms for b in bursts if b.target == "ours")
        bad = sum(b.errors + b.wrong_states for b in bursts if b.target == "ours")
        lines.append(
            f"Targets (ours): CPU/run ≤ {TARGET}x floor: "
            + ", ".join(f"C={c} {r:.1f}x" for c, r in ratios.items())
            + f" ({'met' if all(r <= TARGET for r in ratios.values()) else 'NOT met'}); "
            f"flat from C={cs[0]} to {cs[-1]}: {flat:.2f}x "
            f"({'met' if flat <= 1.15 else 'NOT met'}, ≤ 1.15x counted as flat); "
            f"max loop lateness {pause:.0f} ms ({'met' if pause <= 100 else 'NOT met'}; the "
            f"floor's: {max(b.max_pause_ms for b in bursts if b.target == 'floor'):.0f} ms), "
            f"longest GC pause {gc_pause:.0f} ms ({'met' if gc_pause <= 100 else 'NOT met'}); "
            f"errors + wrong states {bad} ({'met' if bad == 0 else 'NOT met'})."
        )
    if "pai" in targets and "ours" in targets:
        lines.append("pai / ours server CPU per run: " + ", ".join(
            f"C={c} {med('pai', c, 'cpu_per_run_ms') / med('ours', c, 'cpu_per_run_ms'):.1f}x"
            for c in cs if groups.get(("pai", c))) + ".")
    if "fast" in targets and "ours" in targets:
        lines.append("uvloop + httptools vs asyncio + h11, server CPU per run (ours): " + ", ".join(
            f"C={c} {med('fast', c, 'cpu_per_run_ms') / med('ours', c, 'cpu_per_run_ms'):.2f}x"
            for c in cs) + "; TTFE p99: " + ", ".join(
            f"C={c} {med('fast', c, 'ttfe_p99') / med('ours', c, 'ttfe_p99'):.2f}x"
            for c in cs) + " (below 1: the uvloop + httptools stack is cheaper/faster).")
    if "fast" in targets and "floorfast" in targets:
        like = {c: med("fast", c, "cpu_per_run_ms") / med("floorfast", c, "cpu_per_run_ms")
                for c in cs}
        lines.append("Like with like, ours on uvloop + httptools / the floor on them, server CPU "
                     "per run: " + ", ".join(f"C={c} {r:.2f}x" for c, r in like.items()) + ".")
    if "floorfast" in targets and "floor" in targets:
        lines.append("The same for the floor, server CPU per run: " + ", ".join(
            f"C={c} "
            f"{med('floorfast', c, 'cpu_per_run_ms') / med('floor', c, 'cpu_per_run_ms'):.2f}x"
            for c in cs) + ".")
    lines.append(
        "\nServer on CPU 0 (taskset), load generator on CPU 1, 127.0.0.1; a fresh server per "
        "burst, 3 warm-up runs first; clients of 25 runs each. Figures are medians over the "
        "bursts; spread = (max-min)/2 as % of the median. Server CPU per run is the figure to "
        "compare (scheduler ns counter, /proc/PID/task/*/schedstat): the floor's wall time and "
        "TTFE are bounded by the client (its client CPU ≈ wall). Max loop lateness: the "
        "longest lateness of a 10 ms asyncio.sleep in a ticker task of the server; in a burst "
        "it also counts the burst's own queue (every request's first step lands in the same "
        "loop iterations), which is why the floor shows it too: the GC pause (gc.callbacks, "
        "one collection) is the part that is a single stop of the loop. Other processes used "
        f"{median([b.background for b in bursts]):.0%} of the machine during the bursts "
        "(median); load average at the end {:.1f} (1 min) on {} cores.".format(
            os.getloadavg()[0], os.cpu_count()) + env_note)
    lines.append(f"\nCommand: `{command}`")
    firsts = [f"{b.target} C={b.c}: {b.first_error}" for b in bursts if b.first_error]
    if firsts:
        lines.append("\nFirst error per failing burst: " + "; ".join(firsts[:6]))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,500,1000", help="concurrent runs per burst")
    parser.add_argument("--targets", default="ours,pai,floor", help="of ours, fast (ours on "
                        "uvloop + httptools), pai, floor, floorfast (the floor on uvloop + "
                        "httptools)")
    parser.add_argument("--repeat", type=int, default=3, help="bursts per (target, C) for ours "
                        "and the floor, at least")
    parser.add_argument("--min-runs", type=int, default=1000, help="more bursts for small C, "
                        "so that each (target, C) of ours and the floor covers this many runs "
                        "(a burst of 100 lasts 0.2 s: one is noisy)")
    parser.add_argument("--pai-repeat", type=int, default=3, help="bursts per C for pydantic-ai "
                        "(20-40 ms of CPU per run: a burst of 1,000 takes about 40 s)")
    parser.add_argument("--quick", action="store_true", help="C=100 and 500, one burst each")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the servers, "
                        "e.g. BENCH_GC_FREEZE=1 or BENCH_GC_THRESHOLD=700,10,100000")
    parser.add_argument("--section", default="concurrency", help="the section of results.md "
                        "to write (e.g. `uvloop and httptools` for --targets ours,fast,floor)")
    parser.add_argument("--no-write", action="store_true", help="print only, leave results.md")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.repeat, args.pai_repeat, args.min_runs = "100,500", 1, 1, 0
    sizes = [int(s) for s in args.sizes.split(",")]
    targets = args.targets.split(",")
    env = {"BENCH_BEFORE": "0", "BENCH_AFTER": "50"}
    env.update(dict(item.split("=", 1) for item in args.env))
    pin_self(1)
    bursts: list[Burst] = []
    port = 18830
    deadline = time.monotonic() + 540
    def bursts_of(target: str, c: int) -> int:
        if target == "pai":
            return args.pai_repeat
        return max(args.repeat, -(-args.min_runs // c))

    rounds = max(bursts_of(t, c) for t in targets for c in sizes)
    for round_ in range(rounds):
        for c in sizes:  # interleaved: each round goes over every (C, target)
            for target in targets:
                repeat = bursts_of(target, c)
                if round_ >= repeat:
                    continue
                if time.monotonic() > deadline:
                    print(f"skipped {target} C={c} round {round_ + 1}: over the time budget")
                    continue
                port += 1
                b = measure(target, c, port, env)
                bursts.append(b)
                print(f"{target:>5} C={c:<5} cpu/run {b.cpu_per_run_ms:6.2f} ms  wall "
                      f"{b.wall:6.2f} s  ttfe p50/p99 {b.ttfe_p50:.2f}/{b.ttfe_p99:.2f}  pause "
                      f"{b.max_pause_ms:5.0f} ms  gc {b.gc_s:.2f} s  rss {b.rss_peak:.0f}  "
                      f"err {b.errors} wrong {b.wrong_states}", flush=True)
    extra = {k: v for k, v in env.items() if k not in ("BENCH_BEFORE", "BENCH_AFTER")}
    env_note = f" Server environment: {extra}." if extra else ""
    command = ".venv/bin/python bench/concurrency.py " + " ".join(sys.argv[1:])
    text = report(bursts, command.strip(), env_note)
    print(text)
    if not args.no_write:
        write_section(args.section, text)


if __name__ == "__main__":
    main()
