"""A lean `text/event-stream` response: pre-framed chunks, keep-alive comments, a send timeout.

sse-starlette's `EventSourceResponse` starts four tasks per response (the stream, pings, a
shutdown watcher, a disconnect listener) in a task group, and takes a lock and a cancel scope
per write; with hundreds of short streams that was a third of the HTTP cost of a run
(bench/concurrency.py). This response uses one extra task, which listens for the client's
disconnect and sends a keep-alive comment after each silence of `keepalive` seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Mapping

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

__all__ = ["KEEPALIVE_FRAME", "EventStreamResponse", "SendTimeoutError"]

KEEPALIVE_FRAME = b": keep-alive\n\n"
"""An SSE comment: clients ignore it, proxies see the connection in use."""


class SendTimeoutError(TimeoutError):
    """The client did not take the next chunk within the send timeout."""


class EventStreamResponse(Response):
    """Stream `chunks` (whole SSE frames) as `text/event-stream`.

    A client that takes more than `send_timeout` seconds to accept a chunk is dropped (the
    response raises `SendTimeoutError`); a client that disconnects stops the stream. Either
    way `chunks` is closed, so its `finally` runs. `keepalive` is the longest silence before a
    keep-alive comment is sent.
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        chunks: AsyncGenerator[bytes, None],
        *,
        headers: Mapping[str, str] | None = None,
        keepalive: float = 15.0,
        send_timeout: float | None = 30.0,
    ) -> None:
        if keepalive <= 0:
            raise ValueError(f"keepalive is the seconds between keep-alive comments, > 0; got "
                             f"{keepalive!r}")
        self.chunks = chunks
        self.status_code = 200
        self.background = None
        self.keepalive = keepalive
        self.send_timeout = send_timeout
        self.init_headers({"Connection": "keep-alive", **(headers or {})})
        self._last_write = 0.0
        self._done = False
        self._stop: BaseException | None = None
        """Why the watcher stopped the writer: the client went (CancelledError) or is stuck."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code,
                    "headers": self.raw_headers})
        if scope.get("method") == "HEAD":
            await self.chunks.aclose()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        writer = asyncio.current_task()
        assert writer is not None
        self._last_write = time.monotonic()
        watcher = asyncio.create_task(self._watch(receive, send, writer))
        try:
            async for chunk in self.chunks:
                await self._write(send, chunk)
        except asyncio.CancelledError:
            if self._stop is None:
                raise
            writer.uncancel()  # the watcher's cancel, not the server's
            if isinstance(self._stop, SendTimeoutError):
                raise self._stop from None
            return  # the client went: nobody to end the response for
        finally:
            self._done = True  # the watcher stops nothing from here on
            watcher.cancel()
            await self.chunks.aclose()
            await asyncio.wait([watcher])
        failure = None if watcher.cancelled() else watcher.exception()
        if failure is not None:  # receive() or a keep-alive write failed: the server's error
            raise failure
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _write(self, send: Send, chunk: bytes) -> None:
        message = {"type": "http.response.body", "body": chunk, "more_body": True}
        try:
            async with asyncio.timeout(self.send_timeout):
                await send(message)
        except TimeoutError:
            raise SendTimeoutError(f"the client took over {self.send_timeout:g} s to accept "
                                   "the next event; it was dropped") from None
        self._last_write = time.monotonic()

    async def _watch(self, receive: Receive, send: Send, writer: asyncio.Task[object]) -> None:
        """Stop the writer when the client goes; keep a silent connection alive meanwhile."""
        while True:
            idle = time.monotonic() - self._last_write
            try:
                async with asyncio.timeout(max(self.keepalive - idle, 0.0)):
                    message = await receive()
            except TimeoutError:
                if time.monotonic() - self._last_write >= self.keepalive:
                    try:
                        await self._write(send, KEEPALIVE_FRAME)
                    except SendTimeoutError as exc:
                        self._stop_writer(writer, exc)
                        return
                continue
            if message["type"] == "http.disconnect":
                self._stop_writer(writer, asyncio.CancelledError())
                return

    def _stop_writer(self, writer: asyncio.Task[object], reason: BaseException) -> None:
        if not self._done:  # else the writer is past its last chunk: let it end the response
            self._stop = reason
            writer.cancel()
