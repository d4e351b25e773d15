"""A "write" subagent that fails changes nothing (seed 004: "a tool that fails changes
nothing"): the changes its tools committed are taken back as one new version, which the page
sees; the model reads that they were."""

from __future__ import annotations

from typing import Any

import pytest

from pyox_agents import Agent, Message, RunContext, StateChanged, tool
from pyox_agents.models import FunctionModel, ToolCall

pytestmark = pytest.mark.anyio


def _agents(fails: bool, sibling: bool = False) -> tuple[Agent, list[list[Message]]]:
    @tool
    def add(ctx: RunContext, text: str) -> str:
        """Add `text`."""
        ctx.state["items"].append(text)
        ctx.state["count"] += 1
        return "added"

    @tool
    async def note(ctx: RunContext) -> str:
        """Write a note."""
        ctx.state["note"] = "mine"
        return "noted"

    def child_model(messages: list[Message], tools: list[Any]) -> Any:
        done = [m for m in messages if m.role == "tool"]
        if len(done) < 2:
            return ToolCall("add", {"text": f"x{len(done)}"}, id=f"a{len(done)}")
        if fails:
            raise RuntimeError("the subagent's model broke")
        return "added two"

    seen: list[list[Message]] = []

    def parent_model(messages: list[Message], tools: list[Any]) -> Any:
        seen.append(list(messages))
        if not any(m.role == "tool" for m in messages):
            calls = [ToolCall("helper", {"task": "add two"}, id="h")]
            return [*calls, ToolCall("note", {}, id="n")] if sibling else calls[0]
        return "done"

    child = Agent(FunctionModel(child_model), tools=[add], name="helper")
    parent = Agent(FunctionModel(parent_model), tools=[child.as_tool(state="write"), note])
    return parent, seen


async def test_a_failed_write_subagent_takes_its_changes_back() -> None:
    """Rule: the subagent's two commits are taken back as one version (the page sees it),
    the run's state is as before the call, and the model reads that they were taken back."""
    parent, seen = _agents(fails=True)
    events = [e async for e in parent.stream("go", state={"items": [], "count": 0})]
    changes = [e for e in events if isinstance(e, StateChanged)]
    assert len(changes) == 3 and changes[-1].call_id == "h"
    assert changes[-1].state == {"items": [], "count": 0}
    assert events[-1].state == {"items": [], "count": 0}  # type: ignore[union-attr]
    result = next(m for m in seen[-1] if m.role == "tool")
    assert "taken back" in str(result.content) and "failed" in str(result.content)


async def test_a_write_subagent_that_succeeds_keeps_its_changes() -> None:
    """Rule: only a failure takes anything back."""
    parent, _ = _agents(fails=False)
    result = await parent.arun("go", state={"items": [], "count": 0})
    assert result.state == {"items": ["x0", "x1"], "count": 2}


async def test_changes_another_tool_made_meanwhile_are_never_taken_back() -> None:
    """Rule: a sibling tool's change stays; when one was committed after the subagent's
    first change, the subagent's changes stay too (they cannot be kept apart), and the model
    reads so."""
    parent, seen = _agents(fails=True, sibling=True)
    result = await parent.arun("go", state={"items": [], "count": 0})
    assert result.state["note"] == "mine"
    words = str(next(m for m in seen[-1] if m.role == "tool" and m.name == "helper").content)
    if result.state["items"]:
        assert "stay" in words
    else:
        assert "taken back" in words
