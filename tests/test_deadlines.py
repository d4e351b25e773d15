"""The far timers (`pyox_agents._deadlines`): an open stream's keep-alive look and a run's time
limit wait off asyncio's heap; each callback still runs when due, in order, once, and never
once cancelled."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents import _deadlines
from pyox_agents._deadlines import call_later


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.booleans()), min_size=1, max_size=25))
def test_each_timer_runs_once_when_due_in_order_unless_cancelled(
        timers: list[tuple[int, bool]]) -> None:
    """Rule: a timer's callback runs once, not before its delay, after every timer due before
    it; a cancelled one never runs. Delays in ms, some equal (then in the order added)."""

    async def main() -> list[tuple[int, int, float]]:
        loop = asyncio.get_running_loop()
        ran: list[tuple[int, int, float]] = []
        start = loop.time()
        handles = [call_later(delay / 1000, lambda i=i, d=delay: ran.append(
            (d, i, loop.time() - start))) for i, (delay, _) in enumerate(timers)]
        for handle, (_, cancel) in zip(handles, timers, strict=True):
            if cancel:
                handle.cancel()
        await asyncio.sleep(0.06)
        for handle in handles:
            handle.cancel()  # ran already: nothing happens
        return ran

    ran = asyncio.run(main())
    expected = sorted((delay, i) for i, (delay, cancel) in enumerate(timers) if not cancel)
    assert [(delay, i) for delay, i, _ in ran] == expected
    for delay, _, at in ran:
        assert at >= delay / 1000 - 0.002  # (the loop's clock tick)


def test_a_timer_added_earlier_than_the_armed_one_runs_first() -> None:
    """Rule: the loop's one timer moves to a new earliest deadline; it never waits for a later
    one that was armed first."""

    async def main() -> list[str]:
        ran: list[str] = []
        call_later(0.5, lambda: ran.append("late"))
        call_later(0.01, lambda: ran.append("soon"))
        await asyncio.sleep(0.05)
        return ran

    assert asyncio.run(main()) == ["soon"]


def test_cancelled_timers_are_let_go() -> None:
    """Rule: timers far ahead that are cancelled (every ended run's and response's) are not
    kept until they would have been due: past half the heap, they are dropped."""

    async def main() -> int:
        loop = asyncio.get_running_loop()
        for _ in range(10_000):
            call_later(600, lambda: None).cancel()
        keep = call_later(600, lambda: None)
        size = len(_deadlines._timers[loop]._heap)
        keep.cancel()
        return size

    assert asyncio.run(main()) < 200


def test_a_timer_that_raises_is_reported_and_the_others_run() -> None:
    """Rule: a callback that raises goes to the loop's exception handler, as a `call_later`
    one does; the timers due with it and after it still run."""

    async def main() -> tuple[list[str], list[Any]]:
        loop = asyncio.get_running_loop()
        reported: list[Any] = []
        loop.set_exception_handler(lambda _, context: reported.append(context["exception"]))
        ran: list[str] = []

        def broken() -> None:
            raise ValueError("broken")

        call_later(0.01, broken)
        call_later(0.01, lambda: ran.append("same time"))
        call_later(0.02, lambda: ran.append("later"))
        await asyncio.sleep(0.05)
        return ran, reported

    ran, reported = asyncio.run(main())
    assert ran == ["same time", "later"]
    assert [str(error) for error in reported] == ["broken"]


def test_the_far_timers_run_on_uvloop_too() -> None:
    """Rule: `pyox-agents serve` runs on uvloop when it is installed (the `fast` extra); a
    time limit and a keep-alive look are due there as on asyncio's own loop."""
    import uvloop

    async def main() -> list[str]:
        ran: list[str] = []
        call_later(0.02, lambda: ran.append("later"))
        call_later(0.01, lambda: ran.append("soon"))
        call_later(0.01, lambda: ran.append("cancelled")).cancel()
        await asyncio.sleep(0.05)
        return ran

    assert uvloop.run(main()) == ["soon", "later"]


def test_a_loop_that_is_gone_takes_its_timers_with_it() -> None:
    """Rule: the far timers of a loop are let go with the loop (a server's tests, a worker
    that restarts its loop): nothing keeps a closed loop alive."""
    import gc
    import weakref

    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []

    async def main() -> None:
        loops.append(weakref.ref(asyncio.get_running_loop()))
        call_later(600, lambda: None)
        await asyncio.sleep(0)

    asyncio.run(main())
    gc.collect()
    assert loops[0]() is None
