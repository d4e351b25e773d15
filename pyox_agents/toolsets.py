"""Toolsets: sources of tools that are listed when a run starts, such as MCP servers.

`Agent(tools=[...])` takes `@tool`s and toolsets side by side. When a run starts, the agent
enters each toolset (`async with`, counted: a toolset entered by you, or by `async with agent`,
stays connected between runs; otherwise it connects for the run and closes after it) and asks
it for its tools with `await toolset.list_tools()`. Every rule of the agent applies to them as
to its own tools: permissions, approval, timeouts, budgets, the audit chain.

Names: a toolset's tool keeps its name unless an agent's own tool or a tool of another toolset
has it; then it is `<toolset name>_<tool name>` (every toolset that has the name prefixes it,
so the result does not depend on the order of the toolsets).

A toolset that cannot list its tools (an MCP server that does not start or answer) does not
stop the run: its tools are missing from that run, a warning is logged on the
`pyox_agents.toolsets` logger, and the model is told so in the app's context lines.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, Protocol, runtime_checkable

from pyox_agents.tools import Tool

__all__ = ["Toolset", "opened"]

_log = logging.getLogger(__name__)


@runtime_checkable
class Toolset(Protocol):
    """What `Agent(tools=[...])` accepts besides `@tool`s: tools listed when a run starts.

    `name` prefixes its tools' names on a clash. Entering it (`async with`) may connect; it
    counts its users, so nested entries share one connection. `list_tools` returns its tools
    (and connects if needed). `MCPToolset` (`pyox_agents.mcp`) is one.
    """

    name: str

    async def __aenter__(self) -> Any: ...

    async def __aexit__(self, *exc_info: Any) -> Any: ...

    async def list_tools(self) -> Sequence[Tool]: ...


@asynccontextmanager
async def opened(own: Mapping[str, Tool], toolsets: Sequence[Toolset]
                 ) -> AsyncIterator[tuple[dict[str, Tool], list[str]]]:
    """Enter `toolsets` for one run; yield the run's tools and notes for the model.

    The tools are `own` plus each toolset's, renamed on a clash (see the module). A toolset
    that fails to list its tools is left out, with a logged warning and a note saying so.
    """
    async with AsyncExitStack() as stack:
        listed: dict[str, Sequence[Tool]] = {}
        notes: list[str] = []
        for toolset in toolsets:
            try:
                await stack.enter_async_context(toolset)
                listed[toolset.name] = list(await toolset.list_tools())
            except Exception as exc:
                _log.warning("the tools of %r are left out of this run: %s", toolset.name, exc)
                notes.append(f"the tools of {toolset.name!r} are not available in this run: "
                             f"{exc}")
        tools, dropped = merge(own, listed)
        notes.extend(dropped)
        yield tools, notes


def merge(own: Mapping[str, Tool], listed: Mapping[str, Sequence[Tool]]
          ) -> tuple[dict[str, Tool], list[str]]:
    """`own` plus the toolsets' tools (by toolset name), renamed on a clash; and the notes
    about tools left out because even their prefixed name was taken."""
    count = Counter(tool.name for tools in listed.values() for tool in tools)
    merged = dict(own)
    notes: list[str] = []
    for prefix, tools in listed.items():
        for tool in tools:
            name = tool.name
            if name in own or count[name] > 1:
                name = f"{prefix}_{name}"[:64]
            if name in merged:
                _log.warning("tool %r of %r is left out: the name %r is taken", tool.name,
                             prefix, name)
                notes.append(f"the tool {tool.name!r} of {prefix!r} is not available: its "
                             f"name {name!r} is taken by another tool")
                continue
            merged[name] = tool if name == tool.name else dataclasses.replace(tool, name=name)
    return merged, notes
