"""A small MCP server for the tests: `python mcp_server.py` (stdio) or `... http PORT`.

It is a real `MCPServer` (FastMCP in mcp 1.x) from the `mcp` package, with tools that add
numbers, return structured content, raise, sleep, and one named like a local tool.
"""

from __future__ import annotations

import base64
import os
import sys

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import BlobResourceContents, EmbeddedResource, ResourceLink, TextResourceContents

server = MCPServer("test-tools")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def describe_point(x: float, y: float) -> dict[str, float]:
    """A point as structured content."""
    return {"x": x, "y": y, "distance": (x * x + y * y) ** 0.5}


@server.tool()
def fail(reason: str) -> str:
    """Always raises."""
    raise ToolError(f"cannot do it: {reason}")


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    import anyio

    await anyio.sleep(seconds)
    return "woke up"


@server.tool()
async def hang(marker: str) -> str:
    """Create the file `marker`, then wait until this server is stopped."""
    import anyio

    await anyio.Path(marker).write_text("running")
    await anyio.sleep_forever()
    return "never"


@server.tool()
async def once(marker: str) -> str:
    """Hang on the first call (after creating `marker`); answer on the calls after it."""
    import anyio

    if await anyio.Path(marker).exists():
        return "ran again"
    await anyio.Path(marker).write_text("running")
    await anyio.sleep_forever()
    return "never"


@server.tool()
def die() -> str:
    """Kill this server's process while the call runs."""
    os._exit(3)


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool()
def picture():  # type: ignore[no-untyped-def]  # no annotation: content blocks, not structured
    """Text and an image."""
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )
    return ["a red dot", Image(data=png, format="png")]


@server.tool()
def resources():  # type: ignore[no-untyped-def]  # no annotation: content blocks
    """An embedded text resource, a binary one, and a link."""
    return [
        EmbeddedResource(resource=TextResourceContents(uri="file:///a.txt", text="alpha")),
        EmbeddedResource(resource=BlobResourceContents(uri="file:///b.bin", blob="AAEC",
                                                       mime_type="application/octet-stream")),
        ResourceLink(name="c", uri="file:///c.txt"),
    ]


@server.tool()
def lookup(key: str) -> str:
    """Named like a local tool of the tests' agents."""
    return f"remote {key}"


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
