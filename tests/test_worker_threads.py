"""Sync tools' worker threads (`pyox_agents._worker_threads`): the calls of a turn of the loop go
to a runner thread together, yet a blocking call holds up no other, each call runs in its
caller's context, a cancelled call that has not started never runs, errors come back as they
were raised, `anyio.from_thread` works in a call, and a loop that is gone takes its runners."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import threading
import time
import weakref

import anyio.from_thread
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents._worker_threads import run_sync
from pyox_agents.events import ToolResult
from pyox_agents.models import ScriptedModel, ToolCall

caller: contextvars.ContextVar[int] = contextvars.ContextVar("caller")


def test_the_calls_of_one_turn_run_off_the_loop_on_one_runner_in_their_callers_context() -> None:
    """Rule: calls made together are run by one runner thread (one hand-over for all of them),
    never the loop's, each in a copy of its caller's context; every result goes to its own
    caller."""

    def work(i: int) -> tuple[int, int, int]:
        return i * i, caller.get(), threading.get_ident()

    async def call(i: int) -> tuple[int, int, int]:
        caller.set(i)
        return await run_sync(lambda: work(i))

    async def main() -> tuple[list[tuple[int, int, int]], int]:
        return await asyncio.gather(*(call(i) for i in range(500))), threading.get_ident()

    results, loop_thread = asyncio.run(main())
    assert [(square, seen) for square, seen, _ in results] == [(i * i, i) for i in range(500)]
    assert {thread for _, _, thread in results} != {loop_thread}
    assert len({thread for _, _, thread in results}) == 1


def test_a_blocking_call_holds_up_no_other() -> None:
    """Rule: a call that blocks (here until a later call of the same turn runs) gets other
    runners beside it: the later call runs, and the first one ends."""
    released = threading.Event()

    async def main() -> list[bool | None]:
        first = run_sync(lambda: released.wait(30))
        later = [run_sync(released.set) for _ in range(3)]
        return await asyncio.gather(first, *later)

    assert asyncio.run(main()) == [True, None, None, None]


def test_many_blocking_calls_run_side_by_side() -> None:
    """Rule: calls that all block wait together, not one after another: 8 calls that each wait
    for all 8 to have started all end (in turn, they would wait forever)."""
    started = threading.Barrier(8, timeout=30)

    async def main() -> list[int]:
        return await asyncio.gather(*(run_sync(started.wait) for _ in range(8)))

    assert sorted(asyncio.run(main())) == list(range(8))


def test_a_call_cancelled_before_it_starts_never_runs() -> None:
    """Rule: cancelling the await abandons the call: one not started yet is never run."""
    ran: list[str] = []
    busy = threading.Event()

    async def main() -> None:
        blocker = run_sync(lambda: busy.wait(30))
        doomed = run_sync(lambda: ran.append("doomed"))
        doomed.cancel()
        busy.set()
        await blocker
        assert await run_sync(lambda: "after") == "after"
        await asyncio.sleep(0.05)

    asyncio.run(main())
    assert ran == []


def test_an_abandoned_call_does_not_hold_its_caller() -> None:
    """Rule: a caller that stops waiting (a tool's timeout) goes on at once; the call, once it
    ends, is let go, and later calls are served."""
    release = threading.Event()

    async def main() -> str:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await run_sync(lambda: release.wait(30))
        release.set()
        return await run_sync(lambda: "next")

    assert asyncio.run(main()) == "next"


def test_errors_come_back_as_raised() -> None:
    """Rule: the call's exception is the caller's, the same object; a StopIteration (which a
    future cannot hold) comes back as a RuntimeError caused by it."""
    error = KeyError("missing")

    def fail() -> None:
        raise error

    def stop() -> None:
        raise StopIteration

    async def main() -> None:
        with pytest.raises(KeyError) as caught:
            await run_sync(fail)
        assert caught.value is error
        with pytest.raises(RuntimeError, match="StopIteration") as stopped:
            await run_sync(stop)
        assert isinstance(stopped.value.__cause__, StopIteration)

    asyncio.run(main())


def test_anyio_from_thread_works_in_a_sync_tool() -> None:
    """Rule: a sync tool may call back into the loop with `anyio.from_thread` (runners are anyio
    worker threads), and the loop is not held meanwhile."""

    async def on_the_loop(text: str) -> str:
        await asyncio.sleep(0)
        return text.upper()

    @tool
    def shout(ctx: RunContext, text: str) -> str:
        """Shout `text`, asking the loop."""
        ctx.state["said"] = anyio.from_thread.run(on_the_loop, text)
        return anyio.from_thread.run_sync(str.lower, "DONE")

    agent = Agent(model=ScriptedModel([ToolCall("shout", {"text": "hi"}), "ok"]), tools=[shout])
    result = agent.run("go", state={})
    assert result.state == {"said": "HI"}
    (done,) = [event for event in result.events if isinstance(event, ToolResult)]
    assert done.result == "done"


def test_a_loop_that_is_gone_takes_its_runners_with_it() -> None:
    """Rule: once `asyncio.run` is over, the loop and its runner threads are let go."""
    before = threading.active_count()

    async def main() -> weakref.ref[asyncio.AbstractEventLoop]:
        await asyncio.gather(*(run_sync(lambda: time.sleep(0.001)) for _ in range(20)))
        return weakref.ref(asyncio.get_running_loop())

    loop = asyncio.run(main())
    deadline = time.monotonic() + 10
    while (loop() is not None or threading.active_count() > before) and (
            time.monotonic() < deadline):
        gc.collect()
        time.sleep(0.01)
    assert loop() is None
    assert threading.active_count() <= before
