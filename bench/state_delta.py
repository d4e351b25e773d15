"""One tool's one-item change to a big shared state: our draft + commit vs deepcopy + make_patch.

For N = 1k, 10k and 100k todos, times (median of several runs, inputs built outside the timer)
three changes: append a todo, set `done` of the middle todo, insert a todo at 0. Ours: take a
draft, change it through the view, commit (giving the delta and the new state). Naive, measured
in the same run: `copy.deepcopy` the document, change the copy, `jsonpatch.make_patch`.
"limited" is ours with a byte limit on the state (as a server sets it): the commit keeps the
state's JSON size from the ops instead of serializing the document.

Then edit loops, one draft each: n edits with reads in between (a slice read before each edit;
moving each edited item to an archive list, `archive.append(todos.pop())`). Each must stay
linear in n: the table gives the time for 16,000 items over the time for 4,000 (linear: about
4; a loop that copies the whole list at each edit: about 16).

Run: .venv/bin/python bench/state_delta.py
"""

from __future__ import annotations

import copy
import statistics
import time
from collections.abc import Callable
from typing import Any

import jsonpatch

from pyox_agents.state.frozen import freeze
from pyox_agents.state.shared import SharedState

Change = Callable[[Any], None]

CHANGES: dict[str, Change] = {
    "append one todo": lambda state: state["todos"].append(
        {"id": -1, "text": "new", "done": False}
    ),
    "set done in the middle": lambda state: state["todos"][len(state["todos"]) // 2].__setitem__(
        "done", True
    ),
    "insert at 0": lambda state: state["todos"].insert(0, {"id": -1, "text": "new", "done": False}),
}


def median_ms(setup: Callable[[], Any], timed: Callable[[Any], object], runs: int) -> float:
    """Median wall time of `timed(setup())` over `runs` runs, in ms; setup is not timed."""
    times = []
    for _ in range(runs):
        inputs = setup()
        start = time.perf_counter()
        timed(inputs)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def ours(state: SharedState, change: Change) -> object:
    draft = state.draft("bench")
    change(draft.root)
    commit = state.commit(draft)
    assert commit is not None and len(commit.delta) == 1
    return commit


def naive(doc: dict[str, Any], change: Change) -> object:
    new = copy.deepcopy(doc)
    change(new)
    return jsonpatch.make_patch(doc, new)


def edit_with_slice_reads(state: Any) -> None:
    todos = state["todos"]
    for at in range(1, len(todos)):
        todos[at - 1 : at]
        todos[at]["done"] = True


def move_edited_items(state: Any) -> None:
    todos, archive = state["todos"], state["archive"]
    while todos:
        todos[-1]["done"] = True
        archive.append(todos.pop())


LOOPS: dict[str, Change] = {
    "edit each, reading a slice between": edit_with_slice_reads,
    "edit each, move it to an archive": move_edited_items,
}


def loop_ms(size: int, loop: Change) -> float:
    doc = freeze({"todos": [{"id": i, "done": False} for i in range(size)], "archive": []})

    def run(state: SharedState) -> object:
        draft = state.draft("bench")
        loop(draft.root)
        return state.commit(draft)

    return median_ms(lambda: SharedState(doc), run, 3)


def loops() -> None:
    print()
    print("| edit loop | 4,000 items ms | 16,000 items ms | 16,000 / 4,000 (linear: ~4) |")
    print("|---|---|---|---|")
    for name, loop in LOOPS.items():
        small, large = loop_ms(4_000, loop), loop_ms(16_000, loop)
        print(f"| {name} | {small:.1f} | {large:.1f} | {large / small:.1f} |")


def main() -> None:
    print("| todos | change | ours ms (median) | limited ms (median) | naive ms (median) "
          "| naive / ours |")
    print("|---|---|---|---|---|---|")
    for size in (1_000, 10_000, 100_000):
        doc = {"todos": [{"id": i, "text": f"todo {i}", "done": False} for i in range(size)]}
        frozen = freeze(doc)
        naive_runs = 5 if size >= 100_000 else 9
        for name, change in CHANGES.items():
            ours_ms = median_ms(
                lambda f=frozen: SharedState(f), lambda s, c=change: ours(s, c), 21
            )
            limited_ms = median_ms(
                lambda f=frozen: SharedState(f, max_bytes=10**9), lambda s, c=change: ours(s, c), 21
            )
            naive_ms = median_ms(lambda d=doc: d, lambda d, c=change: naive(d, c), naive_runs)
            print(f"| {size:,} | {name} | {ours_ms:.3f} | {limited_ms:.3f} | {naive_ms:.1f} | "
                  f"{naive_ms / ours_ms:,.0f}x |")
    loops()


if __name__ == "__main__":
    main()
