"""Stopping a run that another server process executes.

Each process that runs shared runs follows a control log of its own in the store,
`control:<owner>` (one reader per process, not one per run). A process asked to stop a thread's
run that it does not execute finds the run's process by the thread's lease, whose holder is that
process's `owner`, and appends the request to that process's control log; the process cancels
the run as its own stop would (it ends "cancelled", what it committed stays), and its end
reaches every follower through the run's event log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable

import anyio
import anyio.to_thread

from pyox_agents.service._client_runs import is_named
from pyox_agents.service._sharing import published_meta
from pyox_agents.stores.base import SharedRuns

__all__ = ["Control", "control_key"]

_log = logging.getLogger(__name__)

WAIT_FOR_END = 5.0
"""Seconds a stop asked of another process waits for the run's end before it answers."""


def control_key(owner: str) -> str:
    """The key of the control log of the process whose leases name `owner`."""
    return f"control:{owner}"


class Control:
    """This process's control log (`start` follows it) and the stop requests sent to others'.

    `stop_here(thread_id, run_key)` stops the thread's run here if it is the run `run_key`.
    """

    RETRY = 1.0
    """Seconds between two tries to follow the control log again after the store failed."""

    def __init__(self, peers: SharedRuns,
                 stop_here: Callable[[str, str], Awaitable[object]]) -> None:
        self.peers = peers
        self._stop_here = stop_here
        self._reader: asyncio.Task[None] | None = None
        self._following: asyncio.Future[None] | None = None

    async def start(self, owner: str) -> None:
        """Follow the control log of `owner` (this process) from its end, once (later calls
        wait for the first).

        Raises:
            StoreUnavailable: the store cannot be reached (the next call tries again).
        """
        if self._following is None or (self._following.done()
                                       and self._following.exception() is not None):
            self._following = asyncio.get_running_loop().create_future()
            self._reader = asyncio.create_task(self._follow(owner, self._following),
                                               name="control log")
        await asyncio.shield(self._following)

    def close(self) -> None:
        """Stop following the control log."""
        if self._reader is not None:
            self._reader.cancel()

    async def stop_elsewhere(self, thread_id: str, run_id: str | None = None) -> bool:
        """Ask the process that runs `thread_id`'s run to stop it, and wait (up to
        `WAIT_FOR_END` seconds) for its end; False when no run goes on the thread, or it is
        not the client's run `run_id` (read in the run's meta log: `is_named`). The request
        names the run's `run_key`: that process stops that run, never a later one."""
        run_key = await self.peers.aget_active(thread_id)
        holder = await anyio.to_thread.run_sync(self.peers.lease_holder, thread_id)
        if run_key is None or holder is None:
            return False
        if run_id is not None and not is_named(await published_meta(self.peers, run_key), run_id):
            return False
        request = json.dumps({"stop": thread_id, "run_key": run_key})
        await self.peers.aappend_events(control_key(holder[0]), [request])
        events = self.peers.follow_events(run_key)
        with anyio.move_on_after(WAIT_FOR_END):
            async with contextlib.aclosing(events):  # type: ignore[type-var]
                async for _ in events:
                    pass  # (the log ends with the run)
        return True

    async def _follow(self, owner: str, following: asyncio.Future[None]) -> None:
        key = control_key(owner)
        try:
            after = await self.peers.alast_event_id(key)
        except Exception as exc:
            following.set_exception(exc)
            following.exception()  # (retrieved: nobody may wait for it)
            return
        following.set_result(None)
        while True:
            try:
                async for id, text in self.peers.follow_events(key, after):
                    after = id
                    request = json.loads(text)
                    await self._stop_here(str(request["stop"]), str(request["run_key"]))
                after = "0"  # the log expired and ended: a new one starts at its first entry
            except Exception:
                task = asyncio.current_task()
                if task is not None and task.cancelling():  # the driver's error for a cancel
                    raise asyncio.CancelledError from None
                _log.warning("the control log %s could not be followed; trying again", key,
                             exc_info=True)
                await asyncio.sleep(self.RETRY)
