"""Real MCP servers for the tests: the script `mcp_server.py` over stdio, or over streamable HTTP
as a subprocess on 127.0.0.1 with a free port."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyox_agents import ToolCall
from pyox_agents.events import ToolResult
from pyox_agents.mcp import MCPToolset

SERVER = str(Path(__file__).with_name("mcp_server.py"))


def stdio(name: str = "remote", **options: Any) -> MCPToolset:
    """A toolset on a fresh stdio server process."""
    return MCPToolset(command=[sys.executable, SERVER], name=name, **options)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class HttpServer:
    """A streamable HTTP MCP server running in a subprocess."""

    process: subprocess.Popen[bytes]
    url: str

    def kill(self) -> None:
        """SIGKILL the server, as a crash would."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()


@contextlib.contextmanager
def http_server() -> Iterator[HttpServer]:
    """Start the test server over streamable HTTP; stop it at the end."""
    port = free_port()
    process = subprocess.Popen([sys.executable, SERVER, "http", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the MCP test server did not start on port {port}")
            time.sleep(0.05)
        yield HttpServer(process, f"http://127.0.0.1:{port}/mcp")
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def results(events: Any) -> list[ToolResult]:
    """The tool results among a run's events."""
    return [event for event in events if isinstance(event, ToolResult)]


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name, arguments)
