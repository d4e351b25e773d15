"""A real uvicorn server on 127.0.0.1 for an ASGI app, in the test's own event loop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import httpx
import uvicorn


@contextlib.asynccontextmanager
async def serving(app: Any, *, log_level: str = "warning", backlog: int = 2048,
                  graceful: int = 1, keep_alive: int = 5) -> AsyncIterator[str]:
    """Serve `app` until the block ends; yields its base URL. `graceful` is the seconds open
    streams get at shutdown; `backlog` how many connections may wait to be accepted;
    `keep_alive` how long an idle connection stays open (uvicorn's default, 5 s)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level=log_level, lifespan="on",
                                           backlog=backlog, timeout_graceful_shutdown=graceful,
                                           timeout_keep_alive=keep_alive))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.005)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
        sock.close()


def frames(body: str) -> list[dict[str, Any]]:
    """The JSON events of an SSE body, whatever its line endings (see test_server's LF test)."""
    text = body.replace("\r\n", "\n")
    out = []
    for frame in text.split("\n\n"):
        data = [line[5:].removeprefix(" ") for line in frame.split("\n")
                if line.startswith("data:")]
        if data:
            out.append(json.loads("\n".join(data)))
    return out


async def post_run(client: httpx.AsyncClient, url: str, body: dict[str, Any]
                   ) -> tuple[httpx.Response, list[dict[str, Any]]]:
    """POST one AG-UI run and read its whole stream."""
    response = await client.post(url, json=body, timeout=30)
    return response, frames(response.text) if response.status_code == 200 else []
