"""Redis round trips and thread hops per run of the processes bench's app: deterministic figures,
where runs/s on a shared 2-core machine is noisy.

`N` AG-UI runs, one after another, against `common:ours_app` with a RedisStore, served in this
process (httpx's ASGI transport: no uvicorn, no sockets of ours besides Redis's), while a
`MONITOR` connection records every command Redis receives. A round trip is one command a
client sent: an EVALSHA (the script's own commands, `lua` in MONITOR, are not round trips), a
MULTI ... EXEC pipeline, or a plain command. A thread hop is one `anyio.to_thread.run_sync`
call (the sync redis client in a worker thread). `PYTHONPATH` (or `BENCH_LIBRARY`, as for the
servers) chooses the library measured, so a baseline commit can be measured beside this one.

Run: BENCH_REDIS=redis://127.0.0.1:PORT/0 python bench/round_trips.py [N]; prints one JSON line.
"""

import asyncio
import collections
import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _monitor(url: str, lines: list[dict[str, Any]], ready: threading.Event,
             stop: threading.Event) -> None:
    import redis

    with redis.Redis.from_url(url).monitor() as monitor:
        ready.set()
        for command in monitor.listen():
            lines.append(command)
            if stop.is_set():
                return


def _trips(lines: list[dict[str, Any]]) -> collections.Counter[str]:
    """Round trips by kind: an EVALSHA by its script's first key's kind, a MULTI by its
    commands, a plain command by its name."""
    kinds: collections.Counter[str] = collections.Counter()
    in_multi: list[str] | None = None
    for line in lines:
        if line.get("client_type") == "lua":
            continue
        words = line["command"].split()
        name = words[0].upper()
        if name == "MULTI":
            in_multi = []
        elif name == "EXEC" and in_multi is not None:
            kinds["MULTI " + "+".join(in_multi)] += 1
            in_multi = None
        elif in_multi is not None:
            in_multi.append(name)
        elif name == "EVALSHA":
            key = words[3].strip('"').split(":")[1] if len(words) > 3 else "?"
            kinds[f"EVALSHA on {key}"] += 1
        elif name not in ("PING", "HELLO", "CLIENT"):
            kinds[name] += 1
    return kinds


async def _runs(n: int) -> None:
    import httpx
    from common import AG_UI_PATH, ours_app, run_input

    app = ours_app()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        for i in range(n + 1):
            if i == 1:
                _STARTED.set()  # the first run (connections, scripts loaded) is not counted
                await asyncio.sleep(0.2)
            key = uuid.uuid4().hex
            response = await client.post(AG_UI_PATH, json=run_input(f"t-{key}", f"r-{key}",
                                                                      f"item-{i}"))
            assert b"RUN_FINISHED" in response.content, response.content[-300:]
        await asyncio.sleep(0.2)


_STARTED = threading.Event()


def main() -> None:
    import anyio.to_thread

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    url = os.environ["BENCH_REDIS"]
    hops = 0
    hopped: collections.Counter[str] = collections.Counter()
    run_sync = anyio.to_thread.run_sync

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal hops
        if _STARTED.is_set():
            hops += 1
            function = getattr(args[0], "func", args[0])  # a partial: its function
            hopped[getattr(function, "__qualname__", repr(function))] += 1
        return await run_sync(*args, **kwargs)

    anyio.to_thread.run_sync = counted  # type: ignore[assignment]
    lines: list[dict[str, Any]] = []
    ready, stop = threading.Event(), threading.Event()
    watcher = threading.Thread(target=_monitor, args=(url, lines, ready, stop), daemon=True)
    watcher.start()
    ready.wait(5)
    started_at = [0]

    def mark() -> None:
        _STARTED.wait()
        started_at[0] = len(lines)

    marker = threading.Thread(target=mark, daemon=True)
    marker.start()
    asyncio.run(_runs(n))
    stop.set()
    import redis

    redis.Redis.from_url(url).ping()
    watcher.join(5)
    time.sleep(0.1)
    kinds = _trips(lines[started_at[0]:])
    print(json.dumps({"runs": n, "round_trips": sum(kinds.values()) / n, "hops": hops / n,
                      "hops_by_function": {k: v / n for k, v in hopped.most_common()},
                      "by_kind": {k: v / n for k, v in kinds.most_common()}}))


if __name__ == "__main__":
    main()
