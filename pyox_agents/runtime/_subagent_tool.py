"""An agent as a tool of another (`Agent.as_tool`): the tool that runs it as a subagent."""

from __future__ import annotations

from typing import Any, Literal

from pyox_agents.runtime._parts import AgentParts
from pyox_agents.runtime._subagents import run_subagent as _run_child
from pyox_agents.tools import RunContext, Tool, make_tool

__all__ = ["subagent_tool"]


def subagent_tool(
    subagent: AgentParts,
    name: str | None,
    description: str | None,
    state: Literal["read", "write"] | None,
) -> Tool:
    """The tool that gives `subagent` a task (see `Agent.as_tool`).

    Raises:
        ValueError: no name, or an unknown `state`.
    """
    if state not in (None, "read", "write"):
        raise ValueError(f'as_tool(state=...) is None, "read" or "write", got {state!r}')
    tool_name = name or subagent.name
    if not tool_name:
        raise ValueError("as_tool() needs a name: pass name=... or create Agent(name=...)")

    async def run_subagent(ctx: RunContext, task: str) -> Any:
        """Args:
        task: What the subagent should do, with everything it needs to know.
        """
        return await _run_child(ctx, subagent._setup, subagent._paused, task, tool_name,
                                state, (subagent.tools, subagent.toolsets))

    return make_tool(
        run_subagent,
        name=tool_name,
        description=description or f"Give the {tool_name} agent a task; it answers.",
        local=globals(),
    )
