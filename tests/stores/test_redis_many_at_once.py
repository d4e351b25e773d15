"""RedisStore under many concurrent runs in one process: more calls at once than its connection
pool holds wait for a connection instead of failing, and runs followed through the store (XREAD
BLOCK, which holds a connection while it waits) do not take the connections other calls need."""

from __future__ import annotations

import asyncio
import json

from pyox_agents.stores.redis import RedisStore


def _event(text: str) -> str:
    return json.dumps({"type": "text", "text": text})


def test_many_calls_at_once_wait_for_a_connection_instead_of_failing(
        redis_store: RedisStore) -> None:
    """500 concurrent runs each append to their log and read it back: every call succeeds
    (redis-py's pool refuses its 101st connection with "Too many connections")."""

    async def main() -> list[list[tuple[str, str]]]:
        async def one(i: int) -> list[tuple[str, str]]:
            await redis_store.aappend_events(f"run-{i}", [_event(f"hello {i}")])
            return await redis_store.aread_events(f"run-{i}")

        try:
            return await asyncio.gather(*(one(i) for i in range(500)))
        finally:
            await redis_store.aclose()

    logs = asyncio.run(main())
    assert [json.loads(log[0][1])["text"] for log in logs] == [f"hello {i}" for i in range(500)]


def test_followers_waiting_leave_connections_for_other_calls(redis_store: RedisStore) -> None:
    """300 runs followed at once (each waits in XREAD BLOCK) while 300 other calls append their
    events: every follower gets its run's event and the appends go through."""

    async def main() -> list[str]:
        async def follow(i: int) -> str:
            rows = redis_store.follow_events(f"run-{i}", "0", block_ms=20_000)
            try:
                _, text = await anext(rows)  # type: ignore[call-overload]
            finally:
                await rows.aclose()  # type: ignore[attr-defined]
            return str(json.loads(text)["text"])

        try:
            async with asyncio.timeout(15):
                followers = [asyncio.create_task(follow(i)) for i in range(300)]
                await asyncio.sleep(0.5)  # each follower is in its XREAD BLOCK
                await asyncio.gather(*(redis_store.aappend_events(f"run-{i}", [_event(str(i))])
                                       for i in range(300)))
                return await asyncio.gather(*followers)
        finally:
            await redis_store.aclose()

    assert asyncio.run(main()) == [str(i) for i in range(300)]
