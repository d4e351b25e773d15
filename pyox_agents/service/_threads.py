"""A thread as a client sees it when it comes back: its messages, its shared state (the live
run's latest, else the kept one) with its version, and whether a run is going."""

from __future__ import annotations

import json
from typing import Any

from pyox_agents.service._runs import RunService
from pyox_agents.service._transcript import transcript

__all__ = ["thread_view"]


async def thread_view(runs: RunService, thread_id: str) -> dict[str, Any]:
    """`thread_id` as JSON: `{id, messages, state, version, running}`; a message's `images`
    and `files` are `{url, media_type[, filename]}` objects.

    `messages` are the thread's messages as people saw them (`transcript`), each with the id
    its client was streamed (`{id, role, content, tool_calls, call_id}`).

    Raises:
        LookupError: the store has no such thread (or there is no store).
    """
    store = runs.store
    if store is None:
        raise LookupError("this server keeps no threads (it was created without a store)")
    # the run first: one that ends while the store is read has kept its state before it left
    live = runs.active(thread_id)
    conversation = await store.aload(thread_id)
    messages = transcript(conversation)
    kept = await runs.kept_state(thread_id)
    # a state and its version from one place: the run's latest while it goes on, else the kept
    # one (a person's edit may have followed a run that ended while the store was read)
    state, version = kept.state, kept.version or None
    if live is not None and not live.done and live.versions is not None:
        state, version = live.versions.state, live.versions.version
    elif live is not None and not live.done and live.last() is not None:
        state = live.last_state()  # (a server that numbers no versions)
    running = live is not None or await runs.running_elsewhere(thread_id)
    return {"id": thread_id, "messages": messages,
            "state": {} if state is None else json.loads(json.dumps(state)),
            "version": version, "running": running}
