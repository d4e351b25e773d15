"""The routes of a thread's live shared state:

- `PATCH /agents/{name}/threads/{id}/state` (`{base, patch}`): a person's edit, an RFC 6902
  patch made on version `base`, committed at once as the thread's next version (run or no
  run; `pyox_agents.service.edit_state`). `{version, delta}`; a refusal is JSON `{error, field,
  version?, state?}` (409 with the current version and state where the edit cannot apply).
  The agent names the rules the state keeps (its `state_type`).
- `GET /threads/{id}/events`: the thread's feed as server-sent events, each with an `id:`
  (`Last-Event-ID`, or `?after=`, goes on after it): a `snapshot` first, then every version
  (`state`: its number, delta and `by`), each run's start and end, each approval asked.

Both are the caller's own threads only, once their first run started (404 otherwise, the same
for a thread that is not there yet and another principal's).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pyox_agents.server._refusals import handled
from pyox_agents.service import RequestError, edit_state, follow_thread, thread_with_state

__all__ = ["EditPace", "live_state_routes"]


def live_state_routes(server: Any) -> list[Route]:
    """The live state's routes of the app's `_Server`."""
    return [
        Route("/agents/{name}/threads/{thread_id}/state", handled(server, patch_state),
              methods=["PATCH"]),
        Route("/threads/{thread_id}/events", handled(server, thread_events), methods=["GET"]),
    ]


class EditPace:
    """How fast each principal may edit states: a token bucket per principal (`rate` a second,
    bursts of `2 * rate`), the oldest forgotten past `KEPT` principals."""

    KEPT = 10_000

    def __init__(self, rate: float | None) -> None:
        self.rate = rate
        self._buckets: dict[str | None, tuple[float, float]] = {}

    def take(self, who: str | None) -> None:
        """Count one edit of `who`'s; 429 with Retry-After when it comes too fast."""
        rate = self.rate
        if rate is None:
            return
        now = time.monotonic()
        tokens, then = self._buckets.pop(who, (2 * rate, now))
        tokens = min(2 * rate, tokens + (now - then) * rate)
        if tokens < 1:
            self._buckets[who] = (tokens, now)
            wait = max(1, round((1 - tokens) / rate))
            raise RequestError(429, f"too many edits: at most {rate:g} a second; send this "
                                    f"one again in {wait} s", "patch",
                               headers={"Retry-After": str(wait)})
        self._buckets[who] = (tokens - 1, now)
        if len(self._buckets) > self.KEPT:
            del self._buckets[next(iter(self._buckets))]


async def patch_state(server: Any, request: Request) -> Response:
    principal, agent, thread_id = await server.owned(request, "thread_id")
    await thread_with_state(server.runs, thread_id)  # a new one is not there either: 404
    server.edit_pace.take(principal if principal is not None else _client(request))
    usage = 'send {"base": <version>, "patch": [RFC 6902 operations]}'
    raw = await server.body(request)
    try:  # (a bad string in the patch is refused below, naming the operation)
        body = json.loads(raw or b"{}")
    except ValueError:
        raise RequestError(400, f"the body is not JSON: {usage}") from None
    except RecursionError:
        raise RequestError(400, f"the body nests too deeply: {usage}") from None
    if not isinstance(body, dict):
        raise RequestError(422, "the body must be a JSON object {base, patch}")
    base, patch = body.get("base"), body.get("patch")
    if not isinstance(base, int) or isinstance(base, bool) or base < 1:
        raise RequestError(422, "base must be the number of the version the edit was made on "
                                "(a whole number from 1: every snapshot and delta names one)",
                           "base")
    if not isinstance(patch, list) or not all(isinstance(op, dict) for op in patch):
        raise RequestError(422, "patch must be a list of RFC 6902 operations "
                                "({op, path, value?})", "patch")
    return JSONResponse(await edit_state(server.runs, agent, thread_id, principal, base,
                                         patch))


async def thread_events(server: Any, request: Request) -> Response:
    principal = await server.principal(request)
    thread_id = request.path_params["thread_id"]
    await server.runs.check_owner(thread_id, principal)
    await thread_with_state(server.runs, thread_id)  # (follow it once its first run started)
    last = request.headers.get("last-event-id") or request.query_params.get("after")

    async def snapshot() -> dict[str, Any]:
        runs = server.runs
        live = runs.active(thread_id)
        kept = await runs.kept_state(thread_id)
        state = kept.state
        version = kept.version or None
        if live is not None and live.versions is not None:
            state, version = live.versions.state, live.versions.version
        running = live is not None or await runs.running_elsewhere(thread_id)
        return {"version": version, "state": {} if state is None else state,
                "running": running}

    items = follow_thread(server.runs.feeds, thread_id, principal, last, snapshot)
    response: Response = server.sse(_frames(items), None, source=items)
    return response


async def _frames(items: AsyncIterator[list[tuple[str, dict[str, Any]]]]
                  ) -> AsyncIterator[bytes]:
    async for batch in items:
        yield b"".join(f"id: {at}\ndata: {json.dumps(item, separators=(',', ':'))}\n\n"
                       .encode() for at, item in batch)


def _client(request: Request) -> str:
    return f"client:{request.client.host}" if request.client is not None else "client:?"
