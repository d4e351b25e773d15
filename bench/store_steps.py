"""Saving one step costs the same at entry 10 and at entry 10,000: writes are appends.

For threads of 10, 100, 1,000 and 10,000 history entries, in `MemoryStore` and `SQLiteStore`
(a file in a temporary folder), times `store.save(state)` after one step: one think (a
model_request and a model_reply asking for a tool call) and that call's tool result, i.e. three
new entries. Building the thread, saving it once, and recording each step on the State happen
outside the timer; the figure is the median over repeated steps. The last lines give, per store,
the ratio of the step time at 10,000 entries to the one at 10 (the baseline, measured in the
same run): the target is under 1.5.

Run: .venv/bin/python bench/store_steps.py   (add --steps N for more steps per size; default 200)
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pyox_agents.state.conversation import State
from pyox_agents.state.history import (
    HistoryEntry,
    ModelReplyEntry,
    ModelRequest,
    ModelRequestEntry,
    ToolResultEntry,
    UserMessageEntry,
    utc_now,
)
from pyox_agents.state.messages import Message, Reply, ToolCall, Usage
from pyox_agents.stores import MemoryStore, SQLiteStore, Store

SIZES = (10, 100, 1_000, 10_000)
USAGE = Usage(input_tokens=90, output_tokens=12, requests=1)


def _history(size: int) -> list[HistoryEntry]:
    """A history of exactly `size` entries: a user message, then whole steps (3 entries each)."""
    entries: list[HistoryEntry] = []
    while len(entries) < size:
        if (size - len(entries)) % 3:
            entries.append(UserMessageEntry(at=utc_now(), content=Message.user("and then?")))
            continue
        call = ToolCall("search", {"query": f"step {len(entries)}", "limit": 5})
        entries += [
            ModelRequestEntry(at=utc_now(), content=ModelRequest(len(entries), ("search",))),
            ModelReplyEntry(at=utc_now(), content=Reply("looking", (call,), usage=USAGE)),
            ToolResultEntry(at=utc_now(), content={"hits": ["a.py", "b.py"]}, call=call),
        ]
    return entries


def _step(state: State, number: int) -> None:
    """Record one step on `state`: a think asking for one tool call, then its result."""
    call = ToolCall("search", {"query": f"bench {number}", "limit": 5})
    state._begin_think(len(state.messages), ["search"])
    state._end_think(Reply("looking", (call,), usage=USAGE))
    state._add_tool_result(call, "ok", {"hits": ["a.py", "b.py"]}, is_error=False)


def step_ms(store: Store, size: int, steps: int) -> float:
    """Median time of `store.save` after one step, on a thread that already has `size` entries."""
    state = State(id=f"bench-{size}", history=_history(size))
    store.save(state)  # the thread is in the store before the first timed step
    times = []
    for number in range(steps):
        _step(state, number)
        start = time.perf_counter()
        store.save(state)
        times.append(time.perf_counter() - start)
    assert store.entry_count(state.id) == size + 3 * steps
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="timed steps per size")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        stores: dict[str, Callable[[], Store]] = {
            "MemoryStore": MemoryStore,
            "SQLiteStore": lambda: SQLiteStore(Path(folder) / "bench.db"),
        }
        ratios = {}
        rows = []
        for name, make in stores.items():
            store = make()
            try:
                medians = {size: step_ms(store, size, args.steps) for size in SIZES}
            finally:
                store.close()
            ratios[name] = medians[SIZES[-1]] / medians[SIZES[0]]
            rows += [(name, size, ms, ms / medians[SIZES[0]]) for size, ms in medians.items()]
        print(f"| store | entries | ms per step (median of {args.steps}) | vs {SIZES[0]} entries |")
        print("|---|---|---|---|")
        for name, size, ms, ratio in rows:
            print(f"| {name} | {size:,} | {ms:.3f} | {ratio:.2f}x |")
        print()
        for name, ratio in ratios.items():
            verdict = "ok" if ratio < 1.5 else "MISSES the 1.5 target"
            print(f"{name}: ratio {SIZES[-1]:,} / {SIZES[0]:,} entries: {ratio:.2f} ({verdict})")


if __name__ == "__main__":
    main()
