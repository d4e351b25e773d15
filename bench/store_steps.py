"""Saving one step costs the same at entry 10 and at entry 10,000: writes are appends.

For threads of 10, 100, 1,000 and 10,000 history entries, in `MemoryStore`, `SQLiteStore` (a
file in a temporary folder), `RedisStore` (a throwaway `redis-server` on 127.0.0.1, without
persistence; or `--redis-url`) and `PostgresStore` (a throwaway cluster on 127.0.0.1, as the
tests start it, with fsync off; or `--postgres-url`), times `store.save(state)` after one step:
one think (a model_request and a model_reply asking for a tool call) and that call's tool
result, i.e. three new entries. Building the thread, saving it once, and recording each step on
the State happen outside the timer; the figure is the median over repeated steps. The last lines
give, per store, the ratio of the step time at 10,000 entries to the one at 10 (the baseline,
measured in the same run): the target is under 1.5.

Run: .venv/bin/python bench/store_steps.py [--steps N] [--redis-url URL] [--postgres-url URL]
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
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


@contextlib.contextmanager
def redis_url(given: str | None) -> Iterator[str]:
    """`given`, or the URL of a throwaway `redis-server` (no persistence) run for this bench."""
    if given:
        yield given
        return
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("store_steps.py measures RedisStore too: install redis-server "
                         "(apt-get install -y redis-server) or pass --redis-url")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory() as folder:
        server = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save",
                                   "", "--appendonly", "no", "--dir", folder],
                                  stdout=subprocess.DEVNULL)
        try:
            import redis

            client = redis.Redis(port=port)
            deadline = time.monotonic() + 15
            while True:
                with contextlib.suppress(redis.ConnectionError):
                    if client.ping():
                        break
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit(f"redis-server on port {port} did not start")
                time.sleep(0.05)
            client.close()
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            server.terminate()
            server.wait(timeout=10)


@contextlib.contextmanager
def postgres_url(given: str | None) -> Iterator[str]:
    """`given`, or the URL of a throwaway PostgreSQL cluster run for this bench."""
    if given:
        yield given
        return
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.postgres_server import running_postgres_server

    with running_postgres_server() as url:
        yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="timed steps per size")
    parser.add_argument("--redis-url", help="an existing Redis to use (its keys go under a "
                        "fresh prefix); default: start a throwaway redis-server")
    parser.add_argument("--postgres-url", help="an existing PostgreSQL database to use (its "
                        "tables go in a fresh schema); default: start a throwaway cluster")
    args = parser.parse_args()
    with (tempfile.TemporaryDirectory() as folder, redis_url(args.redis_url) as url,
          postgres_url(args.postgres_url) as pg_url):
        from pyox_agents.stores.postgres import PostgresStore
        from pyox_agents.stores.redis import RedisStore

        prefix = f"pyox-bench-{time.time_ns()}:"
        stores: dict[str, Callable[[], Store]] = {
            "MemoryStore": MemoryStore,
            "SQLiteStore": lambda: SQLiteStore(Path(folder) / "bench.db"),
            "RedisStore": lambda: RedisStore(url, prefix=prefix),
            "PostgresStore": lambda: PostgresStore(pg_url, schema=f"pyox_bench_{time.time_ns()}"),
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
