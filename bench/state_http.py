"""A large shared state, end to end over HTTP: taking it in, and a step that changes one item.

Two uvicorn servers, each pinned to CPU 0 (this client on CPU 1), one at a time:

- `ours`: `create_app` with no store (its GC tuned, as `pyox-agents serve` does); the agent's
  model answers at once, or (for the steps)
  asks `--steps` times for a tool that ticks the middle todo, one call a step, then answers;
- `floor`: a bare Starlette endpoint that parses the body with `json.loads` and streams one
  `STATE_SNAPSHOT` of the state back (what any server that takes a state in must do at least).

Two workloads, each a state `{"todos": [{"id", "text", "done"} x N]}` in an AG-UI request:

1. intake: the server's CPU per request (the scheduler's counter over `--repeat` requests),
   ours against the floor's, at 10,000 and 100,000 todos (goal: at most 1.5x);
2. a step that ticks one todo: ours, per step, (CPU of a run of `--steps` steps - CPU of a run
   of none) / steps, at 1,000 and 100,000 todos (goal: at 100,000 at most 1.5x what it costs
   at 1,000: nothing in a step walks the whole state);
3. the same step late in a long run: per step over `--long` steps against over `--steps`, at
   1,000 todos (goal: at most 1.5x: nothing in a step walks the whole run; what is left is the
   model's, which is handed the whole conversation each step).

Run:
    .venv/bin/python bench/state_http.py [--repeat 10] [--steps 400] [--long 3000] [--no-write]
"""

import argparse
import asyncio
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Server, instrument, pin_self, spread, table, write_section

# ---------------------------------------------------------------- server side


def ours_app() -> Any:
    """pyox-agents' server: `BENCH_STEPS` steps, each ticking the middle todo, then "ok"."""
    from pyox_agents import Agent, RunContext, ToolCall, tool
    from pyox_agents.models import FunctionModel
    from pyox_agents.server import ServerLimits, create_app

    steps = int(os.environ.get("BENCH_STEPS", "0"))

    @tool
    def tick(ctx: RunContext, index: int) -> str:
        """Tick todo `index`."""
        ctx.state["todos"][index]["done"] = not ctx.state["todos"][index]["done"]
        return "ok"

    def model(messages: list[Any], tools: Any) -> Any:
        # the one user message, then a call and its result a step: no walk of a long run
        last_user = next(i for i, m in enumerate(messages) if m.role == "user")
        done = (len(messages) - last_user - 1) // 2
        if done < steps:
            return ToolCall("tick", {"index": int(str(messages[last_user].content))})
        return "ok"

    agent = Agent(FunctionModel(model), tools=[tick], name="bench")
    return instrument(create_app({"bench": agent}, max_body=100_000_000, tune_gc=True,
                                 limits=ServerLimits(state_bytes=None)))


def floor_app() -> Any:
    """Parse the body with `json.loads`; stream one snapshot of its state back."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    async def run(request: Request) -> StreamingResponse:
        body = json.loads(await request.body())

        async def frames() -> Any:
            yield (f'data: {{"type":"RUN_STARTED","threadId":"{body["threadId"]}",'
                   f'"runId":"{body["runId"]}"}}\n\n')
            yield ('data: ' + json.dumps({"type": "STATE_SNAPSHOT", "snapshot": body["state"]},
                                         separators=(",", ":")) + "\n\n")
            yield (f'data: {{"type":"RUN_FINISHED","threadId":"{body["threadId"]}",'
                   f'"runId":"{body["runId"]}"}}\n\n')

        return StreamingResponse(frames(), media_type="text/event-stream")

    return instrument(Starlette(routes=[Route("/agents/bench/ag-ui", run, methods=["POST"])]))


# ---------------------------------------------------------------- client side


def body(todos: int, key: str) -> bytes:
    state = {"todos": [{"id": i, "text": f"todo number {i}", "done": False}
                       for i in range(todos)]}
    return json.dumps({"threadId": f"t-{key}", "runId": f"r-{key}", "state": state,
                       "messages": [{"id": f"m-{key}", "role": "user",
                                     "content": str(todos // 2)}],
                       "tools": [], "context": [], "forwardedProps": {}}).encode()


async def post(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**26)
    writer.write(f"POST /agents/bench/ag-ui HTTP/1.1\r\nHost: b\r\nContent-Type: "
                 f"application/json\r\nContent-Length: {len(data)}\r\nConnection: close"
                 "\r\n\r\n".encode() + data)
    raw = await reader.read()
    writer.close()
    if b" 200 " not in raw.split(b"\r\n", 1)[0] or b"RUN_FINISHED" not in raw:
        raise RuntimeError(f"the run failed: {raw[:300]!r} ... {raw[-300:]!r}")
    return raw


def cpu_ms_per_request(server: Server, todos: int, repeat: int) -> list[float]:
    """The server's CPU ms of each of `repeat` requests carrying `todos` todos."""
    out = []
    for index in range(repeat + 1):
        data = body(todos, f"{todos}-{index}")
        before = server.cpu_seconds()
        asyncio.run(post(server.port, data))
        if index:  # the first warms up
            out.append((server.cpu_seconds() - before) * 1000)
    return out


def step_ms(todos: int, steps: int) -> float:
    """Ours: the server CPU ms of a step, (a run of `steps` steps - a run of none) / `steps`."""
    runs = {}
    for count in (0, steps):
        with Server("state_http:ours_app", 8752, env={"BENCH_STEPS": str(count)}) as server:
            runs[count] = statistics.median(cpu_ms_per_request(server, todos, 3))
    return (runs[steps] - runs[0]) / steps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--long", type=int, default=3000, help="steps of the long run")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    pin_self(1)
    rows: list[list[str]] = []
    intake: dict[tuple[str, int], list[float]] = {}
    for name in ("ours", "floor"):
        with Server(f"state_http:{name}_app", 8751) as server:
            for todos in (10_000, 100_000):
                intake[name, todos] = cpu_ms_per_request(server, todos, args.repeat)
    for todos in (10_000, 100_000):
        ours, floor = intake["ours", todos], intake["floor", todos]
        ratio = statistics.median(ours) / statistics.median(floor)
        rows.append([f"intake of {todos:,} todos, server CPU ms per request",
                     f"{statistics.median(ours):.1f} ({spread(ours)})",
                     f"{statistics.median(floor):.1f} ({spread(floor)})",
                     f"{ratio:.2f}x", "met" if ratio <= 1.5 else "NOT met"])
    short, big = step_ms(1_000, args.steps), step_ms(100_000, args.steps)
    ratio = big / short
    rows.append(["a step ticking one todo, server CPU ms per step (ours at 100,000 / at 1,000)",
                 f"{big:.3f}", f"{short:.3f}", f"{ratio:.2f}x",
                 "met" if ratio <= 1.5 else "NOT met"])
    late = step_ms(1_000, args.long)
    ratio = late / short
    rows.append([f"the same at 1,000 todos, server CPU ms per step (ours over {args.long:,} steps "
                 f"/ over {args.steps:,})", f"{late:.3f}", f"{short:.3f}", f"{ratio:.2f}x",
                 "met" if ratio <= 1.5 else "NOT met"])
    text = table(["workload", "ours", "baseline", "ratio", "goal (1.5x)"], rows)
    text += (f"\n\nIntake: the floor is a bare Starlette endpoint (`json.loads`, one snapshot "
             f"streamed back), medians of {args.repeat} requests (spread). Steps: one run of "
             f"{args.steps} steps minus one of none, at each size. "
             "`python bench/state_http.py`")
    print(text)
    if not args.no_write:
        write_section("State over HTTP", text)


if __name__ == "__main__":
    main()
