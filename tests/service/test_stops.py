"""A run the service stops ends once, and every reader hears its end, however many stops come:
a second stop (a double click, a second tab, the server's shutdown) that lands while the first
one's end is being written to the store waits for that end instead of cutting it. Before, the
end was saved but never shown: every stream of the run closed without its terminal event, and a
thread's followers never heard that the run had ended."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pyox_agents import Agent
from pyox_agents.events import RunFailed, RunFinished, TextDelta, TextEnded
from pyox_agents.models import ScriptedModel
from pyox_agents.models.base import TextChunk
from pyox_agents.service import RunRequest, RunService, ServerLimits
from pyox_agents.state.messages import Message
from pyox_agents.stores import SQLiteStore
from pyox_agents.stores.base import Checkpoint


class _Stalling:
    """Streams one piece of text, then waits for ever (a run that only a stop ends)."""

    name = "stalling"

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        yield TextChunk("hello")
        await asyncio.Event().wait()


class _SlowCheckpoints(SQLiteStore):
    """A SQLite store whose record of a run's end takes until `written` is set, as a store
    across the network may: `writing` is set while it waits."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.writing = asyncio.Event()
        self.written = asyncio.Event()

    async def awrite_checkpoint(self, thread_id: str, checkpoint: Checkpoint) -> None:
        self.writing.set()
        await self.written.wait()
        await super().awrite_checkpoint(thread_id, checkpoint)


@pytest.mark.parametrize("stops", [2, 3])
def test_a_stop_while_the_first_stops_end_is_written_waits_for_that_end(
        tmp_path: Path, stops: int) -> None:
    async def scenario() -> tuple[list[Any], list[bool], Any]:
        store = _SlowCheckpoints(tmp_path / "threads.db")
        service = RunService(store=store)
        request = RunRequest("t1", messages=(Message(role="user", content="go"),), state={})
        live = await service.start(Agent(_Stalling(), store=store), request)
        streamed = asyncio.Event()
        followed = asyncio.create_task(_events(live.follow(), streamed))
        await asyncio.wait_for(streamed.wait(), 10)
        first = asyncio.create_task(service.stop("t1"))
        await asyncio.wait_for(store.writing.wait(), 10)  # the first stop's end is being written
        later = [asyncio.create_task(service.stop("t1")) for _ in range(stops - 1)]
        await asyncio.sleep(0.05)  # (the later stops land while it is written)
        store.written.set()
        answers = [await asyncio.wait_for(stop, 10) for stop in [first, *later]]
        events = await asyncio.wait_for(followed, 10)
        return events, answers, store.load("t1")

    events, answers, thread = asyncio.run(scenario())
    ends = [event for event in events if isinstance(event, RunFinished | RunFailed)]
    assert len(ends) == 1 and events[-1] is ends[0]  # the end, once, last
    assert isinstance(ends[0], RunFinished) and ends[0].outcome == "cancelled"
    assert [event.text for event in events if isinstance(event, TextEnded)] == ["hello"]
    assert answers[0] is True  # the stop that ended it; the later ones found it ending
    assert thread is not None and thread.messages[0].content == "go"


def test_the_time_limit_that_comes_while_a_runs_end_is_written_tells_no_second_end(
        tmp_path: Path) -> None:
    """The run ended well within the server's time limit, which came while its end was being
    written: the end told is the run's own, once (not a second one, "run_timeout")."""
    async def scenario() -> list[Any]:
        store = _SlowCheckpoints(tmp_path / "threads.db")
        service = RunService(store=store, limits=ServerLimits(run_seconds=0.3))
        request = RunRequest("t1", messages=(Message(role="user", content="go"),), state={})
        live = await service.start(Agent(ScriptedModel(["hi"]), store=store), request)
        followed = asyncio.create_task(_events(live.follow(), asyncio.Event()))
        await asyncio.wait_for(store.writing.wait(), 10)
        await asyncio.sleep(0.5)  # (past the time limit)
        store.written.set()
        return await asyncio.wait_for(followed, 10)

    events = asyncio.run(scenario())
    ends = [event for event in events if isinstance(event, RunFinished | RunFailed)]
    assert len(ends) == 1 and events[-1] is ends[0]
    assert isinstance(ends[0], RunFinished) and ends[0].answer == "hi"


async def _events(follow: AsyncIterator[Any], streamed: asyncio.Event) -> list[Any]:
    """Every event of the run; `streamed` is set once its text has begun."""
    events = []
    async for event in follow:
        events.append(event)
        if isinstance(event, TextDelta):
            streamed.set()
    return events
