"""Posting a `RunAgentInput` to an AG-UI endpoint and reading its Server-Sent Events, with
httpx (imported here, so only when a remote agent is called); every failure of the transport
becomes a `RemoteAgentError` that names the URL and says what to check (for the server's log),
and what failed (for the model and the person)."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

import httpx

from pyox_agents.remote._events import RemoteAgentError, loads

__all__ = ["post_events"]

TIMEOUT = httpx.Timeout(30.0, read=300.0)
"""Connecting and sending: 30 s; between two pieces of the stream: 5 minutes (servers send
keep-alive comments in silences; a tool timeout bounds the whole call)."""


async def post_events(url: str, headers: Mapping[str, str], body: Mapping[str, Any],
                      where: str, who: str) -> AsyncGenerator[dict[str, Any], None]:
    """The AG-UI events (parsed JSON objects) of the run that POSTing `body` to `url` starts;
    errors name the agent as `where` (with its URL) for the server, as `who` for the model.

    Raises:
        RemoteAgentError: the server cannot be reached, answers with an error status or not
            with an event stream, or sends an event that is not a JSON object.
    """
    sent = {"accept": "text/event-stream", "content-type": "application/json", **headers}
    answered = False
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client, client.stream(
            "POST", url, headers=sent, content=json.dumps(body)
        ) as response:
            await _check(response, where, who)
            answered = True
            async for data in _data(response):
                try:
                    event = loads(data)
                except (ValueError, RecursionError):
                    event = None
                if not isinstance(event, dict):
                    raise RemoteAgentError(f"{where} sent an event that is not a JSON object: "
                                           f"{data[:200]!r}; is this an AG-UI endpoint?",
                                           public_message=f"{who} sent an event that is "
                                                          "not a JSON object")
                yield event
    except httpx.HTTPError as exc:
        detail = str(exc) or type(exc).__name__
        if answered:
            raise RemoteAgentError(f"the stream of {where} broke off: {detail}",
                                   public_message=f"the stream of {who} broke off; try "
                                                  "again") from exc
        raise RemoteAgentError(f"could not reach {where}: {detail}; check the URL and that "
                               "the server runs",
                               public_message=f"could not reach {who}; try again later") from exc


async def _check(response: httpx.Response, where: str, who: str) -> None:
    status = response.status_code
    if status != 200:
        text = (await response.aread()).decode("utf-8", "replace")[:300]
        raise RemoteAgentError(f"{where} answered HTTP {status}: {text}",
                               public_message=f"{who} answered HTTP {status}")
    media = response.headers.get("content-type", "")
    if not media.startswith("text/event-stream"):
        raise RemoteAgentError(f"{where} answered {media or 'no content type'}, not an event "
                               "stream (text/event-stream); is this an AG-UI endpoint?",
                               public_message=f"{who} did not answer as an AG-UI agent")


async def _data(response: httpx.Response) -> AsyncIterator[str]:
    """The `data` of each Server-Sent Event (its `data:` lines joined; comments skipped)."""
    lines: list[str] = []
    async for line in response.aiter_lines():
        if not line:
            if lines:
                yield "\n".join(lines)
                lines = []
        elif line.startswith("data:"):
            lines.append(line[5:].removeprefix(" "))
    if lines:
        yield "\n".join(lines)
