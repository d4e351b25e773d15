"""A lean `text/event-stream` response: pre-framed chunks, keep-alive comments, a send timeout.

sse-starlette's `EventStreamResponse` starts four tasks per response (the stream, pings, a
shutdown watcher, a disconnect listener) in a task group, and takes a lock and a cancel scope
per write; with hundreds of short streams that was a third of the HTTP cost of a run
(bench/concurrency.py). This response starts none. It listens for the client's disconnect with
ASGI's `receive()` driven by the callbacks of what it waits on (`Driven`), and one timer sends
a keep-alive comment after each silence of `keepalive` seconds and drops a client whose write
in progress is older than `send_timeout`.

None of the three costs anything per event: a write only notes its start time (no timer, no
cancel scope), and the timer fires once per silence or send timeout, not once per event, to
look at the age of the write in progress (a stuck write is seen exactly `send_timeout` after it
started).

When the chunks are `AtOnce` (a live run's frames), the response takes each chunk that comes
while it waits in the task that produced it (the run's) and writes it there: ASGI's `send` is a
coroutine, driven by hand, which returns at once unless the transport is paused. Then the rest
of that write goes on in a task of its own, and every later chunk comes the ordinary way, after
it. A slow stream's token then costs one wake-up of the loop (the run's), not two.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from types import CoroutineType
from typing import Any, Protocol

from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from pyox_agents._deadlines import Deadline, call_later
from pyox_agents.adapters import AtOnce, at_once_of
from pyox_agents.server._driven import Driven, rest_of

__all__ = ["KEEPALIVE_FRAME", "Chunks", "EventStreamResponse", "SendTimeoutError"]

KEEPALIVE_FRAME = b": keep-alive\n\n"
"""An SSE comment: clients ignore it, proxies see the connection in use."""


_ENCODED_HEADERS: dict[tuple[tuple[str, str], ...], tuple[tuple[bytes, bytes], ...]] = {}
"""The raw headers of each set of response headers seen (up to 64 sets)."""


class SendTimeoutError(TimeoutError):
    """The client did not take the next chunk within the send timeout."""


class Chunks(Protocol):
    """What an `EventStreamResponse` streams: whole SSE frames, from an iterator it closes."""

    def __aiter__(self) -> AsyncIterator[bytes]:
        """The chunks, in order."""
        ...

    def aclose(self) -> Awaitable[object]:
        """Stop: no more chunks are read."""
        ...


class EventStreamResponse(Response):
    """Stream `chunks` (whole SSE frames) as `text/event-stream`.

    A client that takes more than `send_timeout` seconds to accept a chunk is dropped (the
    response raises `SendTimeoutError`); a client that disconnects stops the stream. Either
    way `chunks` is closed, so its `finally` runs, and then `on_close` is awaited, if given.
    `keepalive` is the longest silence before a keep-alive comment is sent.
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        chunks: Chunks,
        *,
        headers: Mapping[str, str] | None = None,
        keepalive: float = 15.0,
        send_timeout: float | None = 30.0,
        on_close: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        if keepalive <= 0:
            raise ValueError(f"keepalive is the seconds between keep-alive comments, > 0; got "
                             f"{keepalive!r}")
        self.chunks = chunks
        self.status_code = 200
        self.background = None
        self.keepalive = keepalive
        self.send_timeout = send_timeout
        self.on_close = on_close
        self.init_headers({"Connection": "keep-alive", **(headers or {})})
        self._write_start = 0.0
        """When the last write (or the one in progress) started."""
        self._writing = False
        """A write is in progress: the client has not taken its chunk yet."""
        self._done = False
        self._stop: BaseException | None = None
        """Why the writer was stopped: the client went (CancelledError), is stuck
        (`SendTimeoutError`), or a write in the run's task failed (its error)."""
        self._direct: AtOnce[bytes] | None = None
        """The chunks, when they can be written in the task that makes them (`AtOnce`)."""
        self._in_flight: asyncio.Future[None] | None = None
        """The rest of a write started in that task, which the transport made wait."""
        self._send: Send = _unsent
        """The response's ASGI `send`, once it has started."""
        self._writer: asyncio.Task[Any] | None = None
        self._receive: Receive | None = None
        self._listening: Driven[Message] | None = None
        """The wait for the client's disconnect (ASGI `receive()`), while the response streams."""
        self._timer: Deadline | None = None
        """When to look at the silence and at the write in progress again (`_look`)."""
        self._failure: BaseException | None = None
        """`receive()` failed: the server's error, raised once the stream has ended."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code,
                    "headers": self.raw_headers})
        if scope.get("method") == "HEAD":
            await self.chunks.aclose()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        writer = asyncio.current_task()
        assert writer is not None
        self._write_start = time.monotonic()
        self._send, self._writer, self._receive = send, writer, receive
        self._direct = at_once_of(self.chunks)
        if self._direct is not None:
            self._direct.at_once = self._write_now
        self._listening = Driven(receive(), self._heard)
        self._look()
        try:
            async for chunk in self.chunks:  # per event: a clock read, no timer
                if self._in_flight is not None:  # a chunk written at once goes out first
                    await asyncio.wait([self._in_flight])
                self._write_start = time.monotonic()
                self._writing = True
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                self._writing = False
            if self._in_flight is not None:
                await asyncio.wait([self._in_flight])
        except asyncio.CancelledError:
            if self._stop is None:
                raise
            writer.uncancel()  # the client's or the timer's cancel (or a failed write's)
            if isinstance(self._stop, asyncio.CancelledError):
                return  # the client went: nobody to end the response for
            raise self._stop from None
        finally:
            self._done = True  # nothing stops the writer from here on
            if self._direct is not None:
                self._direct.at_once = None
            if self._in_flight is not None:
                self._in_flight.cancel()
            if self._timer is not None:
                self._timer.cancel()
            if self._listening is not None:
                self._listening.close()
            await self.chunks.aclose()
            if self.on_close is not None:
                await self.on_close()
        if self._failure is not None:  # receive() failed: the server's error
            raise self._failure
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def init_headers(self, headers: Mapping[str, str] | None = None) -> None:
        """Starlette's, with the encoded headers of each set of headers shared by every response
        that has it (a handful of sets: the routes'); each response keeps a list of its own,
        which middleware may change."""
        key = tuple(headers.items()) if headers else ()
        encoded = _ENCODED_HEADERS.get(key)
        if encoded is None:
            super().init_headers(headers)
            if len(_ENCODED_HEADERS) < 64:
                _ENCODED_HEADERS[key] = tuple(self.raw_headers)
            return
        self.raw_headers = list(encoded)

    def _timed_out(self) -> SendTimeoutError:
        return SendTimeoutError(f"the client took over {self.send_timeout:g} s to accept the "
                                "next event; it was dropped")

    def _next_look(self) -> float | SendTimeoutError | None:
        """Seconds until `_look` must look again; a `SendTimeoutError` when the write in
        progress is too old; None when a keep-alive is due now."""
        age = time.monotonic() - self._write_start
        limit = self.send_timeout
        if self._writing:  # the write in progress: its age, not the silence, matters
            if limit is None:
                return self.keepalive
            return self._timed_out() if age >= limit else limit - age
        if age >= self.keepalive:
            return None
        # a write that starts meanwhile is looked at by its deadline at the latest
        return self.keepalive - age if limit is None else min(self.keepalive - age, limit)

    def _heard(self, message: Message | None, failure: BaseException | None) -> None:
        """What `receive()` gave: the client went (stop the writer), more of the request's body
        (listen again), or an error of the server's (raised once the stream has ended)."""
        self._listening = None
        if self._done:
            return
        if failure is not None:
            self._failure = failure
        elif message is not None and message["type"] == "http.disconnect":
            assert self._writer is not None
            self._stop_writer(self._writer, asyncio.CancelledError())
        else:
            assert self._receive is not None
            self._listening = Driven(self._receive(), self._heard)

    def _look(self) -> None:
        """Drop a client whose write in progress is older than the send timeout; after a
        silence of `keepalive` seconds, write a keep-alive comment; then come back when the
        next of the two may be due."""
        self._timer = None
        if self._done:
            return
        wait = self._next_look()
        if isinstance(wait, SendTimeoutError):
            assert self._writer is not None
            self._stop_writer(self._writer, wait)
            return
        if wait is None:
            self._write_now(KEEPALIVE_FRAME)
            if self._done:
                return
            wait = self._next_look()
        self._timer = call_later(wait if isinstance(wait, float) else 0.0, self._look)

    def _stop_writer(self, writer: asyncio.Task[Any], reason: BaseException) -> None:
        if not self._done and self._stop is None:  # else the writer is past its last chunk
            self._stop = reason
            writer.cancel()

    def _write_now(self, chunk: bytes) -> None:
        """Write `chunk` here and now, without the writer: a chunk in the task that made it,
        while the writer waits for it (`AtOnce`), or a keep-alive comment."""
        self._write_start = time.monotonic()
        write = self._send({"type": "http.response.body", "body": chunk, "more_body": True})
        if type(write) is CoroutineType:  # (an ABC's isinstance costs more than the write)
            try:
                waiting = write.send(None)
            except StopIteration:
                return  # written
            except Exception as exc:
                self._failed(exc)
                return
            rest: Awaitable[None] = rest_of(write, waiting)
        else:
            rest = write
        # the transport is paused: the write goes on in its own task; no other starts meanwhile
        self._writing = True
        if self._direct is not None:
            self._direct.at_once = None
        self._in_flight = asyncio.ensure_future(rest)
        self._in_flight.add_done_callback(self._written)

    def _written(self, write: asyncio.Future[None]) -> None:
        """The write that the transport made wait is done."""
        self._in_flight = None
        self._writing = False
        if write.cancelled():
            return
        failure = write.exception()
        if failure is not None:
            self._failed(failure)
        elif not self._done and self._direct is not None:
            self._direct.at_once = self._write_now

    def _failed(self, failure: BaseException) -> None:
        """A write in the run's task failed: the writer raises its error, as for its own."""
        if self._direct is not None:
            self._direct.at_once = None
        assert self._writer is not None
        self._stop_writer(self._writer, failure)


async def _unsent(message: Mapping[str, Any]) -> None:
    raise RuntimeError("the response has not started: nothing can be written yet")
