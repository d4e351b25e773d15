"""A plain `text/event-stream` response: pre-framed chunks, keep-alive comments, a send timeout.

The response's own task does every write: each chunk as it comes, a keep-alive comment when no
chunk came for `keepalive` seconds, each write bounded by `send_timeout`. One timer per stream
(`_Clock`) keeps both, re-armed once a `keepalive` or when it is due, not once per chunk (a
paced stream writes a token every few milliseconds: two `asyncio.timeout`s a chunk were a
tenth of the server's CPU): when the stream was silent long enough it ends the writer's wait
for the next chunk, and the writer sends a keep-alive comment; when a write has waited past
`send_timeout` it ends the writer's wait with a `TimeoutError`. No timer callback writes to the
socket, and the server's `send` is only ever awaited, in that task: a middleware's `send`
(Starlette's `BaseHTTPMiddleware` hands it to a memory stream) needs a task. Beside it, one
task listens for the client's disconnect. Chunks whose wait may not be cancelled (an async
generator that is cancelled is over) are read ahead in a task of their own (`_ReadAhead`); a
run's log is read in the writer's task. sse-starlette's response runs four tasks and takes a
lock and a cancel scope per write.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Protocol

from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from pyox_agents._errors import PyoxError

__all__ = ["KEEPALIVE_FRAME", "Chunks", "EventStreamResponse", "SendTimeoutError", "check_times"]

KEEPALIVE_FRAME = b": keep-alive\n\n"
"""An SSE comment: clients ignore it, proxies see the connection in use."""


_ENCODED_HEADERS: dict[tuple[tuple[str, str], ...], tuple[tuple[bytes, bytes], ...]] = {}
"""The raw headers of each set of response headers seen (up to 64 sets)."""


class SendTimeoutError(PyoxError, TimeoutError):
    """The client did not take the next chunk within the send timeout."""


class Chunks(Protocol):
    """What an `EventStreamResponse` streams: whole SSE frames, from an iterator it closes.

    An iterator with a true `cancel_safe` attribute is read in the response's own task: its
    `__anext__` may be cancelled while it waits (for a keep-alive) and is then called again,
    losing nothing. Any other (an async generator) is read ahead in a task of its own.
    """

    def __aiter__(self) -> AsyncIterator[bytes]:
        """The chunks, in order."""
        ...

    def aclose(self) -> Awaitable[object]:
        """Stop: no more chunks are read."""
        ...


def check_times(keepalive: float, send_timeout: float | None) -> None:
    """Refuse a `keepalive` that is not a number of seconds > 0, or a `send_timeout` that is
    not None nor one >= 0 (NaN: neither).

    Raises:
        ValueError: saying which, and what it got.
    """
    if not keepalive > 0:
        raise ValueError(f"keepalive is the seconds between keep-alive comments, > 0; got "
                         f"{keepalive!r}")
    if send_timeout is not None and not send_timeout >= 0:
        raise ValueError(f"send_timeout is the seconds a client may take to accept a chunk, "
                         f">= 0, or None for no limit; got {send_timeout!r}")


class EventStreamResponse(Response):
    """Stream `chunks` (whole SSE frames) as `text/event-stream`.

    A client that takes more than `send_timeout` seconds to accept a chunk is dropped (the
    response raises `SendTimeoutError`); a client that disconnects stops the stream. Either
    way `chunks` is closed, so its `finally` runs, and then `on_close` is awaited, if given.
    `keepalive` is the longest silence before a keep-alive comment is sent.
    """

    media_type = "text/event-stream"

    def __init__(self, chunks: Chunks, *, headers: Mapping[str, str] | None = None,
                 keepalive: float = 15.0, send_timeout: float | None = 30.0,
                 on_close: Callable[[], Awaitable[object]] | None = None) -> None:
        check_times(keepalive, send_timeout)
        self.chunks = chunks
        self.status_code = 200
        self.background = None
        self.keepalive = keepalive
        self.send_timeout = send_timeout
        self.on_close = on_close
        self.init_headers({"Connection": "keep-alive", **(headers or {})})
        self._failure: BaseException | None = None
        """`receive()` failed: the server's error, raised once the stream has ended."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code,
                    "headers": self.raw_headers})
        if scope.get("method") == "HEAD":
            await self.chunks.aclose()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        chunks: Chunks = self.chunks if getattr(self.chunks, "cancel_safe", False) \
            else _ReadAhead(self.chunks)
        clock = _Clock(self.keepalive, self.send_timeout)
        listener = asyncio.create_task(self._listen(receive, clock),
                                       name="event stream: listen for a disconnect")
        try:
            await self._write(chunks, send, clock)
        finally:
            listener.cancel()
            await asyncio.wait((listener,))
            await chunks.aclose()
            if self.on_close is not None:
                await self.on_close()
        if clock.gone:  # nobody to end the response for
            return
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

    async def _write(self, chunks: Chunks, send: Send, clock: _Clock) -> None:
        """Write each chunk as it comes, and a keep-alive comment after each silence of
        `keepalive` seconds, until the chunks end (or fail: their error is raised here), or
        the client goes."""
        task, reads = clock.task, chunks.__aiter__()
        try:
            async with asyncio.timeout(None) as clock.limit:
                while True:
                    try:
                        chunk = await anext(reads)
                    except StopAsyncIteration:
                        return
                    except asyncio.CancelledError:
                        if not clock.silent or task.uncancel() > 0:  # (not the clock's alone)
                            raise
                        chunk = KEEPALIVE_FRAME  # the clock ended the wait: a silence
                    finally:
                        clock.silent = False
                    clock.sends()
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    clock.wrote()
        except TimeoutError:
            if clock.gone:
                return
            if not clock.expired:
                raise
            raise SendTimeoutError(f"the client took over {self.send_timeout:g} s to accept "
                                   "the next event; it was dropped") from None
        finally:
            clock.stop()

    async def _listen(self, receive: Receive, clock: _Clock) -> None:
        """Wait for the client's disconnect, then stop the writer. More of the request's body
        is passed over; an error of the server's `receive()` is raised once the stream has
        ended (the writer goes on: the server closes the connection after it)."""
        try:
            while True:
                message: Message = await receive()
                if message["type"] == "http.disconnect":
                    clock.leave()
                    return
        except Exception as exc:
            self._failure = exc


class _Clock:
    """The timer of one stream's writer (the task that makes it): once the stream was silent
    `keepalive` seconds it cancels the writer's wait for the next chunk (`silent`: the writer
    then sends a keep-alive comment), and it ends the writer's wait (`limit`, a
    `TimeoutError`) once a write has waited `send_timeout` seconds. It runs when one of these
    is due, however many chunks were written meanwhile. The client's disconnect ends the
    writer's wait the same way (`leave`)."""

    __slots__ = ("_at", "_timer", "expired", "gone", "keepalive", "last", "limit", "loop",
                 "send_timeout", "sending", "silent", "task")

    def __init__(self, keepalive: float, send_timeout: float | None) -> None:
        self.loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self.task = task
        self.keepalive = keepalive
        self.send_timeout = send_timeout
        self.limit: asyncio.Timeout | None = None
        self.sending: float | None = None  # when the write going on started
        self.silent = False  # the clock cancelled that wait: a keep-alive is due
        self.expired = False  # a write waited past `send_timeout`
        self.gone = False  # the client disconnected
        self.last = self.loop.time()  # the last write's end
        self._at = self.last + keepalive  # when the timer is due
        self._timer = self.loop.call_at(self._at, self._due)

    def sends(self) -> None:
        """A write starts: the timer is due by its send timeout at the latest (only a
        `keepalive` longer than `send_timeout` moves it)."""
        self.sending = now = self.loop.time()
        if self.send_timeout is not None and self._at > now + self.send_timeout:
            self._timer.cancel()
            self._at = now + self.send_timeout
            self._timer = self.loop.call_at(self._at, self._due)

    def wrote(self) -> None:
        """A write ended."""
        self.sending = None
        self.last = self.loop.time()

    def _due(self) -> None:
        now = self.loop.time()
        if self.sending is not None:  # the writer waits in `send`
            timeout = self.send_timeout
            if timeout is not None and now - self.sending >= timeout:
                self.expired = True
                assert self.limit is not None
                if not self.limit.expired():  # (else it ends already: the client went)
                    self.limit.reschedule(now)  # it ends there, with a TimeoutError
                return
            due = now + self.keepalive  # (a silence may follow the write: seen again then)
            if timeout is not None:
                due = min(due, self.sending + timeout)
        elif now - self.last >= self.keepalive:
            if not self.silent:  # (not sending: the writer waits for the next chunk)
                self.silent = True
                self.task.cancel()
            due = now + self.keepalive
        else:
            due = self.last + self.keepalive
        self._at = due
        self._timer = self.loop.call_at(due, self._due)

    def leave(self) -> None:
        """The client went: end the writer's wait (a `TimeoutError` it takes as the end)."""
        self.gone = True
        if self.limit is not None and not self.limit.expired():  # (else it ends already)
            self.limit.reschedule(self.loop.time())

    def stop(self) -> None:
        self._timer.cancel()


class _ReadAhead:
    """`chunks` read ahead in a task of their own, one chunk at a time: chunks whose wait may
    not be cancelled (an async generator that is cancelled is over), given to the writer by a
    wait that may (`cancel_safe`)."""

    cancel_safe = True

    def __init__(self, chunks: Chunks) -> None:
        self._chunks = chunks
        self._slot = _Slot()
        self._task: asyncio.Task[None] | None = None

    def __aiter__(self) -> _ReadAhead:
        return self

    async def __anext__(self) -> bytes:
        if self._task is None:
            self._task = asyncio.create_task(self._read(), name="event stream: read chunks")
        read = await self._slot.get()
        if read is _END:
            raise StopAsyncIteration
        if isinstance(read, BaseException):
            raise read
        return read

    async def aclose(self) -> None:
        """Stop reading ahead, and close the chunks."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait((self._task,))
        await self._chunks.aclose()

    async def _read(self) -> None:
        """Hand each chunk to the writer, then the end, or the error that ended the chunks."""
        try:
            async for chunk in self._chunks:
                await self._slot.put(chunk)
        except BaseException as exc:
            task = asyncio.current_task()
            if isinstance(exc, asyncio.CancelledError) and task and task.cancelling():
                raise  # the response stops the reader: its stream has ended
            await self._slot.put(exc)
        else:
            await self._slot.put(_END)


class _Slot:
    """What the reader hands the writer, one at a time: `asyncio.Queue(1)` without its three
    deques (3 KiB a stream). A cancelled `get` leaves the item for the next."""

    __slots__ = ("_giver", "_item", "_loop", "_taker")

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._item: _Read | None = None
        self._taker: asyncio.Future[None] | None = None  # the writer waits for an item
        self._giver: asyncio.Future[None] | None = None  # the reader waits for room

    async def put(self, item: _Read) -> None:
        """Hand over `item` once the writer took the one before."""
        while self._item is not None:
            self._giver = self._loop.create_future()
            await self._giver
        self._item = item
        _wake(self._taker)

    async def get(self) -> _Read:
        """The next item, once there is one."""
        while self._item is None:
            self._taker = self._loop.create_future()
            await self._taker
        item, self._item = self._item, None
        _wake(self._giver)
        return item


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


_END: Any = object()
"""The end of the chunks, as the reader hands it to the writer."""

_Read = bytes | BaseException
"""What the reader hands the writer: a chunk, the error that ended the chunks, or `_END`."""
