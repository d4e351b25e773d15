"""A live run's followers: each gets every event, in order, however many follow and whichever
of them goes away."""

from __future__ import annotations

import asyncio

from pyox_agents.events import TextDelta
from pyox_agents.service._live import LiveRun


async def _follow(live: LiveRun, into: list[str]) -> None:
    async for event in live.follow():
        assert isinstance(event, TextDelta)
        into.append(event.delta)


def test_every_follower_gets_every_event_in_order_when_one_goes_away() -> None:
    async def main() -> tuple[list[str], list[str], list[str]]:
        live = LiveRun("t", "a")
        first: list[str] = []
        second: list[str] = []
        gone: list[str] = []
        tasks = [asyncio.create_task(_follow(live, seen)) for seen in (first, second, gone)]
        for i in range(50):
            live.add([TextDelta("m", f"{i} ")])
            if i == 10:
                await asyncio.sleep(0)
                tasks[2].cancel()  # a client that went away
            await asyncio.sleep(0)
        live.end()
        await asyncio.gather(*tasks, return_exceptions=True)
        return first, second, gone

    first, second, gone = asyncio.run(main())
    expected = [f"{i} " for i in range(50)]
    assert first == expected and second == expected
    assert gone == expected[:len(gone)] and len(gone) < 50
