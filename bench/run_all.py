"""Run every bench and write bench/results.md: the tables, the commands, the time they took.

The HTTP benches need the `bench` extra: `.venv/bin/pip install -e '.[bench]'`, and
processes.py a `redis-server` on PATH. The whole run takes about 15-30 minutes on 2 cores, most
of it the 10,000 paced streams (`--quick`: about 5 minutes); each bench is bounded
(concurrency.py stops starting bursts after 9 minutes, every burst is cancelled after 240 s).

Run: .venv/bin/python bench/run_all.py [--quick]
"""

import argparse
import datetime
import platform
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results.md"
sys.path.insert(0, str(BENCH))
from common import write_section  # noqa: E402


def run(script: str, *args: str, timeout: float) -> tuple[str, float]:
    """Run `script` with this Python; its stdout (stderr on failure) and its wall time."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True,
                          text=True, timeout=timeout, cwd=BENCH.parent)
    took = time.monotonic() - start
    print(done.stdout, end="", flush=True)
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        raise SystemExit(f"{script} failed with exit code {done.returncode}")
    return done.stdout, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs and sizes (~1 min)")
    args = parser.parse_args()
    quick = ["--quick"] if args.quick else []
    started = time.monotonic()
    header = (
        "# Bench results\n\n"
        f"Written by `.venv/bin/python bench/run_all.py{' --quick' if args.quick else ''}` on "
        f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}, Python "
        f"{platform.python_version()}, {platform.machine()}, "
        f"{len(__import__('os').sched_getaffinity(0))} cores. Each section is replaced when its "
        "bench runs again.\n"
    )
    RESULTS.write_text(header)
    timings = []
    for script, extra in (("state_delta.py", []), ("store_steps.py",
                                                    ["--steps", "50"] if args.quick else []),
                          ("ai_sdk_state.py", quick)):
        out, took = run(script, *extra, timeout=300)
        command = " ".join([".venv/bin/python", f"bench/{script}", *extra])
        write_section(script.removesuffix(".py").replace("_", " "),
                      f"{out.strip()}\n\nCommand: `{command}` ({took:.0f} s)")
        timings.append((script, took))
    # These write their own sections of results.md.
    for script in ("stream_throughput.py", "concurrency.py", "state_intake.py", "processes.py"):
        _, took = run(script, *(["--repeat", "5"] if args.quick and script == "state_intake.py"
                                else quick if script != "state_intake.py" else []),
                      timeout=900)
        timings.append((script, took))
    # 10,000 paced streams take minutes of CPU for us, the floor and pydantic-ai (at 1,000)
    _, took = run("paced_streams.py", *(quick or ["--sizes", "1000,10000", "--rounds", "1"]),
                  timeout=3600)
    timings.append(("paced_streams.py", took))
    total = time.monotonic() - started
    summary = ", ".join(f"{name} {took:.0f} s" for name, took in timings)
    with RESULTS.open("a") as file:
        file.write(f"\nTotal {total:.0f} s ({summary}).\n")
    print(f"\nwrote {RESULTS} in {total:.0f} s ({summary})")


if __name__ == "__main__":
    main()
