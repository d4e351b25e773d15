"""Who asks: an `Auth` callable gives the principal of a request (None refuses it, 401), and
`bearer_tokens` is the one the server ships: principals known by their bearer token."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from starlette.requests import Request

__all__ = ["Auth", "bearer_tokens"]

Auth = Callable[[Request], Any]
"""`auth(request) -> principal | None` (sync or async): who is asking; None refuses (401)."""


def bearer_tokens(tokens: Mapping[str, str]) -> Auth:
    """An `auth` for `create_app` that knows principals by their bearer token.

    `tokens` maps a token to a principal name: `Authorization: Bearer <token>`.
    """
    known = dict(tokens)

    def auth(request: Request) -> str | None:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            return None
        return known.get(token.strip())

    return auth
