"""A client back from away: merging its state into a thread's kept state, vs parsing its body.

For N = 1k, 10k and 100k todos, a thread's kept state has 16 versions (each appended a todo);
an AG-UI client that saw the oldest sends it back with one edit of its own, so the server finds
its version by content among the 16 and rebases the edit onto the latest
(`merge` of `pyox_agents.service`, what `RunService` does for such a request). Baseline, in the
same run: `json.loads` + `json.dumps` of the same state, which a request carrying it costs anyway.

Run: .venv/bin/python bench/kept_state.py
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

from pyox_agents.service._thread_state import RECENT, ThreadState, merge


def kept_of(size: int) -> tuple[ThreadState, dict[str, Any]]:
    first = {"todos": [{"id": i, "text": f"todo {i}", "done": False} for i in range(size)],
             "title": "list"}
    kept = ThreadState()
    kept.add(first)
    state = first
    for n in range(RECENT - 1):
        state = {**state, "todos": [*state["todos"], {"id": -n, "text": "new", "done": False}]}
        kept.add(state)
    return ThreadState.from_json(json.loads(json.dumps(kept.to_json()))), first


def median_ms(timed: Any, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        timed()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def measure(size: int) -> tuple[float, float]:
    """Median ms of our merge and of the baseline, for `size` todos."""
    kept, first = kept_of(size)
    text = json.dumps({**first, "title": "mine"})

    def ours() -> None:
        client = json.loads(text)
        merged = merge(ThreadState.from_json(kept.to_json()), client, client)
        assert merged["title"] == "mine" and len(merged["todos"]) == size + RECENT - 1

    def baseline() -> None:
        json.dumps(json.loads(text))

    return median_ms(ours), median_ms(baseline)


def main() -> None:
    print("| todos | merge (ms) | JSON round trip (ms) | ratio |")
    print("|---:|---:|---:|---:|")
    for size in (1_000, 10_000, 100_000):
        a, b = measure(size)
        print(f"| {size:,} | {a:.1f} | {b:.1f} | {a / b:.1f} |")


if __name__ == "__main__":
    main()
