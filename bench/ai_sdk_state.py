"""Large state, small wire: the AI SDK stream of a run that makes 20 one-item changes to a shared
state of 100,000 todos (about 4.6 MB of JSON), in one step and in 20 steps, for each
`Agent(state_snapshots=...)`: "change" (a whole `data-state` after every change, what every
change cost before patches) is the baseline, measured in the same run, against "step" (the
default) and "finish".

Per run: the SSE bytes the client receives, the whole snapshots among them, the server's CPU
(parse the body, run the agent, translate and encode every chunk: `ai_sdk.stream` + `encode`,
in this process). Per change: the bytes of its patch part on the wire, and the run's bytes and
CPU beyond those of the same run making no change, divided by 20.

Run: .venv/bin/python bench/ai_sdk_state.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

from pyox_agents import Agent, RunContext, ToolCall, ai_sdk, tool
from pyox_agents.models import ScriptedModel
from pyox_agents.service import RunService, ServerLimits

TODOS = 100_000
CHANGES = 20
MODES = ("change", "step", "finish")


@tool
def finish_todo(ctx: RunContext, index: int) -> str:
    """Mark one todo done."""
    ctx.state["todos"][index]["done"] = True
    return "done"


def script(changes: int, shape: str) -> list[Any]:
    calls = [ToolCall("finish_todo", {"index": 1000 * i + 7}, id=f"c{i}") for i in range(changes)]
    if shape == "one step":
        return ([calls] if calls else []) + ["ok"]
    return [*calls, "ok"]  # one change per step


def body_text(echo: bool = False) -> bytes:
    """The request: the state in the `state` field, or (`echo`) only as the `data-state` part
    of the client's last assistant message (the client holds exactly that state)."""
    state = {"todos": [{"id": i, "text": f"todo number {i}", "done": False}
                       for i in range(TODOS)]}
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "finish them"}]}
    if echo:
        seen = {"id": "a0", "role": "assistant",
                "parts": [{"type": "data-state", "id": "state", "data": state}]}
        return json.dumps({"id": "bench", "trigger": "submit-message",
                           "messages": [{**user, "id": "u0"}, seen, user]}).encode()
    return json.dumps({"id": "bench", "trigger": "submit-message", "state": state,
                       "messages": [user]}).encode()


async def one_run(raw: bytes, mode: str, changes: int, shape: str) -> tuple[int, int, int, float]:
    """(SSE bytes, whole snapshots, bytes of the patch parts, server CPU seconds) of one run."""
    agent = Agent(ScriptedModel(script(changes, shape)), tools=[finish_todo],
                  state_snapshots=mode)  # type: ignore[arg-type]
    service = RunService(None, limits=ServerLimits(state_bytes=None))
    nbytes = snapshots = patch_bytes = 0
    start = time.process_time()
    async for frame in ai_sdk.encode(ai_sdk.stream(agent, raw, service=service)):
        nbytes += len(frame)
        if frame.startswith(b'data: {"type":"data-state"'):
            snapshots += 1
        elif frame.startswith(b'data: {"type":"data-state-delta"'):
            patch_bytes += len(frame)
    cpu = time.process_time() - start
    await service.close()
    return nbytes, snapshots, patch_bytes, cpu


def measure(raw: bytes, mode: str, shape: str, runs: int) -> dict[str, float]:
    """Medians over `runs` of the run with 20 changes and of the same run with none."""
    full = [asyncio.run(one_run(raw, mode, CHANGES, shape)) for _ in range(runs)]
    empty = [asyncio.run(one_run(raw, mode, 0, shape)) for _ in range(runs)]
    nbytes, snapshots, patches = full[0][:3]
    cpu = statistics.median(r[3] for r in full)
    cpu0 = statistics.median(r[3] for r in empty)
    return {"bytes": nbytes, "snapshots": snapshots, "patch": patches / CHANGES,
            "per_change": (nbytes - empty[0][0]) / CHANGES, "cpu": cpu,
            "cpu_per_change": max(cpu - cpu0, 0.0) / CHANGES}


def kib(n: float) -> str:
    return f"{n / 1024:,.1f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:,.2f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run per figure")
    runs = 1 if parser.parse_args().quick else 3
    raw = body_text()
    size = len(json.dumps(json.loads(raw)["state"], separators=(",", ":")))
    print(f"{TODOS:,} todos ({kib(size)} of JSON), {CHANGES} one-item changes per run; "
          f"medians of {runs}. \"wire per change\" and \"CPU per change\" are (the run - the "
          "same run without changes) / 20: they include the final snapshot.\n")
    print("| changes | state_snapshots | SSE per run | whole snapshots | patch part per change "
          "| wire per change | CPU per run | CPU per change | wire vs change | CPU vs change |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = [(shape, mode, raw) for shape in ("one step", "20 steps") for mode in MODES]
    rows.append(("20 steps, client holds the state", "finish", body_text(echo=True)))
    base: dict[str, float] = {}
    for shape, mode, request in rows:
        got = measure(request, mode, shape.split(",")[0], runs)
        if mode == "change":
            base = got
        print(f"| {shape} | {mode} | {kib(got['bytes'])} | {got['snapshots']:.0f} | "
                  f"{got['patch']:,.0f} B | {kib(got['per_change'])} | {got['cpu'] * 1000:,.0f} ms"
                  f" | {got['cpu_per_change'] * 1000:,.1f} ms | "
                  f"{base['bytes'] / got['bytes']:,.1f}x less | "
                  f"{base['cpu'] / got['cpu']:,.1f}x less |")
    print("\nGoals: a change's patch part under 1 KiB; \"finish\" at most two whole snapshots "
          "per run (one when the client holds the state it starts from). \"step\" writes one "
          "per step that changed the state: 20 steps of one change each cost what \"change\" "
          "does; use \"finish\" for large states.")


if __name__ == "__main__":
    main()
