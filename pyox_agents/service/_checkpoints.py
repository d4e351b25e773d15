"""What a server records of each run as it ends (its checkpoint), and the shared state a
checkpoint gives back: the run's history of versions, forks and undo are read from these.

The history of a thread does not record the shared state (DESIGN.md), and the kept state holds
only its latest versions; so when a run ends, the server records, with the thread: how the run
ended, the length of the thread's history then (the conversation right after it), the version
of the shared state then and that state, and the RFC 6902 ops back to the state the run started
from (its changes reversed). A run that pauses for a person is recorded when it pauses, and
again when it ends, from the same start. A run cut by a crash is recorded when the run that
continues it ends; a process whose thread was taken over records nothing (the process that took
it records the run).
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Sequence
from typing import Any

from pyox_agents.events import RunFailed, RunFinished, RuntimeEvent
from pyox_agents.runtime._to_the_end import to_the_end
from pyox_agents.service._live import LiveRun
from pyox_agents.service._thread_state import aligned
from pyox_agents.state.frozen import JSON, freeze
from pyox_agents.state.patch import apply_json, diff
from pyox_agents.state.stopped import StoppedByFinish
from pyox_agents.stores import Checkpoint, Store

__all__ = ["before_and_after", "record_run", "status_of"]

_log = logging.getLogger(__name__)


def status_of(last: RuntimeEvent) -> str | None:
    """How the run whose last event is `last` ended: "completed", "paused" (for a person),
    "stopped" (cancelled, or by a limit or permission) or "failed"; None when it did not end
    (its process shuts down and leaves it to be continued)."""
    if isinstance(last, RunFailed):
        return None if last.error.code == "server_shutdown" else "failed"
    if not isinstance(last, RunFinished):
        return None
    if last.outcome == "interrupt":
        return "paused"
    if last.outcome == "cancelled" or not isinstance(last.stopped, StoppedByFinish | None):
        return "stopped"
    return "completed"


async def record_run(store: Store | None, live: LiveRun, batch: Sequence[RuntimeEvent],
                     keep_state: bool) -> None:
    """Record `live`'s checkpoint as it ends with `batch` (its state kept already, and its
    thread not yet free). A failure is logged: the run has ended all the same, and its history
    lists it without a version (as it does when the store was unreachable during the run)."""
    run_id = live.run_id
    status = status_of(batch[-1]) if batch else None
    if store is None or run_id is None or status is None:
        return
    if live.store_away:
        return  # unreachable for one of its writes: this one would wait the timeout too
    if keep_state and live.kept is None:
        return  # another process took the thread over: it continues and records the run
    try:
        head: dict[str, Any] = {
            "status": status, "entries": await store.aentry_count(live.thread_id),
            "version": None, "run_key": live.run_key,
            "at": datetime.datetime.now(datetime.UTC).isoformat()}
        state = None
        if keep_state and live.versions is not None:
            after = live.versions.frozen()
            before = await _before(store, live, run_id)
            head["version"] = live.versions.version
            state = {"state": after,
                     "back": [op.to_json() for op in diff(after, aligned(after, before))]}
        await to_the_end(store.awrite_checkpoint(live.thread_id,
                                                    Checkpoint(run_id, head, state)))
    except Exception:
        _log.warning("thread %s: what run %s changed could not be recorded; its history will "
                     "list it without a version", live.thread_id, run_id, exc_info=True)


async def _before(store: Store, live: LiveRun, run_id: str) -> JSON:
    """The state the run started from: as recorded when it paused (a run that resumed), else
    its first event's."""
    if live.resumed:
        earlier = await store.aload_checkpoints(live.thread_id, [run_id], states=True)
        if earlier and earlier[0].state is not None:
            return before_and_after(earlier[0])[0]
    started = live.started  # (not `live.events`: it would make every token's event again)
    return None if started is None else started.state


def before_and_after(checkpoint: Checkpoint) -> tuple[JSON, JSON]:
    """The shared state a checkpointed run started from, and the one it left (read-only), of
    a checkpoint that holds a state (one whose server keeps it)."""
    assert checkpoint.state is not None, "the checkpoint's server kept no state"
    after = freeze(checkpoint.state["state"], "state")
    return apply_json(after, checkpoint.state["back"]), after
