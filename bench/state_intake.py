"""Taking in an AG-UI request's state: parse + check + freeze, against `json.loads` of that state.

Every AG-UI request carries the whole shared state. Before a run starts, the server reads the
body (`read_input`: orjson parses it; the body apart from its state is checked by levels for
depth and for floats orjson may have made of integers past 64 bits; orjson writes its text of
the state, and the state is frozen in bulk, a list of dicts 1,024 at a time, the dicts of
scalars told apart by the collector's tracking, each run of parsed dicts dropped once copied;
then pydantic's `RunAgentInput`), measures the state against
`ServerLimits.state_bytes` (`check_limits`: a bound from that same orjson text; `json.dumps`
only when the bound passes the limit) and hands it to the run (`SharedState(state)`: already
frozen, taken as it is; with an agent's `max_state_bytes`, it starts from such a bound too).
Anything orjson refuses, or that nests near a limit, goes the checked way (`json.loads`, the
depth check, the lone-surrogate check, `freeze`), which names the path of what is wrong: those
steps are timed too, as "checked path".

The state is `{"todos": [{"id", "text", "done"} x N]}` in a body with one user message (and, on
the last lines, todos that also hold a `tags` list, frozen a column per key before the copy,
the guess checked against orjson's text); the baseline is `json.loads` of the state's own JSON
text, timed in the same loop, interleaved with each step.
Times are the process's CPU time (other processes on a shared machine do not count in it; the
ratios are what is compared), medians of `--repeat` rounds with their spread (min-max around the
median), GC disabled while timing.

Run: .venv/bin/python bench/state_intake.py [--sizes 1000,10000,100000] [--repeat 15]
"""

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import median, spread, table, write_section

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from pyox_agents.adapters._body import _BODY_DEPTH, _read_checked, _read_fast  # noqa: E402
from pyox_agents.adapters.ag_ui._request import read_input, request_from_input  # noqa: E402
from pyox_agents.service._limits import ServerLimits, check_limits  # noqa: E402
from pyox_agents.state._depth import deeper_than  # noqa: E402
from pyox_agents.state._parsed import fits_parsed, freeze_parsed  # noqa: E402
from pyox_agents.state._size_bound import _known, json_size_over  # noqa: E402
from pyox_agents.state.frozen import freeze  # noqa: E402
from pyox_agents.state.shared import SharedState  # noqa: E402


def state_of(n: int, tags: bool = False) -> dict[str, Any]:
    todos: list[dict[str, Any]] = [
        {"id": f"t{i}", "text": f"todo number {i}", "done": i % 3 == 0} for i in range(n)]
    if tags:
        for i, todo in enumerate(todos):
            todo["tags"] = ["home"] if i % 2 else ["work", "urgent"]
    return {"todos": todos}


def body_of(state: dict[str, Any]) -> bytes:
    return json.dumps({"threadId": "t", "runId": "r", "state": state, "tools": [],
                       "context": [], "forwardedProps": {},
                       "messages": [{"id": "m1", "role": "user", "content": "hi"}]}).encode()


def timed(step: Callable[[], Any]) -> float:
    """The CPU time of `step`, with dropping what it made: its result, and the state whose
    size bound the intake keeps for the size check (kept until the next request's without a
    state_bytes limit)."""
    gc.disable()
    try:
        start = time.process_time()
        step()
        _known.clear()
        return time.process_time() - start
    finally:
        gc.enable()


def intake(body: bytes, limits: ServerLimits) -> Any:
    """What the server does with a request's state before a run starts."""
    request = request_from_input(read_input(body))
    check_limits(limits, request, running=0, running_for_principal=0)
    return SharedState(request.state).value


def checked_intake(body: bytes, limits: ServerLimits) -> Any:
    """The same by the checked path alone (what every request took before orjson)."""
    data = _read_checked(body, "a RunAgentInput")
    if limits.state_bytes is not None:
        json_size_over(data["state"], limits.state_bytes)  # a plain value: json.dumps
    return SharedState(data["state"]).value


def measure(n: int, repeat: int) -> dict[str, list[float]]:
    state = state_of(n)
    text = json.dumps(state)
    body = body_of(state)
    tagged = state_of(n, tags=True)
    tagged_text = json.dumps(tagged)
    tagged_body = body_of(tagged)
    parsed = orjson.loads(body)
    rest = {key: value for key, value in parsed.items() if key != "state"}
    limits = ServerLimits(state_bytes=None, runs_total=None, runs_per_principal=None)
    limited = ServerLimits(state_bytes=10**9, runs_total=None, runs_per_principal=None)
    plain = json.loads(body)
    frozen = read_input(body).state
    steps: dict[str, Callable[[], Any]] = {
        "json.loads(state)": lambda: json.loads(text),
        "orjson.loads(body)": lambda: orjson.loads(body),
        "body check by levels (state apart)": lambda: fits_parsed(rest, _BODY_DEPTH),
        "freeze_parsed(state) (with orjson's text)": lambda: freeze_parsed(
            orjson.loads(text), 64),
        "orjson.loads(state) alone": lambda: orjson.loads(text),
        "state_bytes bound (orjson text)": lambda: json_size_over(frozen, 10**9),
        "SharedState(state, max_bytes) (an agent's max_state_bytes)": lambda: SharedState(
            frozen, max_bytes=10**9),
        "read_input (all of the above, pydantic)": lambda: read_input(body),
        "intake, no state_bytes limit": lambda: intake(body, limits),
        "intake, with state_bytes limit": lambda: intake(body, limited),
        "checked path: json.loads(body) + depth check": lambda: deeper_than(
            json.loads(body), _BODY_DEPTH),
        "checked path: freeze": lambda: freeze(plain["state"], "state"),
        "checked path: whole intake, with limit": lambda: checked_intake(body, limited),
        "json.loads(state with tags)": lambda: json.loads(tagged_text),
        "intake with tags, with limit": lambda: intake(tagged_body, limited),
        "_read_fast alone, with tags": lambda: _read_fast(tagged_body, "state"),
    }
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(repeat):
        for name, step in steps.items():  # interleaved: a round times every step once
            times[name].append(timed(step))
    return times


TAGGED = ("json.loads(state with tags)", "intake with tags, with limit",
          "_read_fast alone, with tags")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()
    rows = []
    totals = []
    for n in [int(s) for s in args.sizes.split(",")]:
        times = measure(n, args.repeat)
        base = median(times["json.loads(state)"])
        tag_base = median(times["json.loads(state with tags)"])
        for name, values in times.items():
            against = tag_base if name in TAGGED else base
            rows.append([f"{n:,}", name, f"{median(values) * 1000:.3f}", spread(values),
                         f"{median(values) / against:.2f}x"])
        totals.append((n, median(times["intake, with state_bytes limit"]) / base,
                       median(times["intake, no state_bytes limit"]) / base,
                       median(times["checked path: whole intake, with limit"]) / base,
                       median(times["intake with tags, with limit"]) / tag_base,
                       min(times["intake, with state_bytes limit"])
                       / min(times["json.loads(state)"])))
        print(f"{n:,} todos done", flush=True)
    text = "\n".join([
        table(["todos", "step", "CPU ms (median)", "spread", "vs json.loads(state)"], rows), "",
        "(the steps \"with tags\" are against `json.loads` of the state with tags)", "",
        "Goal: parse + check + freeze ≤ 1.5x json.loads of the state: " + ", ".join(
            f"{n:,}: {with_limit:.2f}x ({without:.2f}x without the state_bytes check; the checked "
            f"path {checked:.2f}x; todos with tags {tagged:.2f}x; fastest round against fastest "
            f"round {fastest:.2f}x)"
            for n, with_limit, without, checked, tagged, fastest in totals)
        + f" ({'met' if all(t[1] <= 1.5 for t in totals) else 'NOT met'}).",
        "",
        f"Medians of {args.repeat} rounds, steps interleaved, CPU time of this process, GC off "
        f"while timing; load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min) "
        f"on {os.cpu_count()} cores when it started.",
        "",
        "Command: `.venv/bin/python bench/state_intake.py " + " ".join(sys.argv[1:]) + "`",
    ])
    print(text)
    if not args.no_write:
        write_section("state intake", text)


if __name__ == "__main__":
    main()
