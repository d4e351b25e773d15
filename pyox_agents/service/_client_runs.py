"""A stop that names the run it is for: the id the client gave the run's request (AG-UI's
`RunAgentInput.runId`), not the server's run id.

CopilotKit's stop names the run its page POSTed: one that arrives after that run ended and the
thread's next one began must leave the next one going. So the route that starts a run records
the client's id (`record_client_run_id`): on the run's `LiveRun.meta` for a stop sent to this
process (`stop_live`), and, with shared runs, in the run's meta log in the store, which a stop
sent to another process reads before it relays the stop to the run's process
(`Control.stop_elsewhere`; the relayed stop names the run's `run_key`, so it reaches that run
and no later one).

A run whose client id is not recorded (started through another protocol, or in the moment
before its start is recorded: its first save) is not the run a stop names; a stop that names
none stops whichever run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any, Protocol

from pyox_agents.service._live import LiveRun
from pyox_agents.stores import StoreUnavailable

__all__ = ["CLIENT_RUN_ID", "is_named", "record_client_run_id", "stop_live"]

_log = logging.getLogger(__name__)

CLIENT_RUN_ID = "client_run_id"
"""The key of the client's run id in a run's meta (`LiveRun.meta`, its meta log)."""


class _Publishes(Protocol):
    async def publish_meta(self, live: LiveRun, meta: Mapping[str, Any]) -> None: ...


async def record_client_run_id(runs: _Publishes, live: LiveRun, run_id: str) -> None:
    """Record `run_id`, the id the client gave the request of `live`'s run, where a stop that
    names it finds it: `live.meta`, and the store for other processes (`publish_meta`). The
    run has started: a store that cannot be reached is logged, not raised (a stop sent to
    another process that names this run then finds it not named, and answers so)."""
    live.meta[CLIENT_RUN_ID] = run_id
    try:
        await runs.publish_meta(live, {CLIENT_RUN_ID: run_id})
    except StoreUnavailable as exc:
        _log.warning("the client's id of a run of thread %s was not published: %s",
                     live.thread_id, exc)


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
