"""A principal's threads as a resource: the list (newest change first, page by page, each with
its title, its last change, and whether a run is going or waits for a person), a rename or
archive, its history of runs, and deleting one with everything kept of it.

Deleting erases the thread's messages, kept state, checkpoints, runs with their audit chains,
their event logs and its subagents' threads, in every store (`Store.erase`). A run's audit chain
proves that the log of a run that exists was not edited or cut short; it holds what the run did
(tool arguments, approvals and their answers), which a deletion must not leave behind. So the
chain goes whole, with the run record that names its head: nothing half-verifiable stays. What
stays is one line of the server's log naming the thread, the principal, and each erased run with
its chain's head (`seq` and `digest`): proof of which chains were erased, and where each ended,
without their content. A deployment that must keep audit logs archives threads instead.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from typing import Any

from pyox_agents._run_request import RequestError
from pyox_agents.service._history import history_json
from pyox_agents.service._runs import RunService
from pyox_agents.state.history import RunStartEntry
from pyox_agents.stores import Store, ThreadInfo, page_key

__all__ = ["delete_thread", "list_threads_page", "thread_history", "thread_store",
           "update_thread"]

_log = logging.getLogger(__name__)


def thread_store(store: Store | None) -> Store:
    """The store that keeps the server's threads; a 404 that says so when it keeps none."""
    if store is None:
        raise RequestError(404, "this server keeps no threads (it was created without a store)")
    return store


def _cursor(text: str | None) -> tuple[str, str] | None:
    if text is None:
        return None
    try:
        at, thread_id = json.loads(base64.urlsafe_b64decode(text.encode()))
        if isinstance(at, str) and isinstance(thread_id, str):
            return at, thread_id
    except (ValueError, TypeError, binascii.Error):
        pass
    raise RequestError(400, "cursor is not one this server gave: pass the `next` of the page "
                            "before, or leave it out for the first page", "cursor")


def _next(infos: list[ThreadInfo], limit: int) -> str | None:
    if len(infos) < limit:
        return None
    return base64.urlsafe_b64encode(json.dumps(page_key(infos[-1])).encode()).decode()


async def list_threads_page(runs: RunService, principal: str | None, *,
                            archived: bool | None = False, limit: int = 50,
                            cursor: str | None = None) -> dict[str, Any]:
    """`principal`'s threads, newest change first: `{threads: [{id, title, created_at,
    updated_at, archived, run}], next}`; those not archived (`archived=False`), the archived
    ones (True) or both (None). `run` is "running" (a run is going, in any process), "paused"
    (its latest run waits for a person) or None; `next` the cursor of the next page (None on
    the last).

    Raises:
        RequestError: 404 without a store; 400 a cursor this server did not give; 422 a limit
            that is not 1 to 200.
    """
    store = thread_store(runs.store)
    after = _cursor(cursor)
    try:
        infos = await store.alist_owned(principal, archived=archived, limit=limit, after=after)
    except ValueError as exc:
        raise RequestError(422, str(exc), "limit") from None
    threads = []
    for info in infos:
        going = runs.active(info.id) is not None or await runs.running_elsewhere(info.id)
        threads.append({
            "id": info.id, "title": info.title, "archived": info.archived,
            "created_at": info.created_at.isoformat() if info.created_at else None,
            "updated_at": info.updated_at.isoformat() if info.updated_at else None,
            "run": "running" if going else ("paused" if info.run_status == "paused" else None),
        })
    return {"threads": threads, "next": _next(infos, limit)}


async def update_thread(runs: RunService, thread_id: str, *, title: str | None = None,
                        archived: bool | None = None) -> dict[str, Any]:
    """Rename and/or archive `thread_id` (check its owner first); `{id, title, archived}`.

    Raises:
        RequestError: 404 no such thread; 422 a title that is too long or of several lines.
    """
    store = thread_store(runs.store)
    try:
        await store.aupdate_thread(thread_id, title=title, archived=archived)
    except LookupError:
        raise RequestError(404, f"no thread {thread_id!r}") from None
    except (TypeError, ValueError) as exc:
        raise RequestError(422, str(exc), "title") from None
    changed: dict[str, Any] = {"id": thread_id}
    if title is not None:
        changed["title"] = title.strip() or None
    if archived is not None:
        changed["archived"] = archived
    return changed


async def thread_history(runs: RunService, thread_id: str) -> dict[str, Any]:
    """`thread_id`'s runs and branches (see `history_json`), with its id.

    Raises:
        RequestError: 404 no such thread.
    """
    store = thread_store(runs.store)
    try:
        conversation = await store.aload(thread_id)
    except LookupError:
        raise RequestError(404, f"no thread {thread_id!r}") from None
    checkpoints = {c.run_id: c for c in await store.aload_checkpoints(thread_id)}
    return {"id": thread_id, **history_json(conversation, checkpoints)}


async def delete_thread(runs: RunService, thread_id: str, principal: str | None) -> list[str]:
    """Erase `thread_id` and everything kept of it (see the module's docstring), once no run
    goes on it; the ids of the runs erased. The server's log keeps one line naming each
    erased run and its audit chain's head.

    Raises:
        RequestError: 404 no such thread; 409 a run is going on it (stop it first).
    """
    store = thread_store(runs.store)
    async with runs.holding(thread_id, principal):
        try:
            conversation = await store.aload(thread_id)
        except LookupError:
            raise RequestError(404, f"no thread {thread_id!r}") from None
        heads = {}
        for entry in conversation.history:
            if isinstance(entry, RunStartEntry) and entry.content and entry.content not in heads:
                try:
                    record = await store.aload_run_record(entry.content)
                except LookupError:
                    continue
                heads[entry.content] = record.get("audit_head")
        erased = await store.aerase(thread_id)
    _log.info("thread %s of principal %r was deleted with its runs and their audit chains "
              "(run: audit head): %s; and runs of its subagents: %s", thread_id, principal,
              json.dumps(heads), [run for run in erased if run not in heads])
    return erased
