"""The routes of a principal's threads as a resource, each scoped to the caller (another's
thread is not there: 404, the same as a missing one):

- `GET /threads` (`?limit=`, `?cursor=`, `?archived=`): the caller's threads, newest change
  first, page by page: those not archived (`false`, the default), the archived ones (`true`) or
  both (`any`, each with its `archived` flag);
- `GET /threads/{id}` (messages and shared state), `PATCH /threads/{id}` (`{title?, archived?}`),
  `DELETE /threads/{id}` (everything kept of it);
- `GET /threads/{id}/history` (its runs and branches), `POST /threads/{id}/fork`
  (`{run_id | message_id, thread_id?}`), `POST /threads/{id}/rewind` (`{run_id}`),
  `POST /threads/{id}/undo` (`{run_id}`);
- `GET /runs/{run_id}` (a run's record).

JSON bodies; a refusal is JSON `{error, field?}` (`handled`), and a state-changing one from a
page on another site is refused first (`handled`'s cross-site check).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pyox_agents.adapters import read_json
from pyox_agents.server._refusals import handled
from pyox_agents.service import (
    RequestError,
    delete_thread,
    fork_thread,
    list_threads_page,
    rewind_thread,
    thread_history,
    thread_store,
    thread_view,
    undo_run,
    update_thread,
)

__all__ = ["thread_routes"]

_ARCHIVED: dict[str, bool | None] = {"true": True, "false": False, "any": None}
"""`GET /threads?archived=`: the archived threads only, the others, or both."""


def thread_routes(server: Any) -> list[Route]:
    """The threads' routes of the app's `_Server`."""
    return [
        Route("/threads", handled(server, list_threads), methods=["GET"]),
        Route("/threads/{thread_id}", handled(server, get_thread), methods=["GET"]),
        Route("/threads/{thread_id}", handled(server, patch_thread), methods=["PATCH"]),
        Route("/threads/{thread_id}", handled(server, remove_thread), methods=["DELETE"]),
        Route("/threads/{thread_id}/history", handled(server, get_history), methods=["GET"]),
        Route("/threads/{thread_id}/fork", handled(server, fork), methods=["POST"]),
        Route("/threads/{thread_id}/rewind", handled(server, rewind), methods=["POST"]),
        Route("/threads/{thread_id}/undo", handled(server, undo), methods=["POST"]),
        Route("/runs/{run_id}", handled(server, get_run), methods=["GET"]),
    ]


async def _owned(server: Any, request: Request) -> tuple[str | None, str]:
    """The caller, and the thread of the path once it is theirs (404 otherwise)."""
    principal = await server.principal(request)
    thread_id = request.path_params["thread_id"]
    await server.runs.check_owner(thread_id, principal)
    return principal, thread_id


async def _fields(server: Any, request: Request, **expected: type) -> dict[str, Any]:
    """The JSON object of the body, with the `expected` fields (each optional) of their type."""
    body = read_json(await server.body(request) or b"{}", "a JSON object")
    if not isinstance(body, dict):
        raise RequestError(422, "the body must be a JSON object")
    for name, kind in expected.items():
        value = body.get(name)
        if value is not None and not isinstance(value, kind):
            raise RequestError(422, f"{name} must be a {kind.__name__}", name)
    return {name: body.get(name) for name in expected}


async def list_threads(server: Any, request: Request) -> Response:
    principal = await server.principal(request)
    query = request.query_params
    try:
        limit = int(query.get("limit", "50"))
    except ValueError:
        raise RequestError(422, "limit must be a whole number from 1 to 200", "limit") from None
    which = query.get("archived", "false")
    if which not in _ARCHIVED:
        raise RequestError(422, "archived must be true (the archived threads only), false (the "
                                "others, the default) or any (both)", "archived")
    return JSONResponse(await list_threads_page(
        server.runs, principal, archived=_ARCHIVED[which], limit=limit,
        cursor=query.get("cursor")))


async def get_thread(server: Any, request: Request) -> Response:
    _, thread_id = await _owned(server, request)
    thread_store(server.store)
    try:
        return JSONResponse(await thread_view(server.runs, thread_id))
    except LookupError:
        raise RequestError(404, f"no thread {thread_id!r}") from None


async def patch_thread(server: Any, request: Request) -> Response:
    _, thread_id = await _owned(server, request)
    body = await _fields(server, request, title=str, archived=bool)
    if body["title"] is None and body["archived"] is None:
        raise RequestError(422, "give a title, archived, or both", "title")
    return JSONResponse(await update_thread(server.runs, thread_id, title=body["title"],
                                            archived=body["archived"]))


async def remove_thread(server: Any, request: Request) -> Response:
    principal, thread_id = await _owned(server, request)
    runs = await delete_thread(server.runs, thread_id, principal)
    return JSONResponse({"id": thread_id, "deleted": True, "runs": runs})


async def get_history(server: Any, request: Request) -> Response:
    _, thread_id = await _owned(server, request)
    return JSONResponse(await thread_history(server.runs, thread_id))


async def fork(server: Any, request: Request) -> Response:
    principal, thread_id = await _owned(server, request)
    body = await _fields(server, request, run_id=str, message_id=str, thread_id=str)
    forked = await fork_thread(server.runs, thread_id, principal, run_id=body["run_id"],
                               message_id=body["message_id"], new_id=body["thread_id"])
    return JSONResponse(forked, status_code=201)


async def rewind(server: Any, request: Request) -> Response:
    principal, thread_id = await _owned(server, request)
    run_id = await _run_id(server, request)
    return JSONResponse(await rewind_thread(server.runs, thread_id, principal, run_id))


async def undo(server: Any, request: Request) -> Response:
    principal, thread_id = await _owned(server, request)
    run_id = await _run_id(server, request)
    return JSONResponse(await undo_run(server.runs, thread_id, principal, run_id))


async def _run_id(server: Any, request: Request) -> str:
    run_id = (await _fields(server, request, run_id=str))["run_id"]
    if run_id is None:
        raise RequestError(422, "give the run_id of one of the thread's runs (GET "
                                "/threads/{id}/history lists them)", "run_id")
    return str(run_id)


async def get_run(server: Any, request: Request) -> Response:
    run_id = request.path_params["run_id"]
    unknown = (f"no run {run_id!r}: a run's id is the server's, 64 hex digits (a thread's "
               "runs are listed by GET /threads/{id}/history); an AG-UI runId or AI SDK "
               "message id a client sent is not it")
    if server.store is None:
        raise RequestError(404, "this server keeps no runs (it was created without a store)")
    principal = await server.principal(request)
    try:
        record = await server.store.aload_run_record(run_id)
        thread_id = await server.store.arun_thread(run_id)
    except LookupError:
        raise RequestError(404, unknown) from None
    try:
        await server.runs.check_owner(thread_id, principal)
    except RequestError:
        raise RequestError(404, unknown) from None
    return JSONResponse(dict(record))
