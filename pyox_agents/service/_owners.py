"""Who may act on a thread: the principal it belongs to, a fact kept with the thread itself.

Another principal's thread is not there, as far as that principal can tell (404, the same as a
thread that does not exist, never 409 or 422). The owner is read where the thread is kept: the
run active on it now, the store (the one store of the server and its agents), or, for an agent
without a store, the run it keeps paused for a person. No cache decides it: a cache that forgets
an owner would hand the thread to whoever asks next.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyox_agents._run_request import RequestError
from pyox_agents.agent import Agent
from pyox_agents.service._live import LiveRun
from pyox_agents.stores.base import Store

__all__ = ["check_owner"]


async def check_owner(thread_id: str, principal: str | None, *, active: Mapping[str, LiveRun],
                      store: Store | None, agent: Agent | None) -> None:
    """404 unless `thread_id` is new (nothing of it is kept) or belongs to `principal`.

    `active` are the runs going on in this process; `store` the server's store; `agent` the
    agent the request is for, which keeps its paused runs' owners when there is no store.
    """
    live = active.get(thread_id)
    try:
        if live is not None:
            owner = live.principal
        elif store is not None:
            owner = await store.athread_owner(thread_id)
        elif agent is not None:
            owner = await agent.athread_owner(thread_id)
        else:
            return
    except LookupError:
        return  # a new thread: whoever starts it owns it
    if owner != principal:
        raise RequestError(404, f"no thread {thread_id!r}")
