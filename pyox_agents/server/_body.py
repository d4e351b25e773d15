"""Reading a request's JSON body: its type and its size bounded, each refusal saying what was
wrong (415, 413) before anything runs."""

from __future__ import annotations

from starlette.requests import Request

from pyox_agents.server._cross_site import check_json_type
from pyox_agents.service import RequestError

__all__ = ["read_json_body"]


async def read_json_body(request: Request, *, max_body: int) -> bytes:
    """The body of `request`, which the route reads as JSON.

    Raises:
        RequestError: 415 for a type a page on another site may send (`check_json_type`), 413
            over `max_body` bytes.
    """
    check_json_type(request)
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_body:
        raise RequestError(413, f"the body is {declared} bytes; the limit is {max_body}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_body:
            raise RequestError(413, f"the body is over the limit of {max_body} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
