"""A run that has ended is freed at once, by reference counting: no cycle keeps its events.

A server holds thousands of runs open, and they end together (a burst, the same model's pace).
What an ended run kept (every event, the reply's text) must go the moment its last reader is
done, not at the next full collection of the cyclic garbage collector, which comes rarely in a
server that tunes it: ended runs would pile up on top of the open ones. So a follower that has
read a run to its end lets go of it, and the run of it.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents import Agent
from pyox_agents.server import create_app
from pyox_agents.service._live import LiveRun
from tests.ag_ui.helpers import GatedModel
from tests.ag_ui.servers import serving

pytestmark = pytest.mark.anyio


@pytest.fixture
def no_collection() -> Iterator[None]:
    """The cyclic garbage collector off: what is freed, reference counting freed."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


AG_UI = {"threadId": "t-freed", "runId": "r1", "state": {"items": []},
         "messages": [{"id": "u1", "role": "user", "content": "hi"}], "tools": [], "context": [],
         "forwardedProps": {}}
AI_SDK = {"id": "t-freed", "trigger": "submit-message",
          "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]}


@pytest.mark.parametrize(("route", "body"), [("ag-ui", AG_UI), ("ai-sdk", AI_SDK)])
async def test_an_ended_run_is_freed_without_a_garbage_collection(
        no_collection: None, route: str, body: dict[str, Any]) -> None:
    gate = anyio.Event()
    app = create_app({"a": Agent(GatedModel(gate))})
    async with serving(app) as url, httpx.AsyncClient(timeout=10) as client:
        async with client.stream("POST", f"{url}/agents/a/{route}", json=body) as response:
            lines = response.aiter_lines()
            async for line in lines:
                if "first " in line:
                    break
            live = app.state.pyox.runs.active("t-freed")
            assert isinstance(live, LiveRun)
            ended = weakref.ref(live)
            del live
            gate.set()
            rest = [line async for line in lines]
        assert any("second" in line for line in rest)
        for _ in range(100):  # the server's side of the response ends just after the client's
            if ended() is None:
                break
            await asyncio.sleep(0.01)
        assert ended() is None, [type(r).__name__ for r in gc.get_referrers(ended())]
