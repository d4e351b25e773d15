"""How a started run's events come to a reader of `RunHandle.batches()`: its start at once, then
everything it emits until it next waits as one batch (a server writes each batch in one go: a
tool's result and state change go out with the reply after them, not in a write of their own)."""

from __future__ import annotations

import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.events import (
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    ToolCallEnded,
    ToolResult,
)
from pyox_agents.models import ScriptedModel, ToolCall

pytestmark = pytest.mark.anyio


@tool
def add(ctx: RunContext, text: str) -> str:
    """Add `text` to the list (a sync tool: the run waits for its worker thread)."""
    ctx.state["items"].append(text)
    return "added"


def agent() -> Agent:
    return Agent(ScriptedModel([ToolCall("add", {"text": "a"}), "done"]), tools=[add])


async def test_what_a_run_emits_between_two_waits_comes_as_one_batch() -> None:
    """Rule: the run's start comes alone, at once; then each batch holds what the run emitted
    until it waited: the call up to the tool's wait, then its result, its state change and the
    rest of the run to its end, together. The events and their order are the stream's."""
    handle = agent().start("go", state={"items": []})
    batches: list[list[RuntimeEvent]] = [batch async for batch in handle.batches()]
    assert [type(event) for event in batches[0]] == [RunStarted]
    (with_call,) = [batch for batch in batches if any(isinstance(e, ToolCallEnded)
                                                      for e in batch)]
    assert not any(isinstance(e, ToolResult) for e in with_call)  # the run waited after it
    (after,) = [batch for batch in batches if any(isinstance(e, ToolResult) for e in batch)]
    assert isinstance(after[0], ToolResult) and isinstance(after[1], StateChanged)
    assert isinstance(after[-1], RunFinished)  # one batch to the end: no wait after the tool
    assert after[-1].state == {"items": ["a"]}

    streamed = [event async for event in agent().stream("go", state={"items": []})]
    flat = [event for batch in batches for event in batch]
    assert [type(e) for e in flat] == [type(e) for e in streamed]
