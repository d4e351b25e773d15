"""One open connection to an MCP server, over stdio or streamable HTTP."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)  # a server may hold a response stream open


class Connection:
    """One open MCP client, held by a task of its own, so that whichever task closes it, the
    task that opened the client's streams and processes is the one that closes them."""

    def __init__(self, server: Any) -> None:
        self._server = server
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._loop = asyncio.get_running_loop()
        self._ready: asyncio.Future[Client] = self._loop.create_future()
        self.client: Client

    async def open(self, seconds: float) -> None:
        """Connect, within `seconds`."""
        self._task = asyncio.create_task(self._hold(self._ready),
                                         name="pyox-agents MCP connection")
        try:
            with anyio.fail_after(seconds):
                self.client = await asyncio.shield(self._ready)
        except BaseException:
            await self.close()
            raise

    async def _hold(self, ready: asyncio.Future[Client]) -> None:
        try:
            async with Client(self._server) as client:
                ready.set_result(client)
                await self._stop.wait()
        except Exception as exc:  # ends this task quietly; an opener still waiting gets it
            if not ready.done():
                ready.set_exception(exc)
        except BaseException:
            if not ready.done():
                ready.cancel()
            raise

    def usable(self) -> bool:
        """Whether the connection is open, in the running event loop."""
        return (self._task is not None and not self._task.done()
                and self._loop is asyncio.get_running_loop())

    async def close(self) -> None:
        """Close the client (a stdio server's process ends); at once if still connecting.

        A cancellation of the caller (e.g. a run's task cancelled while its toolsets close)
        waits for the close to finish and is raised after it: cut short, the server's process
        would be left running, unreaped, once the event loop ends."""
        task = self._task
        if task is None or task.done() or self._loop is not asyncio.get_running_loop():
            return
        self._stop.set()
        if not self._ready.done():
            task.cancel()
        cancelled = False
        deadline: float | None = self._loop.time() + 10
        with anyio.CancelScope(shield=True):  # shields from anyio's scopes, not task.cancel()
            while not task.done():
                timeout = None if deadline is None else max(0.0, deadline - self._loop.time())
                try:
                    await asyncio.wait([task], timeout=timeout)
                except asyncio.CancelledError:
                    cancelled = True
                    continue
                if not task.done():  # past the deadline: stop it at once
                    task.cancel()
                    deadline = None
        if cancelled:
            raise asyncio.CancelledError


@contextlib.asynccontextmanager
async def http_transport(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    async with (httpx2.AsyncClient(headers=headers, timeout=_HTTP_TIMEOUT) as http,
                streamable_http_client(url, http_client=http) as streams):
        yield streams
