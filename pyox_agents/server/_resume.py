"""Where a request that resumes a run's stream starts: its `Last-Event-ID` header, or the
`startIndex` query parameter (as the AI SDK's `WorkflowChatTransport` sends one), read as a
`Cursor` (`pyox_agents.adapters.parse_cursor` says what each means). A value that is neither is
answered 400 before any stream."""

from __future__ import annotations

from starlette.requests import Request

from pyox_agents.adapters import Cursor, parse_cursor
from pyox_agents.service import RequestError

__all__ = ["resume_cursor"]


def resume_cursor(request: Request) -> Cursor | None:
    """The cursor `request` resumes after, or None (the whole run).

    Raises:
        RequestError: 400, a `Last-Event-ID` or `startIndex` that is not one.
    """
    try:
        return parse_cursor(request.headers.get("last-event-id"),
                            request.query_params.get("startIndex"))
    except ValueError as exc:
        field = "Last-Event-ID" if request.headers.get("last-event-id") else "startIndex"
        raise RequestError(400, str(exc), field) from None
