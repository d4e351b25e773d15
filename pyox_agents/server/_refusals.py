"""A refused request answered as its status, with the body its protocol's clients read: JSON
`{error, field?}` for AG-UI and the server's own routes, plain text for the AI SDK."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from pyox_agents.service import RequestError

__all__ = ["handled", "json_error", "text_error"]


def json_error(exc: RequestError) -> Response:
    """A refusal as JSON `{error, field?}`: AG-UI and the server's own routes."""
    body: dict[str, Any] = {"error": _text(exc)}
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


def handled(server: Any, endpoint: Any,
             refusal: Callable[[RequestError], Response] = json_error) -> Any:
    """Answer a `RequestError` as its status, with the body the route's protocol reads."""

    async def handle(request: Request) -> Response:
        try:
            response: Response = await endpoint(server, request)
            return response
        except RequestError as exc:
            return refusal(exc)

    return handle
