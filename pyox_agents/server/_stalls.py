"""Dropping clients that stall before their request begins, on the `serve` and `demo` path.

uvicorn keeps a connection whose request head (request line and headers) has not all arrived
for as long as the client likes: its keep-alive timer is armed only once a response ends, and
any byte that comes disarms it. A few hundred connections that send nothing, or a byte now and
then, hold as many file descriptors; once the process has none left it accepts no connection at
all, `/healthz` included.

`HeadGuard` closes a connection whose next request head is not complete `header_timeout`
seconds after the connection opened or its last response ended (a client that sent part of a
head is told so with a 408), and when more than `max_pending` connections wait for a head, it
closes the one that has waited longest. It wraps uvicorn's HTTP protocol (`protocol`, for
`uvicorn.Config(http=...)`) and the app (`app`): the protocol wrapper hands each read to
uvicorn's protocol with the connection in a context variable, which the task uvicorn starts for
a request, as the head's last byte is read, inherits. So the app wrapper knows whose head
completed, and when its response ended. Only public interfaces: no uvicorn class is subclassed.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any, cast

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["DEFAULT_HEADER_TIMEOUT", "HeadGuard", "default_max_pending"]

DEFAULT_HEADER_TIMEOUT = 10.0
"""Seconds a connection may take to send a request's head (nginx waits 60, Apache 20-40)."""


def default_max_pending() -> int:
    """Half the process's file descriptor limit (`RLIMIT_NOFILE`), so that connections that
    wait for a request head never take the descriptors the requests under way need."""
    try:
        import resource
    except ImportError:  # not on Unix
        return 512
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 4096 if soft == resource.RLIM_INFINITY else max(16, soft // 2)


_CONNECTION: contextvars.ContextVar[_Connection | None] = contextvars.ContextVar(
    "pyox_agents_connection", default=None)
"""The connection whose bytes uvicorn's protocol is reading (and so, in a request's task, the
connection of that request)."""


class _Connection:
    """What the guard knows of one connection."""

    __slots__ = ("active", "closed", "got", "timer", "transport", "turn")

    def __init__(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.active = 0  # requests under way (two, briefly, when a client pipelines)
        self.got = False  # bytes of a head came since it began to wait
        self.closed = False
        self.turn = 0  # which wait the timer is for
        self.timer: asyncio.TimerHandle | None = None


class HeadGuard:
    """Closes the connections that do not send a request head in time, and the oldest of
    those that wait for one when more than `max_pending` do (None: `default_max_pending()`).

    Raises:
        ValueError: `header_timeout` or `max_pending` is not positive.
    """

    def __init__(self, header_timeout: float = DEFAULT_HEADER_TIMEOUT,
                 max_pending: int | None = None) -> None:
        if not header_timeout > 0:
            raise ValueError(f"the header timeout is seconds, > 0; got {header_timeout!r}")
        if max_pending is not None and max_pending < 1:
            raise ValueError(f"max_pending is a number of connections, >= 1; got {max_pending!r}")
        self.header_timeout = header_timeout
        self.max_pending = max_pending if max_pending is not None else default_max_pending()
        self._waiting: dict[_Connection, None] = {}  # oldest first

    def protocol(self, inner: Callable[..., asyncio.Protocol]) -> type[asyncio.Protocol]:
        """A protocol class for `uvicorn.Config(http=...)` whose instances run `inner` (uvicorn's
        HTTP protocol class, made with the same arguments) under this guard."""
        guard = self

        class GuardedProtocol(asyncio.Protocol):
            """uvicorn's HTTP protocol, its connection watched by a `HeadGuard`."""

            def __init__(self, **options: Any) -> None:
                self.inner = inner(**options)
                self.connection: _Connection | None = None

            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                self.connection = _Connection(transport)
                self.inner.connection_made(transport)
                guard._wait(self.connection)

            def data_received(self, data: bytes) -> None:
                connection = self.connection
                if connection is not None and connection.active == 0:
                    connection.got = True
                token = _CONNECTION.set(connection)
                try:
                    self.inner.data_received(data)
                finally:
                    _CONNECTION.reset(token)

            def eof_received(self) -> bool | None:
                return self.inner.eof_received()

            def connection_lost(self, exc: Exception | None) -> None:
                if self.connection is not None:
                    guard._forget(self.connection)
                self.inner.connection_lost(exc)

            def pause_writing(self) -> None:
                self.inner.pause_writing()

            def resume_writing(self) -> None:
                self.inner.resume_writing()

        return GuardedProtocol

    def app(self, app: ASGIApp) -> ASGIApp:
        """`app`, telling this guard when a request's head is complete (the app is called) and
        when its response has ended (the app returned): the connection then waits again."""

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            connection = _CONNECTION.get()
            if connection is None or scope["type"] == "lifespan":
                await app(scope, receive, send)
                return
            if scope["type"] != "http":  # a WebSocket: its own protocol reads the connection now
                self._forget(connection)
                await app(scope, receive, send)
                return
            self._begin(connection)
            try:
                await app(scope, receive, send)
            finally:
                self._end(connection)

        return guarded

    def _wait(self, connection: _Connection) -> None:
        """`connection` waits for a request head from now: closed if none comes in time."""
        if connection.closed:
            return
        connection.got = False
        connection.turn += 1
        self._waiting.pop(connection, None)
        self._waiting[connection] = None
        loop = asyncio.get_running_loop()
        connection.timer = loop.call_later(self.header_timeout, loop.call_soon, self._expire,
                                           connection, connection.turn)
        while len(self._waiting) > self.max_pending:
            self._close(next(iter(self._waiting)), late=False)

    def _begin(self, connection: _Connection) -> None:
        """A request of `connection` began: its head is complete."""
        connection.active += 1
        self._stop_waiting(connection)

    def _end(self, connection: _Connection) -> None:
        """A request of `connection` ended: it waits for the next head once none is under way."""
        connection.active -= 1
        if connection.active == 0:
            self._wait(connection)

    def _forget(self, connection: _Connection) -> None:
        """`connection` is closed, or no longer HTTP (a WebSocket): nothing more to watch."""
        connection.closed = True
        self._stop_waiting(connection)

    def _stop_waiting(self, connection: _Connection) -> None:
        self._waiting.pop(connection, None)
        if connection.timer is not None:
            connection.timer.cancel()
            connection.timer = None

    def _expire(self, connection: _Connection, turn: int) -> None:
        """The header timeout of wait `turn` is due (a turn of the loop later, so that a request
        whose head completed just before has begun): close the connection if it still waits."""
        if turn == connection.turn and connection.active == 0 and not connection.closed:
            self._close(connection, late=True)

    def _close(self, connection: _Connection, *, late: bool) -> None:
        """Close a waiting connection; one that sent part of a head and ran out of time is
        told why first."""
        self._forget(connection)
        transport = cast("asyncio.Transport", connection.transport)  # (uvloop's subclass none)
        if late and connection.got:
            transport.write(_late_head(self.header_timeout))
        transport.close()


def _late_head(timeout: float) -> bytes:
    """The 408 response to a request head that did not arrive within `timeout` seconds."""
    body = (f"the request's head (its request line and headers) did not arrive within "
            f"{timeout:g} s, so the connection was closed; send the head at once\n").encode()
    return (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n"
            + body)
