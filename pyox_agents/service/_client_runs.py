"""A stop that names the run it is for: the id the client gave the run's request (AG-UI's
`RunAgentInput.runId`), not the server's run id.

CopilotKit's stop names the run its page POSTed: one that arrives after that run ended and the
thread's next one began must leave the next one going. So the route that starts a run gives
the client's id to `RunService.start` as the run's meta (`CLIENT_RUN_ID`): it is on the run's
`LiveRun.meta` from its start, for a stop sent to this process (`stop_live`), and, with shared
runs, in the run's meta log in the store before the run is recorded as the thread's active one,
for a stop sent to another process, which reads it before it relays the stop to the run's
process (`Control.stop_elsewhere`; the relayed stop names the run's `run_key`, so it reaches
that run and no later one).

A run whose client id is not recorded (started through another protocol) is not the run a stop
names; a stop that names none stops whichever run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

from pyox_agents.service._live import LiveRun

__all__ = ["CLIENT_RUN_ID", "is_named", "stop_live"]

CLIENT_RUN_ID = "client_run_id"
"""The key of the client's run id in a run's meta (`LiveRun.meta`, its meta log): the route
that starts an AG-UI run gives it to `RunService.start`."""


def is_named(meta: Mapping[str, Any], run_id: str | None) -> bool:
    """Whether a stop that names the client's run `run_id` (None: it names none) is for the run
    whose meta is `meta`."""
    return run_id is None or meta.get(CLIENT_RUN_ID) == run_id


async def stop_live(live: LiveRun, run_id: str | None = None) -> bool:
    """Cancel `live`'s run and wait for its end, if a stop that names `run_id` is for it
    (`is_named`); whether it was. What it committed stays. A stop that comes while the run
    starts (its thread taken, its start not saved yet) waits for its start."""
    if live.task is None and not live.held:
        await live.begun()
    if live.task is None or not is_named(live.meta, run_id):
        return False
    live.task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.wait([live.task])
    return True
