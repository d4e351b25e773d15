"""`MCPToolset`: the tools of one MCP server, for `Agent(tools=[...])`."""

from __future__ import annotations

import asyncio
import re
import shlex
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import mcp_types
import pydantic
from mcp import Client, MCPError, StdioServerParameters

from pyox_agents._errors import ungrouped
from pyox_agents._redact import redact_text
from pyox_agents.mcp._connection import Connection, http_transport
from pyox_agents.mcp._results import MCPTool, MCPToolError, to_result
from pyox_agents.state._validation import validation_problems
from pyox_agents.tools import Tool, ToolError

_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")


class MCPServerUnavailable(ToolError):
    """The MCP server cannot be reached: it did not start, does not answer, or died.

    Its message says why and what to check (the command, the URL, their secrets hidden); a
    tool call it ends shows the model and the person only that the server is unreachable.
    """


Approval = bool | Collection[str] | Callable[[str], bool]


class MCPToolset:
    """The tools of one MCP server, for `Agent(tools=[...])`.

    Args:
        command: the server as a command run over stdio, e.g. `[sys.executable, "server.py"]`
            (a str is split like a shell would).
        url: or the server's streamable HTTP endpoint, e.g. `"http://127.0.0.1:8000/mcp"`.
        name: names the server in errors, and prefixes its tools' names on a clash with
            another tool (`name="files"`: `read` becomes `files_read`).
        approval: which tools wait for a person before they run: True (all), a set of the
            server's tool names, or a callable `(tool_name) -> bool`.
        idempotent: which tools may run again safely (True, or a set of names): after a crash
            they are re-run; the others are put to a person, as for `@tool`s.
        timeout: seconds after which a call is stopped (its result is a timeout error); else
            the agent's `tool_timeout`.
        env: the command's extra environment variables.
        cwd: the command's working directory.
        headers: HTTP headers sent to the URL (e.g. authorization).
        connect_timeout: seconds to wait for the server to start and answer.

    Raises:
        TypeError, ValueError: neither or both of `command` and `url`, a URL that is not
            http(s), or a `name` that is not 1 to 32 letters, digits, `_` or `-`.
    """

    def __init__(self, command: Sequence[str] | str | None = None, *, url: str | None = None,
                 name: str = "mcp", approval: Approval = False,
                 idempotent: bool | Collection[str] = False, timeout: float | None = None,
                 env: Mapping[str, str] | None = None, cwd: str | None = None,
                 headers: Mapping[str, str] | None = None, connect_timeout: float = 10.0) -> None:
        if (command is None) == (url is None):
            raise TypeError("MCPToolset() takes a command (a stdio server) or url= (a "
                            "streamable HTTP server), exactly one of them")
        if isinstance(command, str):
            command = shlex.split(command)
        if command is not None and not (command and all(isinstance(a, str) for a in command)):
            raise TypeError(f"MCPToolset(command=...) takes a list of str such as "
                            f"[sys.executable, 'server.py'], got {command!r}")
        if url is not None and not re.match(r"https?://[^/]", url):
            raise ValueError(f"MCPToolset(url=...) takes the http:// or https:// URL of a "
                             f"streamable HTTP endpoint (often ending in /mcp), got {url!r}")
        for option, value in (("timeout", timeout), ("connect_timeout", connect_timeout)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                      or value <= 0):
                raise ValueError(f"MCPToolset({option}=...) is a number of seconds > 0, got "
                                 f"{value!r}")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ValueError(f"MCPToolset(name=...) must be 1 to 32 letters, digits, '_' or "
                             f"'-' (it prefixes tool names), got {name!r}")
        self.name = name
        self.command = tuple(command) if command is not None else None
        self.url = url
        self.timeout = timeout
        self._approval = approval
        self._idempotent = idempotent
        self._env, self._cwd, self._headers = env, cwd, headers
        self._connect_timeout = connect_timeout
        self._users = 0
        self._connection: Connection | None = None
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    def __repr__(self) -> str:
        where = shlex.join(self.command) if self.command else self.url
        return f"MCPToolset({where!r}, name={self.name!r})"

    async def __aenter__(self) -> MCPToolset:
        """Count one more user: the connection stays open until the last one leaves."""
        self._users += 1
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self._users = max(0, self._users - 1)
        if self._users == 0:
            await self.aclose()

    async def aclose(self) -> None:
        """Close the connection now (a stdio server's process ends)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.close()

    async def list_tools(self) -> list[Tool]:
        """The server's tools, as the agent's `Tool`s.

        Raises:
            MCPServerUnavailable: the server cannot be reached.
        """
        connection = await self._connected()
        try:
            listing = await self._listing(connection.client)
        except Exception as exc:
            raise await self._unreachable(exc, connection) from None
        return [self._tool(spec) for spec in listing]

    async def _listing(self, client: Client) -> list[mcp_types.Tool]:
        tools, cursor = [], None
        for _ in range(100):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    def _tool(self, spec: mcp_types.Tool) -> Tool:
        remote = spec.name

        async def call(**arguments: Any) -> Any:
            return await self._call(remote, arguments)

        exposed = re.sub(r"[^A-Za-z0-9_-]", "_", remote)[:64] or "tool"
        return MCPTool(name=exposed, description=spec.description or "",
                       parameters=spec.input_schema, function=call,
                       idempotent=_chosen(self._idempotent, remote),
                       approval=_chosen(self._approval, remote), timeout=self.timeout)

    async def _call(self, remote: str, arguments: Mapping[str, Any]) -> Any:
        connection = await self._connected()
        try:
            result = await connection.client.call_tool(remote, dict(arguments))
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise await self._unreachable(exc, connection) from None
            raise MCPToolError(f"the MCP server {self.name!r} refused the call of {remote!r}: "
                               f"{exc.message}") from None
        except pydantic.ValidationError as exc:
            first = next((what for _, what in validation_problems(exc, root="result")), "?")
            raise MCPToolError(f"the MCP server {self.name!r} answered {remote!r} with a "
                               f"malformed result ({first})") from None
        except Exception as exc:
            raise await self._unreachable(exc, connection) from None
        return to_result(result)

    async def _connected(self) -> Connection:
        """The open connection, connecting (again) if there is none."""
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:  # `agent.run` runs a loop per call
            self._lock = (loop, asyncio.Lock())
        async with self._lock[1]:
            connection = self._connection
            if connection is not None and not connection.usable():
                self._connection = connection = None
            if connection is None:
                connection = Connection(self._server())
                try:
                    await connection.open(self._connect_timeout)
                except Exception as exc:
                    raise self._explain(exc) from None
                self._connection = connection
            return connection

    async def _unreachable(self, exc: BaseException, connection: Connection
                           ) -> MCPServerUnavailable:
        """Close a connection that failed, so that the next call connects again (unless a
        call running meanwhile has done so already)."""
        if self._connection is connection:
            self._connection = None
        await connection.close()
        return self._explain(exc)

    def _explain(self, exc: BaseException) -> MCPServerUnavailable:
        cause = ungrouped(exc)
        what = f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
        if isinstance(cause, TimeoutError):
            what = f"no answer within {self._connect_timeout:g} s"
        if self.command is not None:
            hint = f"check the command {shlex.join(self.command)!r} starts an MCP stdio server"
        else:
            hint = f"check that the server runs and that the URL {self.url!r} is its MCP endpoint"
        return MCPServerUnavailable(
            redact_text(f"the MCP server {self.name!r} is unreachable: {what}; {hint}"),
            public_message=f"the MCP server {self.name!r} is unreachable; try again later")

    def _server(self) -> Any:
        if self.command is not None:
            return StdioServerParameters(command=self.command[0], args=list(self.command[1:]),
                                         env=dict(self._env) if self._env else None, cwd=self._cwd)
        assert self.url is not None
        return http_transport(self.url, dict(self._headers or {}))


def _chosen(choice: Approval, name: str) -> bool:
    if isinstance(choice, bool):
        return choice
    if callable(choice):
        return bool(choice(name))
    return name in choice
