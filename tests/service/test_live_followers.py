"""A live run's followers: each gets every event, in order, however many follow and whichever
of them goes away; the wake-up they wait on behaves as an `asyncio.Event` per wait would."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents.events import TextDelta
from pyox_agents.runtime._wakeup import Wakeup
from pyox_agents.service._live import LiveRun


class _EventWakeup:
    """The reference: a fresh `asyncio.Event` per round of waiters (the former mechanism)."""

    def __init__(self) -> None:
        self._event: asyncio.Event | None = None

    def notify(self) -> None:
        if self._event is not None:
            self._event.set()
            self._event = None

    async def wait(self) -> None:
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()


async def _woken(wakeup: Any, steps: list[tuple[str, int]]) -> list[str]:
    """Play `steps` (start a waiter, cancel waiter i, notify) and say what became of each."""
    waiters: list[asyncio.Task[None]] = []
    for op, index in steps:
        if op == "wait":
            waiters.append(asyncio.create_task(wakeup.wait()))
        elif op == "cancel" and waiters:
            waiters[index % len(waiters)].cancel()
        elif op == "notify":
            wakeup.notify()
        for _ in range(3):
            await asyncio.sleep(0)
    outcome = ["cancelled" if t.cancelled() else "woken" if t.done() else "waiting"
               for t in waiters]
    for task in waiters:
        task.cancel()
    await asyncio.gather(*waiters, return_exceptions=True)
    return outcome


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["wait", "cancel", "notify"]),
                          st.integers(0, 20)), max_size=30))
def test_waiters_are_woken_as_by_an_event_per_wait(steps: list[tuple[str, int]]) -> None:
    """Every waiter present at a notify wakes, later ones wait for the next, and a cancelled
    waiter leaves the others waiting: the same outcomes as with an `asyncio.Event`."""
    assert asyncio.run(_woken(Wakeup(), steps)) == asyncio.run(_woken(_EventWakeup(), steps))


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
