"""`Driven` runs an awaitable to its end as a task would, without one: its result or its error
reaches `done`, once; `close()` stops it where it waits and runs its `finally`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pyox_agents.server._driven import Driven

pytestmark = pytest.mark.anyio


class _Outcome:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, BaseException | None]] = []
        self.event = asyncio.Event()

    def done(self, result: Any, error: BaseException | None) -> None:
        self.calls.append((result, error))
        self.event.set()


async def test_a_coroutine_that_waits_on_futures_ends_with_its_result() -> None:
    first: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    second = asyncio.Event()

    async def waits() -> int:
        value = await first
        await asyncio.sleep(0)  # a bare turn of the loop
        await second.wait()
        return value + 1

    outcome = _Outcome()
    tasks = len(asyncio.all_tasks())
    Driven(waits(), outcome.done)
    assert len(asyncio.all_tasks()) == tasks  # no task of its own
    first.set_result(41)
    await asyncio.sleep(0)
    second.set()
    await asyncio.wait_for(outcome.event.wait(), 5)
    assert outcome.calls == [(42, None)]


async def test_its_error_reaches_done() -> None:
    gate = asyncio.Event()

    async def fails() -> None:
        await gate.wait()
        raise LookupError("nothing here")

    outcome = _Outcome()
    Driven(fails(), outcome.done)
    gate.set()
    await asyncio.wait_for(outcome.event.wait(), 5)
    ((result, error),) = outcome.calls
    assert result is None and isinstance(error, LookupError)


async def test_close_stops_it_where_it_waits_and_runs_its_finally() -> None:
    closed = asyncio.Event()
    gate = asyncio.Event()

    async def waits() -> None:
        try:
            await gate.wait()
        finally:
            closed.set()

    outcome = _Outcome()
    driven = Driven(waits(), outcome.done)
    driven.close()
    assert closed.is_set()
    gate.set()
    await asyncio.sleep(0.01)
    assert outcome.calls == []  # stopped: done is never called


class _Other:
    """An awaitable that is not a coroutine (a Cython one, say): it waits on a future."""

    def __init__(self, future: asyncio.Future[str]) -> None:
        self.future = future

    def __await__(self) -> Any:
        return self.future.__await__()


async def test_what_it_does_not_drive_goes_on_in_a_task() -> None:
    future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    outcome = _Outcome()
    Driven(_Other(future), outcome.done)
    future.set_result("taken")
    await asyncio.wait_for(outcome.event.wait(), 5)
    assert outcome.calls == [("taken", None)]
