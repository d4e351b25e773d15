"""Following a run that another process executes, through the store's event log: pushed to us
as it grows (`SharedRuns.follow_events`: XREAD BLOCK on Redis), never polled."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import anyio

from pyox_agents.events import RunFailed, RunFinished, RuntimeEvent
from pyox_agents.service._event_json import event_from_json
from pyox_agents.state.run import AgentError
from pyox_agents.stores.base import SharedRuns

__all__ = ["follow_remote"]


async def follow_remote(store: SharedRuns, thread_id: str, run_key: str,
                        lease_ttl: float) -> AsyncIterator[RuntimeEvent]:
    """The events of run `run_key` of `thread_id`, from its first, until it ends.

    The store pushes each event as it is logged. A silence of a third of `lease_ttl` makes us
    check that the run still runs somewhere: if its process died (the thread's active run is no
    longer this one, and its log was never closed), the stream ends with
    `RunFailed(code="run_lost")` instead of waiting on.
    """
    after = "0"
    silence = lease_ttl / 3
    block_ms = max(1, int(silence * 1000))
    while True:
        rows = store.follow_events(run_key, after, block_ms=block_ms)
        try:
            while True:
                with anyio.move_on_after(silence) as quiet:
                    row = await anext(rows, None)
                if quiet.cancelled_caught:
                    break  # the follower was cut in a wait: check the run, then follow again
                if row is None:
                    return  # the log was closed
                after, text = row
                event = event_from_json(json.loads(text))
                yield event
                if isinstance(event, RunFinished | RunFailed):
                    return
        finally:
            await rows.aclose()  # type: ignore[attr-defined]
        if not await store.ais_done(run_key) and await store.aget_active(thread_id) != run_key:
            yield RunFailed(AgentError("run_lost", "the server process running this run "
                                                   "stopped; send the message again"))
            return
