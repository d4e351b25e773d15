"""Serving with uvicorn and a graceful shutdown: on SIGTERM (or Ctrl-C) the server stops
listening, refuses new runs (503), lets each run finish the step it is in, stops the rest at
the deadline with their records left for the thread's next request, tells every stream
(`server_shutdown`), and exits within `grace` seconds. Connections that stall before their
request begins are dropped (`HeadGuard`)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import Any

import uvicorn

from pyox_agents.server._stalls import DEFAULT_HEADER_TIMEOUT, HeadGuard

__all__ = ["GracefulServer", "http_protocol", "serve"]


class GracefulServer(uvicorn.Server):
    """A uvicorn server whose shutdown first drains the app's runs (`RunService.shutdown`).

    The runs get `grace` minus a second (at most 80 % of it) to reach a step boundary; the
    last second lets their streams send the terminal event and close. uvicorn's own
    `timeout_graceful_shutdown` is `grace`: a connection still open then is cancelled.
    """

    def __init__(self, config: uvicorn.Config, grace: float, *, served: Any) -> None:
        config.timeout_graceful_shutdown = max(1, round(grace))
        super().__init__(config)
        self.grace = grace
        self.served = served
        """The app whose runs are drained (the config's is wrapped in middleware)."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Stop listening, drain the runs and the connections, then end the app."""
        runs = _runs_of(self.served)
        if runs is None:
            await super().shutdown(sockets)
            return
        draining = asyncio.create_task(runs.shutdown(min(self.grace - 1, self.grace * 0.8)))
        await super().shutdown(sockets)  # closes the listeners first, then waits
        await draining


def _runs_of(app: Any) -> Any:
    """The `RunService` of an app `create_app` made, or None for another ASGI app."""
    server = getattr(getattr(app, "state", None), "pyox", None)
    return getattr(server, "runs", None)


def http_protocol(name: str) -> Callable[..., asyncio.Protocol]:
    """uvicorn's HTTP protocol class that `--http` `name` picks: "auto" (httptools when
    installed, else h11), "h11" or "httptools"."""
    if name == "h11":
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol
    if name == "httptools":
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    return AutoHTTPProtocol


def serve(app: Any, host: str, port: int, grace: float, *, loop: str = "auto",
          http: str = "auto", sock: socket.socket | None = None,
          header_timeout: float = DEFAULT_HEADER_TIMEOUT, max_pending: int | None = None,
          wrap: Callable[[Any], Any] | None = None) -> None:
    """Serve `app` on `host:port` (or on the listening socket `sock`, a worker's) until
    SIGTERM or SIGINT, then shut down within `grace` s; `loop` and `http` as uvicorn's.

    A connection that has not sent a request head within `header_timeout` s of opening, or of
    its last response, is closed, and so is the oldest waiting one when more than
    `max_pending` wait (`HeadGuard`). `wrap` puts middleware of the caller's around `app`.
    """
    guard = HeadGuard(header_timeout, max_pending)
    outer = guard.app(app if wrap is None else wrap(app))
    # auto: uvloop and httptools when installed (the `fast` extra), else asyncio and h11: they
    # cut the server's CPU per run by 10-35% (bench/concurrency.py --targets ...,fast,floorfast)
    config = uvicorn.Config(outer, host=host, port=port, log_level="warning", loop=loop,
                            http=guard.protocol(http_protocol(http)))
    GracefulServer(config, grace, served=app).run(sockets=None if sock is None else [sock])
