"""Taking in an AG-UI request's state: parse + check + freeze, against `json.loads` of that state.

Every AG-UI request carries the whole shared state. Before a run starts, the server parses the
body (`read_input`: `json.loads`, the depth check, the lone-surrogate check, pydantic's
`RunAgentInput`), measures the state's size against `ServerLimits.state_bytes` (`check_limits`:
`json.dumps`) and freezes it (`SharedState(state)`: `freeze`, plus `json_size` when the agent has
a size limit). `freeze` copies a plain dict or list (what json.loads gives) with dict's and
list's own code and walks it once, leaving str/int/bool/None items as they are. The state here
is `{"todos": [{"id", "text", "done"} x N]}` in a body with one user message; the baseline is
`json.loads` of the state's own JSON text, timed in the same loop, interleaved with each step.
Medians of `--repeat` rounds (GC disabled while timing, as the steps are compared, not the
collector).

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
from common import median, table, write_section

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pyox_agents.adapters._body import _BODY_DEPTH, _may_hold_surrogates  # noqa: E402
from pyox_agents.adapters.ag_ui._request import read_input, request_from_input  # noqa: E402
from pyox_agents.service._limits import ServerLimits, check_limits  # noqa: E402
from pyox_agents.state._depth import deeper_than  # noqa: E402
from pyox_agents.state.frozen import freeze  # noqa: E402
from pyox_agents.state.shared import SharedState, json_size  # noqa: E402


def state_of(n: int) -> dict[str, Any]:
    return {"todos": [{"id": f"t{i}", "text": f"todo number {i}", "done": i % 3 == 0}
                      for i in range(n)]}


def body_of(state: dict[str, Any]) -> bytes:
    return json.dumps({"threadId": "t", "runId": "r", "state": state, "tools": [],
                       "context": [], "forwardedProps": {},
                       "messages": [{"id": "m1", "role": "user", "content": "hi"}]}).encode()


def timed(step: Callable[[], Any]) -> float:
    gc.disable()
    try:
        start = time.perf_counter()
        step()
        return time.perf_counter() - start
    finally:
        gc.enable()


def intake(body: bytes, limits: ServerLimits) -> Any:
    """What the server does with a request's state before a run starts."""
    request = request_from_input(read_input(body))
    check_limits(limits, request, running=0, running_for_principal=0)
    return SharedState(request.state).value


def measure(n: int, repeat: int) -> dict[str, list[float]]:
    state = state_of(n)
    text = json.dumps(state)
    body = body_of(state)
    parsed = json.loads(body)
    limits = ServerLimits(state_bytes=None, runs_total=None, runs_per_principal=None)
    limited = ServerLimits(state_bytes=10**9, runs_total=None, runs_per_principal=None)
    validated = read_input(body)
    frozen = freeze(validated.state, "state")
    steps: dict[str, Callable[[], Any]] = {
        "json.loads(state)": lambda: json.loads(text),
        "json.loads(body)": lambda: json.loads(body),
        "depth check": lambda: deeper_than(parsed, _BODY_DEPTH),
        "surrogate scan": lambda: _may_hold_surrogates(body),
        "RunAgentInput.model_validate": lambda: read_input.__globals__["RunAgentInput"]
        .model_validate(parsed),
        "read_input (all of the above)": lambda: read_input(body),
        "state_bytes check (json.dumps)": lambda: json.dumps(validated.state,
                                                             separators=(",", ":")),
        "freeze": lambda: freeze(validated.state, "state"),
        "json_size (an agent's max_state_bytes)": lambda: json_size(frozen),
        "intake, no state_bytes limit": lambda: intake(body, limits),
        "intake, with state_bytes limit": lambda: intake(body, limited),
    }
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(repeat):
        for name, step in steps.items():  # interleaved: a round times every step once
            times[name].append(timed(step))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = []
    totals = []
    for n in [int(s) for s in args.sizes.split(",")]:
        times = measure(n, args.repeat)
        base = median(times["json.loads(state)"])
        for name, values in times.items():
            rows.append([f"{n:,}", name, f"{median(values) * 1000:.3f}",
                         f"{median(values) / base:.2f}x"])
        totals.append((n, median(times["intake, with state_bytes limit"]) / base,
                       median(times["intake, no state_bytes limit"]) / base))
        print(f"{n:,} todos done", flush=True)
    text = "\n".join([
        table(["todos", "step", "ms (median)", "vs json.loads(state)"], rows), "",
        "Goal: parse + check + freeze ≤ 1.5x json.loads of the state: " + ", ".join(
            f"{n:,}: {with_limit:.2f}x ({without:.2f}x without the state_bytes check)"
            for n, with_limit, without in totals)
        + f" ({'met' if all(t[1] <= 1.5 for t in totals) else 'NOT met'}).",
        "",
        f"Medians of {args.repeat} rounds, steps interleaved, GC off while timing; load "
        f"average {load:.1f} on {os.cpu_count()} cores when it started.",
        "",
        "Command: `.venv/bin/python bench/state_intake.py " + " ".join(sys.argv[1:]) + "`",
    ])
    print(text)
    if not args.no_write:
        write_section("state intake", text)


if __name__ == "__main__":
    main()
