"""`rejoin`: what a client that comes back to a thread gets from the service."""

from __future__ import annotations

import asyncio

import anyio
import pydantic
import pytest

from pyox_agents import Agent
from pyox_agents.models import ScriptedModel
from pyox_agents.service import RequestError, RunRequest, RunService, rejoin
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message
from pyox_agents.stores import MemoryStore

pytestmark = pytest.mark.anyio


class SlowStore(MemoryStore):
    """A store whose threads take a moment to load: a run is active before it starts."""

    async def aload(self, thread_id: str) -> State:
        await asyncio.sleep(0.1)
        return await super().aload(thread_id)


class Todos(pydantic.BaseModel):
    todos: list[str]


async def test_a_connect_to_a_run_that_could_not_start_does_not_wait_for_it() -> None:
    """A run refused while it opens (here a state its `state_type` refuses) ends for whoever
    began to follow it: the connect answers the thread as it is."""
    store = SlowStore()
    agent = Agent(ScriptedModel(["hi"]), store=store, state_type=Todos)
    runs = RunService(store)
    request = RunRequest("t1", messages=(Message.user("hi"),), state={"todos": 3})
    starting = asyncio.create_task(runs.start(agent, request))
    await asyncio.sleep(0.02)
    assert runs.active("t1") is not None  # taken, still opening
    with anyio.fail_after(5):
        back = await rejoin(runs, agent, "t1")
    with pytest.raises(RequestError):
        await starting
    assert back.tail is None and back.messages == []
