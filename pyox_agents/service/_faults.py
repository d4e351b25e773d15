"""A run's end, kept and told: the thread's shared state kept when the run ends, and the
client told when the store failed to keep it (after the run's last step)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

from pyox_agents.events import RunFailed, RunFinished, RunStarted, RuntimeEvent, StateChanged
from pyox_agents.service._live import LiveRun
from pyox_agents.state.run import AgentError
from pyox_agents.stores import StoreConflict, StoreUnavailable
from pyox_agents.stores.base import Store

__all__ = ["keep", "refuse_unsaved", "told", "unkept"]

_log = logging.getLogger(__name__)


async def keep(store: Store | None, live: LiveRun, last: Sequence[RuntimeEvent]
               ) -> AgentError | None:
    """Keep the versions of the shared state the run went through (its start, its events,
    then `last`) as the thread's: before its end is told, so the client's next request
    finds them. The write is not interrupted by a cancel, and is made once per run. A shared
    run's write is fenced by its lease token: a process whose thread was taken over (its
    lease expired while it was stopped) leaves the new owner's state as it is, with a log
    line, and its stream still ends with the run's end.

    Returns why the state could not be kept (the store failed), or None: the run's end then
    tells the client so (`told`), instead of the stream ending without a word."""
    if live.kept is None or store is None:
        return None
    kept = live.kept.copy()
    for state in live.start:  # kept even when the run ended before it announced it
        kept.add(state)
    for event in (*live.events, *last):
        if isinstance(event, RunStarted | StateChanged):
            kept.add(event.state)
    unchanged = kept.version == live.kept.version
    live.kept = None  # kept: once per run
    if unchanged:
        return None
    try:
        await asyncio.shield(store.awrite_kept_state(live.thread_id, kept.to_json(), live.lease))
    except StoreConflict:  # fenced: another process took the thread over, its state stands
        _log.warning("thread %s: its shared state was not kept: another process took the "
                     "thread over", live.thread_id, exc_info=True)
        return None
    except Exception as exc:
        _log.warning("thread %s: its shared state could not be kept", live.thread_id,
                     exc_info=True)
        return unkept(exc)
    return None


def unkept(exc: BaseException) -> AgentError:
    """The error of a thread whose latest shared state the store did not take."""
    code = "store_unavailable" if isinstance(exc, StoreUnavailable) else "store_error"
    return AgentError(code, f"the run's steps were saved, but the thread's latest shared state "
                            f"could not be kept ({type(exc).__name__}: {exc}); the page still "
                            "holds it: send your next message once the store is back")


def told(last: RuntimeEvent, failure: AgentError | None) -> RuntimeEvent:
    """The run's last event, or, when keeping its state failed, a `RunFailed` saying so in its
    place: the stream still ends with a terminal event, and the client learns what was lost."""
    if failure is None:
        return last
    if isinstance(last, RunFailed):
        return RunFailed(AgentError(last.error.code, f"{last.error.message}; {failure.message}"))
    assert isinstance(last, RunFinished), last
    return RunFailed(failure)


async def refuse_unsaved(live: LiveRun) -> None:
    """Wait for the run's first event (its start, once saved); if the store was unavailable
    for that first save, raise `StoreUnavailable`: nothing of the run exists, so the request
    is refused (503, `Retry-After`) rather than answered with a stream of one error."""
    async with contextlib.aclosing(live.follow_batches()) as batches:  # type: ignore[type-var]
        first = (await anext(batches, [None]))[0]
    if isinstance(first, RunFailed) and first.error.code == "store_unavailable":
        raise StoreUnavailable(first.error.message)
