"""A run shared with other processes through the store: its lease kept, its events logged,
its thread released; none of which stops the run when the store is away for a while.

A state's change is logged as its delta alone, as the run's own log keeps an older change
(`LiveRun`): its whole state, written and read again a step, cost a large state's every item
twice a step, and the readers in other processes make it from the version before.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from pyox_agents.events import NOT_KEPT, RuntimeEvent, StateChanged
from pyox_agents.service._event_json import event_to_json
from pyox_agents.service._live import LiveRun
from pyox_agents.stores import StoreUnavailable
from pyox_agents.stores._shared import EndsRuns
from pyox_agents.stores.base import SharedRuns

__all__ = ["keep_lease", "published_meta", "release", "share", "share_meta"]

_log = logging.getLogger(__name__)


async def keep_lease(peers: SharedRuns, live: LiveRun, owner: str, ttl: float) -> None:
    """Renew the run's lease every third of its time to live, until the run ends; a renewal
    the store misses is tried again at the next (the run's fenced writes tell if the lease
    was lost meanwhile)."""
    token, run_key = live.lease, live.run_key
    assert token is not None and run_key is not None
    while True:
        await anyio.sleep(ttl / 3)
        if live.lease is None:  # released: marking it active again would hold the thread
            return
        try:
            held = await peers.arenew_lease(live.thread_id, owner, token, ttl)
            if live.lease is None or not held:
                return
            await peers.aset_active(live.thread_id, run_key, ttl)
        except Exception:
            _log.warning("thread %s: its lease could not be renewed", live.thread_id,
                         exc_info=True)


async def share(peers: SharedRuns, live: LiveRun, last: Sequence[RuntimeEvent] = ()) -> bool:
    """Log the run's events not logged yet (and `last`, its end, not added yet), for other
    processes; False if the store failed. A store that is away does not stop the run: what it
    missed is logged with the next batch, or at the run's end once it was unreachable
    (`LiveRun.store_away`)."""
    assert live.run_key is not None
    events = [*live.unshared(), *last]
    if not events:
        return True
    try:
        await peers.aappend_events(live.run_key, [_logged(event) for event in events])
    except Exception as exc:
        _log.warning("run of thread %s: %d events not logged yet", live.thread_id,
                     len(events), exc_info=True)
        live.store_away = live.store_away or isinstance(exc, StoreUnavailable)
        return False
    live.shared += len(events)
    return True


async def release(peers: SharedRuns, live: LiveRun, owner: str, ttl: float,
                  last: Sequence[RuntimeEvent] = ()) -> None:
    """Log the run's events not logged yet and `last` (its end, not added yet), end its event
    log and free its thread (once); in one round trip where the store can (`EndsRuns`). A
    store that is away leaves the thread to its lease, which expires `ttl` seconds after its
    last renewal."""
    assert live.run_key is not None and live.lease is not None
    token, live.lease = live.lease, None
    try:
        if isinstance(peers, EndsRuns):
            events = [*live.unshared(), *last]
            await peers.aend_run(live.thread_id, live.run_key, owner, token,
                                 [_logged(event) for event in events])
            live.shared += len(events)
            return
        if not await share(peers, live, last) and live.store_away:
            _log.warning("could not free thread %s; it is free again within %g s",
                         live.thread_id, ttl)  # unreachable: the next write would wait too
            return
        await peers.amark_done(live.run_key)
        await peers.aclear_active(live.thread_id, live.run_key)
        await peers.arelease_lease(live.thread_id, owner, token)
    except Exception:
        _log.warning("could not free thread %s; it is free again within %g s",
                     live.thread_id, ttl, exc_info=True)


def _logged(event: RuntimeEvent) -> str:
    """`event` as the store logs it (a state's change without its state)."""
    if type(event) is StateChanged and event.state is not NOT_KEPT:
        event = dataclasses.replace(event, state=NOT_KEPT)
    return json.dumps(event_to_json(event))


async def share_meta(peers: SharedRuns, run_key: str, meta: Mapping[str, Any]) -> None:
    """Log what an adapter keeps of run `run_key` (`meta`, JSON) for other processes."""
    await peers.aappend_events(f"{run_key}:meta", [json.dumps(dict(meta))])


async def published_meta(peers: SharedRuns, run_key: str) -> dict[str, Any]:
    """What the adapters that started run `run_key` published of it (`publish_meta`), a key
    published again as it was last."""
    meta: dict[str, Any] = {}
    for _, text in await peers.aread_events(f"{run_key}:meta"):
        meta.update(json.loads(text))
    return meta
