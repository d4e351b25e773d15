"""Sync tools run in anyio's worker threads (`anyio.to_thread.run_sync`), each call in its own:
calls of many runs, or of one reply, block side by side; a call stopped by its timeout gives
its thread's slot back; a cancelled call can see it (`anyio.from_thread.check_cancelled`); a
tool may call back into the loop (`anyio.from_thread`) and sees its caller's context."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.events import ToolResult
from pyox_agents.models import FunctionModel, ScriptedModel, ToolCall
from pyox_agents.tools import Tool
from tests.runs import collect, results

pytestmark = pytest.mark.anyio


def _calling(name: str, count: int = 1) -> FunctionModel:
    """A model that calls `name` `count` times at once, then answers "done" (each run alike)."""

    def reply(messages: list[Any], tools: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "done"
        return [ToolCall(name, {}) for _ in range(count)]

    return FunctionModel(reply)


class _InFlight:
    """How many calls of a tool are running at once, and the most there were."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = self.peak = 0

    def blocking(self, seconds: float) -> Callable[[], str]:
        def query() -> str:
            """Block as a database query does."""
            with self._lock:
                self.now += 1
                self.peak = max(self.peak, self.now)
            time.sleep(seconds)
            with self._lock:
                self.now -= 1
            return "row"

        return query


async def test_sync_tools_of_many_runs_block_side_by_side_not_in_turn() -> None:
    """Rule: 100 runs that each call a sync tool blocking 5 ms (a query) run those calls side
    by side, not one after another on one thread."""
    calls = _InFlight()
    agent = Agent(model=_calling("query"), tools=[tool(name="query")(calls.blocking(0.005))])
    with anyio.fail_after(30):
        outcomes = await asyncio.gather(*(agent.arun("go") for _ in range(100)))
    assert all(outcome.answer == "done" for outcome in outcomes)
    assert calls.peak >= 10


async def test_the_parallel_sync_calls_of_one_reply_run_side_by_side() -> None:
    """Rule: eight calls of one reply, each blocking 8 ms, overlap (they take about one call's
    time, not eight)."""
    calls = _InFlight()
    agent = Agent(model=_calling("query", 8), tools=[tool(name="query")(calls.blocking(0.008))])
    with anyio.fail_after(30):
        await agent.arun("go")
    assert calls.peak >= 4


async def test_sync_tools_that_hang_past_their_timeout_give_their_thread_slots_back() -> None:
    """Rule: a sync tool stopped by its timeout is abandoned in its thread and its slot given
    back: after as many hung calls as anyio has threads (40), a sync tool still runs."""
    release = threading.Event()

    @tool(timeout=0.05)
    def hang() -> str:
        """Wait for something that never comes."""
        release.wait(30)
        return "late"

    @tool
    def answer() -> str:
        """Answer at once."""
        return "here"

    limit = int(anyio.to_thread.current_default_thread_limiter().total_tokens)
    try:
        hung = await collect(Agent(model=_calling("hang", limit), tools=[hang]))
        assert [r.error for r in results(hung).values()] == [
            "the tool did not finish within 0.05 s and was stopped; nothing of it was applied"
        ] * limit
        with anyio.fail_after(10):
            after = await collect(Agent(model=_calling("answer"), tools=[answer]))
        assert [r.result for r in results(after).values()] == ["here"]
    finally:
        release.set()


async def test_sync_tools_that_wait_on_each_other_all_finish_on_threads_used_before() -> None:
    """Rule: threads left idle by earlier runs take one call each: four parallel calls that
    each wait for all four to have started all finish, on the second run as on the first."""
    for _ in range(2):
        met = threading.Barrier(4, timeout=10)
        meet = tool(name="meet", timeout=3)(met.wait)
        events = await collect(Agent(model=_calling("meet", 4), tools=[meet]))
        assert sorted(r.result for r in results(events).values()) == [0, 1, 2, 3]


def _until_cancelled(seen: threading.Event, started: threading.Event) -> Tool:
    @tool(timeout=0.1)
    def poll() -> str:
        """Work in small steps, stopping when the call is cancelled."""
        started.set()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                anyio.from_thread.check_cancelled()
            except asyncio.CancelledError:  # (anyio's on asyncio)
                seen.set()
                raise
            time.sleep(0.005)
        return "never cancelled"

    return poll


async def test_a_sync_tool_stopped_by_its_timeout_sees_it_with_check_cancelled() -> None:
    """Rule: `anyio.from_thread.check_cancelled()` raises in a sync tool whose timeout
    stopped it, so the tool can stop its work."""
    seen, started = threading.Event(), threading.Event()
    events = await collect(Agent(model=_calling("poll"), tools=[_until_cancelled(seen, started)]))
    assert "did not finish within 0.1 s" in str([r.error for r in results(events).values()])
    assert await anyio.to_thread.run_sync(seen.wait, 10)


async def test_a_sync_tool_of_a_stopped_run_sees_it_with_check_cancelled() -> None:
    """Rule: a run stopped while its sync tool works (`Task.cancel()`, as the server stops a
    run) makes `anyio.from_thread.check_cancelled()` raise in that tool."""
    seen, started = threading.Event(), threading.Event()
    poll = _until_cancelled(seen, started)
    agent = Agent(model=_calling("poll"), tools=[Tool(**{**_fields(poll), "timeout": None})])
    run = asyncio.create_task(agent.arun("go"))
    assert await anyio.to_thread.run_sync(started.wait, 10)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert await anyio.to_thread.run_sync(seen.wait, 10)


def _fields(t: Tool) -> dict[str, Any]:
    return {name: getattr(t, name) for name in Tool.__dataclass_fields__}


async def test_a_sync_tool_calls_back_into_the_loop_with_anyio_from_thread() -> None:
    """Rule: a sync tool may run code on the loop (`anyio.from_thread.run`, `run_sync`), and
    the loop is not held meanwhile."""

    async def on_the_loop(text: str) -> str:
        await asyncio.sleep(0)
        return text.upper()

    @tool
    def shout(ctx: RunContext, text: str) -> str:
        """Shout `text`, asking the loop."""
        ctx.state["said"] = anyio.from_thread.run(on_the_loop, text)
        return anyio.from_thread.run_sync(str.lower, "DONE")

    agent = Agent(model=ScriptedModel([ToolCall("shout", {"text": "hi"}), "ok"]), tools=[shout])
    result = await agent.arun("go", state={})
    assert result.state == {"said": "HI"}
    (done,) = [event for event in result.events if isinstance(event, ToolResult)]
    assert done.result == "done"


caller: contextvars.ContextVar[str] = contextvars.ContextVar("caller")


async def test_a_sync_tool_runs_in_a_copy_of_its_callers_context() -> None:
    """Rule: what the caller set in its context (a tracing span, a request id) is seen by a
    sync tool, and what the tool sets stays in the tool."""

    @tool
    def whose() -> str:
        """Tell whose call this is."""
        seen = caller.get("nobody")
        caller.set("the tool")
        return seen

    caller.set("the request")
    events = await collect(Agent(model=_calling("whose"), tools=[whose]))
    assert [r.result for r in results(events).values()] == ["the request"]
    assert caller.get() == "the request"


async def test_a_sync_tools_exception_fails_that_tool_naming_its_type() -> None:
    """Rule: what a sync tool raises becomes its error result (its type, not its text), the
    run goes on; a StopIteration, which an awaitable cannot carry, too."""

    @tool
    def missing() -> str:
        """Look up a key that is not there."""
        raise KeyError("secret-key-name")

    @tool
    def exhausted() -> str:
        """Read past the end."""
        raise StopIteration

    for name, kind in (("missing", "KeyError"), ("exhausted", "RuntimeError")):
        events = await collect(Agent(model=_calling(name), tools=[missing, exhausted]))
        (result,) = results(events).values()
        assert result.error == (f"the tool failed with an unexpected {kind}; the server's log "
                                "has the details")
