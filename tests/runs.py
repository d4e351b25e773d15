"""Helpers to run an agent in tests and read its events."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jsonpatch

from pyox_agents import Agent, RunFinished, RuntimeEvent, StateChanged, Tool, ToolResult
from pyox_agents.models import ScriptedModel
from pyox_agents.models.scripted import ReplySpec


async def collect(agent: Agent, prompt: str = "go", **kwargs: Any) -> list[RuntimeEvent]:
    """Every event of one run, in order."""
    return [event async for event in agent.stream(prompt, **kwargs)]


async def run_script(
    tools: Sequence[Tool], script: Sequence[ReplySpec], state: Any
) -> list[RuntimeEvent]:
    """Run a ScriptedModel agent with `tools` on `state` and return its events."""
    agent = Agent(model=ScriptedModel([*script, "done"]), tools=tools)
    return await collect(agent, state=state)


def deltas(events: Sequence[RuntimeEvent]) -> list[StateChanged]:
    return [e for e in events if isinstance(e, StateChanged)]


def results(events: Sequence[RuntimeEvent]) -> dict[str, ToolResult]:
    return {e.call_id: e for e in events if isinstance(e, ToolResult)}


def finished(events: Sequence[RuntimeEvent]) -> RunFinished:
    last = events[-1]
    assert isinstance(last, RunFinished), last
    return last


def replay(state: Any, events: Sequence[RuntimeEvent]) -> Any:
    """Apply every StateChanged delta in order with jsonpatch, checking each event's state."""
    for event in deltas(events):
        state = jsonpatch.apply_patch(state, list(event.delta))
        assert state == event.state
    return state
