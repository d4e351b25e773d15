"""MCP tools: `MCPToolset` lists the tools of an MCP server as the agent's tools.

    from pyox_agents.mcp import MCPToolset

    files = MCPToolset(command=["uvx", "mcp-server-filesystem", "."], name="files",
                       approval={"write_file"}, idempotent={"read_file"})
    agent = Agent(model, tools=[my_tool, files])

A server is a command run over stdio, or a streamable HTTP URL. The connection opens when a run
starts and closes when it ends; enter the toolset (`async with files:`) or the agent
(`async with agent:`) to keep one connection for many runs. Needs the `mcp` extra:
`pip install "pyox-agents[mcp]"`.

Results: a call's structured content is its result (JSON) when the server sends one, else its
text blocks joined by newlines. Images, audio and binary resources are not shown to the model:
each becomes a line such as `[image/png image, 70 bytes, not shown]`; a resource link becomes
`[resource <uri>]`. A result with `isError` is an error result the model reads. A server that
cannot start, does not answer or dies mid-call gives the call an error result ("the MCP server
'files' is unreachable: ...") and the run goes on; the next call connects again.
"""

from __future__ import annotations

try:
    import mcp  # noqa: F401  (the SDK: checked here, so a missing extra says what to install)
except ImportError as exc:
    raise ImportError(
        f"pyox_agents.mcp needs the MCP SDK, which is not installed ({exc}); install it with: "
        'pip install "pyox-agents[mcp]"') from exc

from pyox_agents.mcp._results import MCPToolError
from pyox_agents.mcp._toolset import MCPServerUnavailable, MCPToolset

__all__ = ["MCPServerUnavailable", "MCPToolError", "MCPToolset"]
