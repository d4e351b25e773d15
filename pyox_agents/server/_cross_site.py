"""Cross-site requests: what a page on another site may make a browser send to the server.

A browser sends a "simple" cross-site request (a form post, or `fetch` with a `text/plain`,
`application/x-www-form-urlencoded` or `multipart/form-data` body) without asking the server
first (no CORS preflight): the page cannot read the answer, but the request is made. Without
auth, or with cookies a browser adds, such a request could start a run whose tools change a
thread. So the server refuses:

- a request that can change something (POST, PUT, PATCH, DELETE) whose `Origin` is neither the
  server's own nor an allowed one (`create_app(cors_origins=...)`, `pyox-agents serve --cors`),
  `Origin: null` included (403). A request without `Origin` is not a browser's cross-site
  request (curl, Node clients, another server) and is served;
- a body a route reads as JSON sent with one of those three content types (415): JSON needs
  `Content-Type: application/json`, which a page on another site cannot send without a
  preflight the server would refuse. A body without a `Content-Type` is read as JSON.

GET requests are not refused by origin: a page on another site cannot read their answers
(CORS), and the `Host` check (`HostCheck`) stops it reaching the server by a name of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from pyox_agents.server._hosts import HostCheck
from pyox_agents.service import RequestError

__all__ = [
    "UNSAFE_METHODS",
    "check_json_type",
    "check_origin",
    "middleware_for",
    "normalized_origins",
    "refused_method",
]

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
"""The methods whose requests can change something: their `Origin` is checked."""

SIMPLE_TYPES = ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data")
"""The body types a page may send to another site without a CORS preflight."""

_DEFAULT_PORTS = {"http": "80", "https": "443"}


def normalized_origins(origins: Sequence[str]) -> tuple[str, ...]:
    """`origins` as browsers write them in `Origin` (`scheme://host[:port]`, lower case); `*`
    stays `*` (every origin).

    Raises:
        ValueError: a value is not an origin (a path, a trailing slash, no scheme).
    """
    out: list[str] = []
    for origin in origins:
        if origin == "*":
            out.append(origin)
            continue
        parts = urlsplit(origin.strip().lower())
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or \
                parts.query or parts.fragment or "@" in parts.netloc:
            raise ValueError(f"cors_origins: {origin!r} is not an origin; write it as a "
                             "browser sends it, scheme://host[:port] with no path or trailing "
                             "slash, e.g. 'http://localhost:3000'")
        out.append(f"{parts.scheme}://{_without_default_port(parts.scheme, parts.netloc)}")
    return tuple(dict.fromkeys(out))


def middleware_for(origins: Sequence[str], hosts: Sequence[str] | None) -> list[Middleware]:
    """The app's middleware, outermost first: the `Host` check (unless `hosts` is None), then
    CORS for `origins` (none: no CORS headers, and a preflight is answered 405)."""
    middleware = []
    if hosts is not None:
        middleware.append(Middleware(HostCheck, hosts=hosts))
    if origins:
        middleware.append(Middleware(CORSMiddleware, allow_origins=list(origins),
                                     allow_methods=sorted({"GET", *UNSAFE_METHODS}),
                                     allow_headers=["*"]))
    return middleware


_log = logging.getLogger(__name__)


async def refused_method(request: Request, exc: Exception) -> Response:
    """The 405 of a method a route does not take, as Starlette answers it; for a page's CORS
    preflight (a server that allows no other origin has no CORS middleware to answer it), a
    warning in the log too: the browser tells its page only "blocked by CORS policy"."""
    origin = request.headers.get("origin")
    if request.method == "OPTIONS" and origin and (
            "access-control-request-method" in request.headers):
        _log.warning("a page at %s asked to call %s (a CORS preflight) and was refused: allow "
                     "its origin with pyox-agents serve --cors %s, or create_app(..., "
                     "cors_origins=[%r])", origin, request.url.path, origin, origin)
    headers = exc.headers if isinstance(exc, HTTPException) else None
    return PlainTextResponse("Method Not Allowed", status_code=405, headers=headers)


def check_origin(request: Request, allowed: Sequence[str]) -> None:
    """Refuse (403) a state-changing request from a page whose origin is neither the server's
    own (the request's `Host`, whatever the scheme a proxy in front ends) nor in `allowed`
    (normalized by `normalized_origins`).

    Raises:
        RequestError: 403, naming the origin and how to allow it.
    """
    origin = request.headers.get("origin")
    if origin is None or request.method not in UNSAFE_METHODS or "*" in allowed:
        return
    parts = urlsplit(origin.strip().lower())
    if parts.scheme in _DEFAULT_PORTS and parts.netloc:
        netloc = _without_default_port(parts.scheme, parts.netloc)
        own = request.headers.get("host", "").lower()
        if netloc in (own, _without_default_port("http", _without_default_port("https", own))):
            return
        if f"{parts.scheme}://{netloc}" in allowed:
            return
    if origin.strip().lower() == "null":
        raise RequestError(403, "a request from a page without an origin (Origin: null: a "
                                "sandboxed frame, or a file opened from disk) was refused, as "
                                "it could come from any site; serve the page from an origin "
                                "and allow it: pyox-agents serve --cors ORIGIN, or "
                                "create_app(..., cors_origins=['ORIGIN'])")
    raise RequestError(403, f"a request from the page at {origin} was refused: this server "
                            "takes requests that change something only from its own pages and "
                            "the origins it allows. To serve a frontend on that origin, allow "
                            f"it: pyox-agents serve --cors {origin}, or "
                            f"create_app(..., cors_origins=[{origin!r}])")


def check_json_type(request: Request) -> None:
    """Refuse (415) a JSON body sent as one of the types a page on another site may send
    without a preflight; no `Content-Type` is read as JSON.

    Raises:
        RequestError: 415, naming the type and what to send instead.
    """
    declared = request.headers.get("content-type")
    if declared is None:
        return
    media = declared.split(";", 1)[0].strip().lower()
    if media in SIMPLE_TYPES:
        raise RequestError(415, f"the body was sent as {media}; this route reads JSON: send "
                                "it with Content-Type: application/json")


def _without_default_port(scheme: str, netloc: str) -> str:
    """`netloc` without the port its scheme implies (`example.com:443` -> `example.com`)."""
    port = _DEFAULT_PORTS.get(scheme)
    return netloc.removesuffix(f":{port}") if port else netloc
