"""The routes that read what a server keeps of a thread, each scoped to the caller:
`GET /threads/{id}` (messages and shared state) and `GET /runs/{run_id}` (a run's record).
Each takes the app's `_Server`, as `handled` gives it."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pyox_agents.service import RequestError, thread_store, thread_view

__all__ = ["get_run", "get_thread"]


async def get_thread(server: Any, request: Request) -> Response:
    principal = await server.principal(request)
    thread_id = request.path_params["thread_id"]
    await server.runs.check_owner(thread_id, principal)
    thread_store(server.store)
    try:
        return JSONResponse(await thread_view(server.runs, thread_id))
    except LookupError:
        raise RequestError(404, f"no thread {thread_id!r}") from None


async def get_run(server: Any, request: Request) -> Response:
    run_id = request.path_params["run_id"]
    if server.store is None:
        raise RequestError(404, "this server keeps no runs (it was created without a store)")
    principal = await server.principal(request)
    try:
        record = await server.store.aload_run_record(run_id)
        thread_id = await server.store.arun_thread(run_id)
    except LookupError:
        raise RequestError(404, f"no run {run_id!r}") from None
    try:
        await server.runs.check_owner(thread_id, principal)
    except RequestError:
        raise RequestError(404, f"no run {run_id!r}") from None
    return JSONResponse(dict(record))
