"""Instructions per run of the concurrency bench's run, counted by valgrind (callgrind): a figure
that does not move with the machine's load, to compare two checkouts of pyox_agents.

Each measurement is a fresh process, under callgrind, that builds `common:ours_app` (with
`tune_gc()`), makes 3 warm-up runs, then N concurrent runs through the ASGI app in-process (no
sockets: the HTTP server is left out, it is the same for every checkout). Instructions per run =
(count with N runs - count with 0 runs) / N, so start-up and imports cancel out. Repeats give
the same count to within 0.1%.

`--per-token`: instructions per token of the paced streams' run instead (bench/paced_streams.py:
a model streaming text deltas, an `asyncio.sleep(0)` before each, so that every token is its own
batch and wake-up, as on a 20 ms pace), for each LIBRARY and for the floor (the bare Starlette
endpoint of the paced bench) in the same way: (count with 300 tokens - count with 100) / (N x
200), through the ASGI app in-process, so the ratio leaves out the HTTP server, which costs both
the same per token (the real bench's ratio is therefore lower). This count moves by about 1%
between runs, more under load: the app's 10 ms ticker fires once per 10 ms of wall time.
`--pace 20` (with `--runs 1000`): real 20 ms sleeps, 20 against 60 tokens a run, so that each
token's timer goes into a heap of as many open streams as the paced bench's (what the timers
of open runs cost shows only so; ~4 minutes per count). Run:
    .venv/bin/python bench/run_instructions.py [--runs 200] [--after 50] [--history 0] LIBRARY ...
    .venv/bin/python bench/run_instructions.py --per-token [--runs 20] LIBRARY [LIBRARY ...]
    .venv/bin/python bench/run_instructions.py --per-token --pace 20 --runs 1000 LIBRARY ...
(`--history N`: N earlier messages in every request, as a CopilotKit client sends the whole
conversation) where each LIBRARY is a directory holding a `pyox_agents` package (a checkout, a
worktree, or `git archive <commit> pyox_agents | tar -x -C <dir>`); the first is the baseline.
"""

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent


async def _one(app: Any, text: str) -> None:
    from common import AG_UI_PATH, run_input, with_history

    key = uuid.uuid4().hex
    body = json.dumps(with_history(run_input(f"t-{key}", f"r-{key}", text),
                                   int(os.environ.get("BENCH_HISTORY", "0")))).encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": AG_UI_PATH,
             "raw_path": AG_UI_PATH.encode(), "query_string": b"", "root_path": "",
             "headers": [(b"host", b"bench"), (b"content-type", b"application/json"),
                         (b"content-length", str(len(body)).encode())],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}
    done = asyncio.Event()
    sent = False
    out: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        out.append(message.get("body", b""))
        if message["type"] == "http.response.body" and not message.get("more_body"):
            done.set()

    await app(scope, receive, send)
    if b"RUN_FINISHED" not in b"".join(out):
        raise RuntimeError(f"a run did not finish: {b''.join(out)[-300:]!r}")


async def _runs(count: int, target: str) -> None:
    import common

    if target == "floor":
        import paced_streams

        app = paced_streams.floor_app()
    else:
        from pyox_agents.server import tune_gc

        app = common.ours_app()
        tune_gc()
    for i in range(3):
        await _one(app, f"warm-{i}")
    await asyncio.gather(*(_one(app, f"item-{i}") for i in range(count)))


def instructions(library: str, runs: int, after: int, *, tokens: int | None = None,
                 target: str = "ours", pace_ms: float = 0) -> int:
    """Instructions callgrind counts for a process making `runs` runs on `library` (with
    `tokens`: paced runs of that many tokens `pace_ms` apart, of `target`, ours or the
    floor)."""
    env = {**os.environ, "PYTHONPATH": f"{library}{os.pathsep}{BENCH_DIR}",
           "BENCH_BEFORE": "0", "BENCH_AFTER": str(after)}
    if tokens is not None:
        env |= {"BENCH_MODEL": "paced", "BENCH_TOKENS": str(tokens),
                "BENCH_PACE_MS": f"{pace_ms:g}"}
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           sys.executable, __file__, "--child", str(runs), target],
                          env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no count from callgrind: {done.stderr[-500:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("libraries", nargs="*", help="directories holding pyox_agents")
    parser.add_argument("--runs", type=int, default=200, help="concurrent runs to count")
    parser.add_argument("--after", type=int, default=50, help="text deltas after the tool call")
    parser.add_argument("--per-token", action="store_true",
                        help="instructions per token of paced streams, beside the floor's")
    parser.add_argument("--pace", type=float, default=0,
                        help="with --per-token: ms between tokens (real sleeps; default 0)")
    parser.add_argument("--history", type=int, default=0,
                        help="earlier messages in every request (a CopilotKit client's)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        asyncio.run(_runs(int(args.child[0]), args.child[1]))
        return
    os.environ["BENCH_HISTORY"] = str(args.history)  # read by the counted processes
    if args.per_token:
        per_token(args.libraries, args.runs if args.runs != 200 else 20, args.pace)
        return
    base = None
    for library in args.libraries:
        per_run = (instructions(library, args.runs, args.after)
                   - instructions(library, 0, args.after)) / args.runs
        base = base or per_run
        print(f"{library}: {per_run / 1e6:.3f} M instructions per run ({per_run / base:.3f}x "
              f"the first)", flush=True)


def per_token(libraries: list[str], runs: int, pace_ms: float = 0) -> None:
    """Print instructions per token of the paced run for the floor and each library: 100
    against 300 tokens a run, or with a real pace (timers that wait in the loop's heap, under
    callgrind's slowdown), 20 against 60."""
    few_tokens, many_tokens = (100, 300) if not pace_ms else (20, 60)

    def count(library: str, target: str) -> float:
        few = instructions(library, runs, 0, tokens=few_tokens, target=target, pace_ms=pace_ms)
        many = instructions(library, runs, 0, tokens=many_tokens, target=target,
                            pace_ms=pace_ms)
        return (many - few) / (runs * (many_tokens - few_tokens))

    floor = count(libraries[0], "floor")
    print(f"floor (bare Starlette): {floor / 1e3:.1f} k instructions per token", flush=True)
    for library in libraries:
        ours = count(library, "ours")
        print(f"{library}: {ours / 1e3:.1f} k instructions per token ({ours / floor:.2f}x the "
              "floor's, the HTTP server left out)", flush=True)


if __name__ == "__main__":
    main()
