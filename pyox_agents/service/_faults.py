"""A run's shared state kept as it goes, and its end told: the thread's kept state is written
before the client is shown a version of it, and the client is told when the store failed to
keep it.

Never behind what the client saw: each batch of a run's events that brings a new version of
the shared state (its start, a tool's change) is kept first (`keep`), then added to the run's
events, which the client follows. A process killed at any moment has kept every version it
showed; a version it committed but did not keep yet is the thread's run record's (the run has
not ended, and `kept_and_committed` reads it from there). The run that continues it starts
from that version, so it keeps it with its own: once it ends (and its record no longer holds
a state), the thread's kept state is still the last version its client was shown. This holds
on every store alike: it asks nothing of a store's transactions. A shared run's write is fenced
by its lease token: once another process took the thread over, the stale process keeps nothing
more (what its run committed before is in its record, which the new owner continues).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import anyio.to_thread

from pyox_agents._redact import redact_text
from pyox_agents.events import RunFailed, RunFinished, RunStarted, RuntimeEvent, StateChanged
from pyox_agents.runtime._to_the_end import to_the_end
from pyox_agents.service._kept_writes import write_kept
from pyox_agents.service._live import LiveRun
from pyox_agents.service._sharing import share
from pyox_agents.service._thread_state import ThreadState, aligned
from pyox_agents.state.patch import Op, diff, parse_patch
from pyox_agents.state.run import AgentError
from pyox_agents.stores import StoreConflict, StoreUnavailable
from pyox_agents.stores.base import SharedRuns, Store

__all__ = [
    "keep", "kept_and_committed", "latest_kept", "numbered", "refuse_unsaved", "show", "told",
    "unkept",
]

_log = logging.getLogger(__name__)


# tuples built once: `isinstance(event, A | B)` would build a union per event
_NEW_VERSION = (RunStarted, StateChanged)
"""Events that bring a version of the shared state."""


async def keep(store: Store | None, live: LiveRun, batch: Sequence[RuntimeEvent],
               write: bool = True) -> AgentError | None:
    """Keep the versions of the shared state the run went through, up to `batch`, as the
    thread's: before `batch` is shown to the client, so that what a client saw is kept even if
    the process is killed right after (see the module's docstring). Written only when `batch`
    (or the run's start) brings a new version, or an earlier write failed; not interrupted by
    a cancel. With `write` False, the versions are only noted (the next write keeps them).

    Returns why the state could not be kept (the store failed), or None: the run's end then
    tells the client so (`told`), instead of the stream ending without a word. A write refused
    for a stale lease token (another process took the thread over and keeps its state) is
    logged, and nothing more is kept of this run."""
    if live.kept is None or store is None:
        return None
    versions = _versions(live)
    numbered = live.base is not None
    for event in batch:
        if type(event) is StateChanged and numbered:
            versions.add(event.state, event.version, _ops(versions, event.delta))
        elif isinstance(event, _NEW_VERSION):
            versions.add(event.state, event.version if numbered else None)
    if not write or versions.version == live.kept.version:
        return None
    try:
        await to_the_end(write_kept(store, live.thread_id, versions, live.lease))
    except StoreConflict:  # fenced: the thread passed on, its new owner's state stands
        _log.warning("thread %s: its shared state was not kept: another process took the "
                     "thread over", live.thread_id, exc_info=True)
        live.kept = None
        return None
    except Exception as exc:  # kept by the next batch's write, or told at the run's end
        _log.warning("thread %s: its shared state could not be kept", live.thread_id,
                     exc_info=True)
        if isinstance(exc, StoreUnavailable):  # its end tries again, once
            live.store_away = True
        return unkept(exc)
    live.kept = versions.copy()  # what the store holds now
    return None


def _ops(versions: ThreadState, delta: Sequence[Mapping[str, Any]]) -> list[Op] | None:
    """The ops of a change's `delta` on the latest version (None: they do not apply to it)."""
    try:
        return parse_patch(versions.frozen(), delta)[1]
    except (ValueError, TypeError):
        return None


def _versions(live: LiveRun) -> ThreadState:
    """The versions the run went through so far, from the kept state and its start on."""
    if live.versions is None:
        assert live.kept is not None
        live.versions = live.kept.copy()
        for state in live.start:  # kept even when the run ended before it announced it
            live.versions.add(state)
    return live.versions


def numbered(live: LiveRun, batch: Sequence[RuntimeEvent]) -> Sequence[RuntimeEvent]:
    """`batch` with its versions of the state numbered as the thread's (servers that keep
    the state): the run's start is the kept version it equals, or the next one."""
    if live.base is None and live.kept is not None and batch and \
            type(batch[0]) is RunStarted:
        versions = _versions(live)
        live.base = versions.number_of(batch[0].state)
        if live.base > live.kept.version:  # the request brought changes: a version of its own
            live.start_delta = [op.to_json() for op in diff(live.kept.frozen(),
                                                            aligned(versions.frozen(),
                                                                    batch[0].state))]
    return live.numbered(batch)


async def kept_and_committed(store: Store, thread_id: str) -> tuple[ThreadState, Any]:
    """The thread's kept state as `store` holds it, and apart from it the state its run that
    has not ended committed (None: no such run, or a state the kept one already holds). A run
    that shows that state keeps it as a new version: the store's kept state may not have it (a
    process killed between a tool's save and keeping its change left it in the run's record
    only: a tool's change is saved with its result before it is kept and shown). One it holds
    is behind it, not ahead (a person's edit during the run is kept, not in the record), so
    the kept state stands."""
    data = await store.aload_kept_state(thread_id)
    kept = ThreadState() if data is None else ThreadState.from_json(data)
    with contextlib.suppress(LookupError):
        loaded = await store.aload_thread(thread_id)
        if loaded.shared_version is not None and loaded.shared_state is not None \
                and not await anyio.to_thread.run_sync(kept.holds, loaded.shared_state):
            return kept, loaded.shared_state  # (a look at each kept version: off the loop)
    return kept, None


async def latest_kept(store: Store, thread_id: str) -> ThreadState:
    """The thread's kept state with, as its latest version, what its run that has not ended
    committed (see `kept_and_committed`)."""
    kept, committed = await kept_and_committed(store, thread_id)
    if committed is not None:
        kept.add(committed)
    return kept


async def kept_end(store: Store | None, live: LiveRun, batch: Sequence[RuntimeEvent]
                   ) -> list[RuntimeEvent]:
    """The run's last `batch` numbered, its state kept, and its end saying if that failed."""
    batch = numbered(live, batch)
    return [*batch[:-1], told(batch[-1], await keep(store, live, batch))]


async def noted(store: Store | None, live: LiveRun, batch: Sequence[RuntimeEvent]
                ) -> Sequence[RuntimeEvent]:
    """`batch` numbered, its versions noted (the run's end writes them) and added to the run's
    log: what a cancelled run emitted that its reader had not taken (`RunHandle.untaken`)."""
    batch = numbered(live, batch)
    await keep(store, live, batch, write=False)
    live.add(batch)
    return batch


async def show(store: Store | None, peers: SharedRuns | None, live: LiveRun,
               batch: Sequence[RuntimeEvent]) -> Sequence[RuntimeEvent]:
    """Keep the state `batch` brings, then show it to the run's followers (and share it with
    other processes through `peers`, for a shared run).

    A cancel that lands while the state is kept is taken at the run's next wait, once the
    events the run emitted meanwhile are kept and shown too: they may tell what it committed,
    which the thread's kept state must not miss. Gives `batch` as shown (`numbered`)."""
    batch = numbered(live, batch)
    changed = any(isinstance(event, StateChanged) for event in batch)
    try:  # the start alone is the client's own state: kept with the run's next version
        await keep(store, live, batch, changed and not live.store_away)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()  # again: taken when the run has no more events to give
    live.add(batch)
    if live.run_key is not None and not live.store_away:
        assert peers is not None
        await share(peers, live)
    return batch


def unkept(exc: BaseException) -> AgentError:
    """The error of a thread whose latest shared state the store did not take: the store's
    words (secrets hidden) for the run's record, none of them for the client."""
    away = isinstance(exc, StoreUnavailable)
    what = "the store is unreachable" if away else "the store failed"
    return AgentError(
        "store_unavailable" if away else "store_error",
        redact_text(f"the run's steps were saved, but the thread's latest shared state could "
                    f"not be kept ({type(exc).__name__}: {exc}); the page still holds it: send "
                    "your next message once the store is back"),
        f"the run's steps were saved, but the thread's latest shared state could not be kept "
        f"({what}); the page still holds it: send your next message once the store is back")


def told(last: RuntimeEvent, failure: AgentError | None) -> RuntimeEvent:
    """The run's last event, or, when keeping its state failed, a `RunFailed` saying so in its
    place: the stream still ends with a terminal event, and the client learns what was lost."""
    if failure is None:
        return last
    if isinstance(last, RunFailed):
        return RunFailed(AgentError(last.error.code, f"{last.error.message}; {failure.message}",
                                    f"{last.error.public_message}; {failure.public_message}"))
    assert isinstance(last, RunFinished), last
    return RunFailed(failure)


async def refuse_unsaved(live: LiveRun) -> None:
    """Wait for the run's first event (its start, once saved); if the store was unavailable
    for that first save, raise `StoreUnavailable`: nothing of the run exists, so the request
    is refused (503, `Retry-After`) rather than answered with a stream of one error."""
    async with contextlib.aclosing(live.follow_batches()) as batches:
        first = (await anext(batches, [None]))[0]
    if isinstance(first, RunFailed) and first.error.code == "store_unavailable":
        raise StoreUnavailable(first.error.message)
