"""A refused request answered as its status, with the body its protocol's clients read: JSON
`{error, field?}` for AG-UI and the server's own routes, plain text for the AI SDK.

A request that can change something is refused first when a page on another origin sent it
(`check_origin`: 403, in the route's body format).

A store that cannot be reached while a request is answered (`StoreUnavailable`) is a 503 with
`Retry-After`, the body saying so (`"store": "unreachable"` in JSON): never a 500, and never a
hang, since every store bounds its connect and command timeouts. The body names no store: the
store's own words (its URL, its driver's error) go to the server's log, their secrets hidden.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from pyox_agents._redact import redact_text
from pyox_agents.server._cross_site import check_origin
from pyox_agents.service import RequestError
from pyox_agents.stores import StoreUnavailable

__all__ = ["handled", "json_error", "store_unreachable", "text_error"]

_log = logging.getLogger(__name__)


def json_error(exc: RequestError) -> Response:
    """A refusal as JSON `{error, field?}`: AG-UI and the server's own routes."""
    body: dict[str, Any] = {"error": _text(exc), **exc.details}
    if exc.field is not None:
        body["field"] = exc.field
    return JSONResponse(body, status_code=exc.status, headers=exc.headers)


def text_error(exc: RequestError) -> Response:
    """A refusal as plain text: the AI SDK's transport shows the body as the error's message."""
    return PlainTextResponse(_text(exc), status_code=exc.status, headers=exc.headers)


def _text(exc: RequestError) -> str:
    """The refusal's message as text: a lone surrogate it quotes (from a bad key it names) is
    written as its escape, `\\udcff`, since no response can carry it."""
    return str(exc).encode("utf-8", "backslashreplace").decode("utf-8")


def store_unreachable(exc: StoreUnavailable) -> RequestError:
    """The refusal of a request the store's outage stopped: 503 with `Retry-After`, saying
    only that; what the store said is logged."""
    wait = max(1, math.ceil(exc.retry_after))
    _log.warning("a request was refused with 503: %s", redact_text(str(exc)))
    return RequestError(503, f"the store is unreachable or cannot be written (a full disk), so "
                             f"this request was not done; try again in {wait} s",
                        headers={"Retry-After": str(wait)}, details={"store": "unreachable"})


def handled(server: Any, endpoint: Callable[[Any, Request], Awaitable[Response]],
            refusal: Callable[[RequestError], Response] = json_error
            ) -> Callable[[Request], Awaitable[Response]]:
    """Answer a `RequestError` as its status, and a store outage as 503, with the body the
    route's protocol reads; refuse a cross-site request that could change something first
    (`server.cors_origins`: the origins allowed besides the server's own)."""

    async def handle(request: Request) -> Response:
        try:
            check_origin(request, server.cors_origins)
            return await endpoint(server, request)
        except RequestError as exc:
            return refusal(exc)
        except StoreUnavailable as exc:
            return refusal(store_unreachable(exc))

    return handle
