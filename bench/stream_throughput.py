"""Events per second of one long run over real HTTP: ours (AG-UI, AI SDK) vs pydantic-ai vs floor.

The run: the model streams 2,000 text deltas, then calls `add_item`, which appends the user's
text to the shared state; after the tool result it streams 1 more delta. Each server is a
uvicorn process (asyncio loop, h11) on 127.0.0.1 pinned to CPU 0; this script, the httpx client,
is pinned to CPU 1. Targets, measured in the same run, runs interleaved round-robin:

- ours AG-UI: `POST /agents/bench/ag-ui` of `pyox_agents.server.create_app`
- ours AI SDK: `POST /agents/bench/ai-sdk` of the same server
- pydantic-ai: `AGUIAdapter.dispatch_request` with a `FunctionModel` streaming the same deltas
  (the tool returns a `StateSnapshotEvent` in `ToolReturn.metadata`)
- floor: a bare Starlette `StreamingResponse` yielding our AG-UI frames, encoded at start-up

Per run: events/s = SSE data frames / (last byte - request sent), and the server's CPU time
(psutil, user+sys) per event. Medians over `--runs` runs after `--warmup` runs that are not
recorded; the spread is (max-min)/2 over the median. Every run's final state is checked.

Run: .venv/bin/python bench/stream_throughput.py [--quick] [--runs N]
"""

import argparse
import asyncio
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    AG_UI_PATH,
    AI_SDK_PATH,
    Background,
    Server,
    ai_sdk_body,
    median,
    pin_self,
    read_run,
    run_input,
    spread,
    table,
    write_section,
)

DELTAS = 2_000
PORTS = {"ours": 18811, "pai": 18812, "floor": 18813}


@dataclass
class Target:
    label: str
    server: str
    path: str
    samples: list[tuple[float, float, int]] = field(default_factory=list)
    """(events/s, server CPU µs per event, events) of each recorded run."""
    errors: list[str] = field(default_factory=list)


TARGETS = [
    Target("(a) ours, AG-UI", "ours", AG_UI_PATH),
    Target("(b) ours, AI SDK", "ours", AI_SDK_PATH),
    Target("(c) pydantic-ai AGUIAdapter", "pai", AG_UI_PATH),
    Target("(d) floor: bare Starlette, pre-encoded", "floor", AG_UI_PATH),
]


async def one_run(client: httpx.AsyncClient, server: Server, target: Target, record: bool) -> None:
    text = f"item-{uuid.uuid4().hex[:8]}"
    key = uuid.uuid4().hex
    body = ai_sdk_body(key, text) if target.path == AI_SDK_PATH else run_input(key, key, text)
    cpu = server.cpu_seconds()
    result = await read_run(client, server.url + target.path, body, time.perf_counter())
    cpu = server.cpu_seconds() - cpu
    if not result.ok or result.state != {"items": [text]}:
        target.errors.append(result.error or f"final state {result.state!r}")
        return
    if record:
        target.samples.append((result.events / result.total, cpu / result.events * 1e6,
                               result.events))


async def measure(servers: dict[str, Server], runs: int, warmup: int) -> None:
    async with httpx.AsyncClient(timeout=120) as client:
        for round_ in range(warmup + runs):
            for target in TARGETS:
                await one_run(client, servers[target.server], target, record=round_ >= warmup)


def report(runs: int, warmup: int, command: str, background: float) -> str:
    floor = next(t for t in TARGETS if t.server == "floor")
    pai = next(t for t in TARGETS if t.server == "pai")
    ours = TARGETS[0]

    def eps(target: Target) -> float:
        return median([s[0] for s in target.samples])

    def cpe(target: Target) -> float:
        return median([s[1] for s in target.samples])

    rows = []
    for t in TARGETS:
        rate = [s[0] for s in t.samples]
        cpu = [s[1] for s in t.samples]
        rows.append([
            t.label, t.samples[0][2] if t.samples else "-", f"{median(rate):,.0f}",
            spread(rate), f"{eps(t) / eps(pai):.2f}x", f"{eps(t) / eps(floor):.2f}x",
            f"{median(cpu):.1f}", spread(cpu), f"{cpe(pai) / cpe(t):.2f}x",
            f"{cpe(floor) / cpe(t):.2f}x", len(t.errors),
        ])
    header = ["target", "events/run", "events/s (median)", "spread", "events/s vs (c)",
              "events/s vs (d)", "server CPU µs/event", "spread", "CPU efficiency vs (c)",
              "CPU efficiency vs (d)", "errors"]
    a_vs_c = eps(ours) / eps(pai)
    a_vs_d = eps(ours) / eps(floor)
    verdict = (f"Targets: (a) ≥ 3x (c): {a_vs_c:.2f}x, {'met' if a_vs_c >= 3 else 'NOT met'}; "
               f"(a) ≥ 0.5x (d): {a_vs_d:.2f}x, {'met' if a_vs_d >= 0.5 else 'NOT met'}.")
    notes = (
        f"One run = {DELTAS:,} text deltas, a state-changing tool call, 1 more delta. "
        f"Median of {runs} runs per target after {warmup} warm-up runs, targets interleaved; "
        "spread = (max-min)/2 as % of the median. Server on CPU 0, client on CPU 1, "
        "127.0.0.1, uvicorn asyncio + h11. Server CPU from the scheduler's ns counter "
        "(/proc/PID/task/*/schedstat); CPU efficiency = other's CPU per event / this one's "
        "(above 1: cheaper). Events/s depends on the client too (the floor's rate is "
        "near the Python client's limit); CPU per event is the steadier figure when other "
        f"processes share the cores (here they used {background:.0%} of the machine).\n\n"
        f"{verdict}\n\nCommand: `{command}`"
    )
    for t in TARGETS:
        if t.errors:
            notes += f"\n\n{t.label} errors (first 3): {t.errors[:3]}"
    return table(header, rows) + "\n\n" + notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="recorded runs per target")
    parser.add_argument("--warmup", type=int, default=3, help="runs per target not recorded")
    parser.add_argument("--quick", action="store_true", help="5 runs, 1 warm-up")
    parser.add_argument("--no-write", action="store_true", help="print only, leave results.md")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.warmup = 5, 1
    pin_self(1)
    env = {"BENCH_BEFORE": str(DELTAS), "BENCH_AFTER": "1"}
    with (Server("ours_app", PORTS["ours"], env=env) as ours,
          Server("pai_app", PORTS["pai"], env=env) as pai,
          Server("floor_app", PORTS["floor"], env=env) as floor,
          Background([ours, pai, floor]) as background):
        asyncio.run(measure({"ours": ours, "pai": pai, "floor": floor}, args.runs, args.warmup))
    command = ".venv/bin/python bench/stream_throughput.py" + (" --quick" if args.quick else "")
    text = report(args.runs, args.warmup, command, background.share)
    print(text)
    if not args.no_write:
        write_section("stream throughput", text)


if __name__ == "__main__":
    main()
