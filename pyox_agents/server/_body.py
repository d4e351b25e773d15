"""Reading a request's JSON body: its type, its size and its time bounded, each refusal saying
what was wrong (415, 413, 408) before anything runs."""

from __future__ import annotations

import asyncio

from starlette.requests import Request

from pyox_agents.server._cross_site import check_json_type
from pyox_agents.service import RequestError

__all__ = ["read_json_body"]


async def read_json_body(request: Request, *, max_body: int, within: float | None) -> bytes:
    """The body of `request`, which the route reads as JSON.

    A client that sends it slower than `within` seconds in all (a stalled or trickled body,
    which would hold its connection for ever) is answered 408.

    Raises:
        RequestError: 415 for a type a page on another site may send (`check_json_type`), 413
            over `max_body` bytes, 408 past `within`.
    """
    check_json_type(request)
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_body:
        raise RequestError(413, f"the body is {declared} bytes; the limit is {max_body}")
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(within) as limit:
            async for chunk in request.stream():
                size += len(chunk)
                if size > max_body:
                    raise RequestError(413, f"the body is over the limit of {max_body} bytes")
                chunks.append(chunk)
    except TimeoutError:
        if not limit.expired():
            raise
        raise RequestError(408, f"the request body did not arrive within {within:g} s (got "
                                f"{size} bytes); send the whole body at once, or raise the "
                                "server's body_timeout (pyox-agents serve --body-timeout)",
                           headers={"Connection": "close"}) from None
    return b"".join(chunks)
