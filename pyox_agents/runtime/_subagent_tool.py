"""An agent as a tool of another (`Agent.as_tool`): the tool that runs it as a subagent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pyox_agents.runtime._parts import AgentParts
from pyox_agents.runtime._subagents import run_subagent as _run_child
from pyox_agents.tools import RunContext, Tool, make_tool

__all__ = ["as_tool_name", "subagent_tool", "task_tool"]


def subagent_tool(subagent: AgentParts, name: str | None, description: str | None,
                  state: Literal["read", "write"] | None) -> Tool:
    """The tool that gives `subagent` a task (see `Agent.as_tool`).

    Raises:
        ValueError: no name, or an unknown `state`.
    """
    tool_name = as_tool_name(name or subagent.name, state, "Agent(name=...)")

    async def run_subagent(ctx: RunContext, task: str) -> Any:
        """Args:
        task: What the subagent should do, with everything it needs to know.
        """
        return await _run_child(ctx, subagent._setup, subagent._paused, task, tool_name,
                                state, (subagent.tools, subagent.toolsets))

    return task_tool(run_subagent, tool_name, description)


def as_tool_name(name: str | None, state: object, create: str) -> str:
    """The name of an agent made a tool (`as_tool`), once it and `state` are checked; `create`
    says how the agent is given a name.

    Raises:
        ValueError: no name, or an unknown `state`.
    """
    if state not in (None, "read", "write"):
        raise ValueError(f'as_tool(state=...) is None, "read" or "write", got {state!r}')
    if not name:
        raise ValueError(f"as_tool() needs a name: pass name=... or create {create}")
    return name


def task_tool(run: Callable[[RunContext, str], Awaitable[Any]], name: str,
              description: str | None) -> Tool:
    """The tool `run` makes of an agent: the model gives it a task, it answers."""
    return make_tool(run, name=name,
                     description=description or f"Give the {name} agent a task; it answers.",
                     local=globals())
