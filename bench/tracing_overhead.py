"""What tracing costs: CPU per run with tracing off, against the same runs on the code from
before tracing existed (the baseline), measured in the same run; and with tracing on, for scale.

The workload is the concurrency bench's run (`common._ours_agent`: the model calls
`add_item(text=...)`, which appends to the shared state, then streams 50 text deltas), in
bursts of 100 concurrent runs in one process, without HTTP (tracing lives in the runtime, the
server adds the same cost either way). Each measurement is a fresh process pinned to one CPU:
20 warm-up runs, then `--bursts` bursts; its CPU seconds (user+sys) / runs. The targets take
turns, `--rounds` times, and the medians are compared.

    baseline  pyox_agents from `--baseline-rev` (git archive of the commit before tracing)
    off       this checkout, tracing not enabled (the default)
    on        this checkout, `pyox_agents.tracing.enable(TracerProvider())` (the SDK's provider,
              no exporter: the cost of making the spans)

Run: .venv/bin/python bench/tracing_overhead.py [--rounds 7] [--bursts 5]
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
BASELINE_REV = "560586c"  # the last commit before tracing
BURST = 100


async def _measure(bursts: int) -> float:
    sys.path.insert(0, str(BENCH))
    from common import _ours_agent

    agent = _ours_agent()
    for i in range(20):
        await agent.arun(f"warm {i}", state={"items": []})
    start = time.process_time()
    for b in range(bursts):
        await asyncio.gather(*(agent.arun(f"run {b}-{i}", state={"items": []})
                               for i in range(BURST)))
    return (time.process_time() - start) / (bursts * BURST)


def worker(mode: str, bursts: int) -> None:
    """One measurement, in this process: print CPU ms per run."""
    import pyox_agents

    if mode == "on":
        from opentelemetry.sdk.trace import TracerProvider

        import pyox_agents.tracing

        pyox_agents.tracing.enable(TracerProvider())
    print(f"{pyox_agents.__file__}\t{asyncio.run(_measure(bursts)) * 1000:.4f}")


def _baseline(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "pyox_agents"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _run(mode: str, path: Path, bursts: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(path)}
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", mode,
               "--bursts", str(bursts)]
    if hasattr(os, "sched_setaffinity"):
        command = ["taskset", "-c", "0", *command]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True,
                          cwd=tempfile.gettempdir())
    where, ms = done.stdout.strip().split("\t")
    assert where.startswith(str(path)), f"{mode} ran {where}, not the code in {path}"
    return float(ms)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", choices=["baseline", "off", "on"])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--bursts", type=int, default=5)
    parser.add_argument("--baseline-rev", default=BASELINE_REV)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.bursts)
        return
    with tempfile.TemporaryDirectory() as tmp:
        targets = {"baseline": _baseline(args.baseline_rev, Path(tmp)), "off": ROOT, "on": ROOT}
        times: dict[str, list[float]] = {name: [] for name in targets}
        for _ in range(args.rounds):
            for name, path in targets.items():
                times[name].append(_run(name, path, args.bursts))
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = medians["baseline"]
    print(f"CPU per run, median of {args.rounds} processes x {args.bursts * BURST} runs "
          f"(bursts of {BURST}):")
    for name, value in medians.items():
        spread = f"{min(times[name]):.3f}-{max(times[name]):.3f}"
        print(f"  {name:8} {value:.3f} ms  (range {spread})  {value / base:.3f}x baseline")


if __name__ == "__main__":
    main()
