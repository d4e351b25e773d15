"""Runs served over HTTP, whatever the protocol: one active run per thread, apart from the socket.

A protocol adapter turns its request into a `RunRequest`; `RunService.start` checks it (raising
`RequestError` or `Busy` before anything runs), opens the thread's conversation and starts the
run in a task of its own. Its events are kept in its `LiveRun` until it ends: a connection
follows it from the first, a reloaded page replays it, and a client that goes away does not
stop it (unless asked to)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import functools
import os
import secrets
import socket
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from pyox_agents._run_request import Busy, RequestError, RunRequest, run_tag
from pyox_agents.agent import Agent
from pyox_agents.events import RunFailed, RunFinished, RuntimeEvent
from pyox_agents.runtime._process_runs import SHUTDOWN
from pyox_agents.runtime._to_the_end import to_the_end
from pyox_agents.service._checkpoints import record_run
from pyox_agents.service._client_runs import stop_live
from pyox_agents.service._control import Control
from pyox_agents.service._double_texting import Queue
from pyox_agents.service._faults import kept_end, latest_kept, noted, refuse_unsaved, show
from pyox_agents.service._feed import EditLocks, Feeds, items_of
from pyox_agents.service._follow import Reads, RemoteFollowers, check_resumed
from pyox_agents.service._kept_cache import KeptStates
from pyox_agents.service._limits import ServerLimits, check_followers, check_limits
from pyox_agents.service._live import LiveRun
from pyox_agents.service._merge import merge_deltas
from pyox_agents.service._open import LOOK_UP
from pyox_agents.service._opening import open_run
from pyox_agents.service._owners import check_owner
from pyox_agents.service._sharing import keep_lease, published_meta, release, share_meta
from pyox_agents.service._shutdown import drain
from pyox_agents.service._thread_state import ThreadState
from pyox_agents.state._ids import is_id
from pyox_agents.state.run import AgentError, RunState
from pyox_agents.stores.base import SharedRuns, Store

__all__ = ["LOOK_UP", "RunService"]

_TAKES = 6
"""Tries to take a thread held elsewhere (a run, or an edit's moment), 10, 20, 40 ... ms apart."""


class _HeldElsewhere(Exception):
    """Another process holds the thread's lease: its run goes on there, or an edit."""


class RunService:
    """Starts, tracks and stops the runs of a server's agents.

    With a store that has leases and event logs (`RedisStore`), several server processes share
    the work: a run takes the thread's lease first (another process answers 409 while it holds
    it; a holder that died loses it after `lease_ttl` seconds), its step writes are fenced by the
    lease's token, and its events go to the store, so any process can replay and follow it.
    With `keep_state` (and a store), it keeps each thread's latest shared state between runs: a
    client that sends none (or a fresh page's `{}`) gets it, and a client's state is merged in
    as the person's edits on top of the version it last saw; without, a run starts from the
    client's state, or `{}`."""

    def __init__(self, store: Store | None = None, *, lease_ttl: float = 30.0,
                 owner: str | None = None, limits: ServerLimits | None = None,
                 keep_state: bool = False) -> None:
        self.store = store
        self.keep_state = keep_state and store is not None
        """Whether the thread's latest shared state is kept between runs (needs a store)."""
        self.limits = limits or ServerLimits()
        self._sharing = store if isinstance(store, SharedRuns) else None
        self.shared = self._sharing is not None
        """Whether runs are shared with other processes through the store."""
        self.lease_ttl = lease_ttl
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._active: dict[str, LiveRun] = {}
        self._queue = Queue()  # requests waiting for a thread's run to end (double texting)
        self._runs_of: collections.Counter[str | None] = collections.Counter()  # by principal
        self.closing = False  # shutting down (`shutdown`): new runs are refused with 503
        self._remote = RemoteFollowers()  # readers of other processes' runs, counted
        self.kept_states = KeptStates(self.shared)
        """The kept states this process wrote last (a store no other process writes)."""
        self.feeds = Feeds(self._sharing)  # what open tabs follow (`GET /threads/{id}/events`)
        self._control = Control(self._sharing, self._stop_here) if self._sharing else None
        self.edits = EditLocks()  # one person's edit of a thread's state at a time, here

    @property
    def _peers(self) -> SharedRuns:
        """The store, as the other processes' meeting place (shared runs only)."""
        assert self._sharing is not None, "runs are shared only through a SharedRuns store"
        return self._sharing

    async def running_elsewhere(self, thread_id: str) -> bool:
        """Whether another process runs a run on `thread_id` (shared runs only)."""
        return self.shared and await self._peers.aget_active(thread_id) is not None

    def active(self, thread_id: str) -> LiveRun | None:
        """The run active on `thread_id` in this process, or None."""
        return self._active.get(thread_id)

    async def follow(self, thread_id: str, after: int = -1, run: str | None = None
                     ) -> tuple[Reads, dict[str, Any]] | None:
        """The events of the run active on `thread_id` (here, or another process's through the
        store), from its first, each batch with the index of its first event (the same on every
        process), and its meta; None when none runs, or it is not run `run` (a `run_tag`: the
        run a resumed reader read, which has ended). `after`: the last event that reader has.

        Raises:
            RequestError: 429 when `limits.followers_per_run` readers follow the run already;
                400 when the run has no event `after` (yet).
        """
        if (live := self._active.get(thread_id)) is not None:
            if run is not None and run != run_tag(live.run_id or ""):
                return None
            check_followers(self.limits, live.followers)
            check_resumed(after, live.count, thread_id)
            return live.read(), live.meta
        if not self.shared or (run_key := await self._peers.aget_active(thread_id)) is None:
            return None
        reads = await self._remote.read(self._peers, thread_id, run_key, self.lease_ttl,
                                        self.limits, after, run)
        if reads is None:
            return None
        return reads, await published_meta(self._peers, run_key)

    async def paused(self, agent: Agent, thread_id: str) -> RunState | None:
        """The run of `thread_id` that waits for a person, or None: the pending-approval lookup
        a request that answers one needs (look it up once, give it to `start`). Check the
        caller owns the thread first (`check_owner`): its pending request is the owner's."""
        return await agent.apaused_run(thread_id)

    async def start(self, agent: Agent, request: RunRequest, *, name: str = "",
                    principal: str | None = None, paused: Any = LOOK_UP,
                    meta: Mapping[str, Any] | None = None) -> LiveRun:
        """Check `request` and start its run for `principal`; the `LiveRun` fills as it goes.
        `paused`: the thread's paused run as `paused()` found it, if the caller looked it up.
        `meta`: what the adapter keeps of the run (JSON), there from its start on (`publish_meta`).

        Raises:
            Busy: a run is already active on the thread.
            RequestError: the request cannot run (404 for another principal's thread, 413 over
                a size limit, 422 with the field, 429 over a concurrency limit).
            StoreUnavailable: the store could not save the run's start (nothing was saved).
        """
        if self.closing:
            raise RequestError(503, "the server is shutting down and starts no new run; send "
                                    "the request again in a moment", headers={"Retry-After": "1"})
        if not is_id(request.thread_id):
            raise RequestError(422, f"thread id {request.thread_id[:40]!r} must be 1 to 128 "
                                    "letters, digits, '_' or '-'", "threadId")
        await self.check_owner(request.thread_id, principal, agent)  # others': 404, not 409
        policy = request.double_texting or agent.double_texting
        for take in range(_TAKES):
            await self._queue.wait_turn(request.thread_id, policy,
                                        functools.partial(self._running_here, request.thread_id))
            try:
                return await self._take(agent, request, name, principal, paused, meta or {})
            except _HeldElsewhere:  # another process runs the thread: wait for its run
                if policy == "reject":
                    raise Busy(request.thread_id) from None
                await self._queue.wait_turn(request.thread_id, policy, functools.partial(
                    self._running_elsewhere, request.thread_id))
                await asyncio.sleep(0.01 * 2 ** take)
        raise Busy(request.thread_id)

    async def _take(self, agent: Agent, request: RunRequest, name: str, principal: str | None,
                    paused: Any, meta: Mapping[str, Any]) -> LiveRun:
        """Take the thread (this process's runs, then its lease) and start the request's run.

        Raises:
            _HeldElsewhere: another process holds the thread's lease (nothing was started).
        """
        # From here to `_add_active`, no await: the limits are checked and counted at once, so
        # requests that arrive together cannot all pass the check before any is counted.
        # Without auth (principal None) every client is one principal: its cap would be the
        # server's, so then only `runs_total` applies.
        limits = self.limits if principal is not None else dataclasses.replace(
            self.limits, runs_per_principal=None)
        check_limits(limits, request, running=len(self._active),
                     running_for_principal=self._runs_of[principal])
        if request.thread_id in self._active:
            raise Busy(request.thread_id)
        live = LiveRun(request.thread_id, name, principal, meta=dict(meta))
        self._add_active(live)
        try:
            if self._control is not None:  # (stop requests reach this process's runs)
                await self._control.start(self.owner)
                token = await self._peers.aacquire_lease(
                    request.thread_id, self.owner, self.lease_ttl
                )
                if token is None:
                    raise _HeldElsewhere
                live.lease = token
            handle = await open_run(self, agent, request, live, principal, paused)
        except BaseException:
            self._remove_active(live)
            live.end()  # whoever began to follow it (a connect) hears it never ran
            if live.lease is not None:
                await self._peers.arelease_lease(request.thread_id, self.owner, live.lease)
            raise
        live.handle = handle
        live.texts = handle.text_of  # before its first event: its reply's text is kept once
        batches = handle.batches(keep_pace=self.keep_state)  # (its end after what it showed)
        if self.shared:
            live.run_key = secrets.token_hex(16)
            try:  # its meta first: whoever finds the run finds its meta
                if meta:
                    await self.publish_meta(live, meta)
                await self._peers.aset_active(request.thread_id, live.run_key, self.lease_ttl)
            except BaseException:  # the run has not begun: nothing of it is lost
                await batches.aclose()  # type: ignore[attr-defined]
                self._remove_active(live)  # its lease is released, or expires after lease_ttl
                with contextlib.suppress(Exception):
                    await self._peers.arelease_lease(request.thread_id, self.owner, live.lease or 0)
                raise
        live.task = asyncio.create_task(self._pump(live, batches), name=f"serve {name}")
        await refuse_unsaved(live)
        return live

    async def _running_here(self, thread_id: str) -> LiveRun | None:  # (awaited by the queue)
        return self._active.get(thread_id)

    async def _running_elsewhere(self, thread_id: str) -> Reads | None:
        """The events of the run another process runs on `thread_id`, or None."""
        found = await self.follow(thread_id)
        return None if found is None else found[0]

    async def check_owner(self, thread_id: str, principal: str | None,
                          agent: Agent | None = None) -> None:
        """404 unless `thread_id` is new or belongs to `principal` (others' threads are not
        there, as far as a principal can tell). `agent`: the one the request is for (without
        a store, it keeps the owners of its paused runs)."""
        await check_owner(thread_id, principal, active=self._active, store=self.store, agent=agent)

    @contextlib.asynccontextmanager
    async def holding(self, thread_id: str, principal: str | None, *,
                      remembers: bool = False) -> AsyncIterator[int | None]:
        """Hold `thread_id` as a run holds it, while its owner changes it apart from a run
        (rewinds it, undoes a run, deletes it, edits its state: `remembers`, it tells
        `kept_states` what it keeps): a run meanwhile is refused. Gives the lease's token.

        Raises:
            Busy: a run is going on the thread, here or in another process.
        """
        if thread_id in self._active:
            raise Busy(thread_id)
        held = LiveRun(thread_id, "", principal, held=True)  # no events: it holds the thread
        self._add_active(held)
        try:
            if self.shared:
                held.lease = await self._peers.aacquire_lease(thread_id, self.owner, self.lease_ttl)
                if held.lease is None:
                    raise Busy(thread_id)
            yield held.lease
        finally:
            if not remembers:  # a rewind, an undo or a delete wrote the store: read it again
                self.kept_states.remember(thread_id, None)
            self._remove_active(held)
            try:
                if (lease := held.lease) is not None:
                    await to_the_end(self._peers.arelease_lease(thread_id, self.owner, lease))
            finally:
                held.end()

    async def publish_meta(self, live: LiveRun, meta: Mapping[str, Any]) -> None:
        """Share what an adapter keeps of a run (`meta`, JSON) with other processes (again:
        its keys replace those published before)."""
        if self.shared and live.run_key is not None:
            await share_meta(self._peers, live.run_key, meta)

    async def stop(self, thread_id: str, run_id: str | None = None) -> bool:
        """Cancel the run active on `thread_id` (here, or through the store in the process
        that runs it); False if none was, or it is not the client's run `run_id` (a stop
        that names one: `_client_runs`). What it committed stays."""
        live = self._active.get(thread_id)
        if live is None:
            return self._control is not None and await self._control.stop_elsewhere(
                thread_id, run_id)
        return await stop_live(live, run_id)

    async def shutdown(self, grace: float) -> None:
        """Stop serving runs, gracefully: new runs are refused (503), each active run finishes
        the step it is in and stops at its next step boundary, and those still going after
        `grace` seconds stop where they are. A run stopped so is not recorded "cancelled": its
        record stays as last saved, and the thread's next request (on any process) continues
        it, as after a crash. Its stream ends with `RunFailed(code="server_shutdown")`."""
        self.closing = True
        await drain(self._active, grace)

    async def close(self) -> None:
        """Cancel every active run, stop following feed logs (the server is shutting down)."""
        for thread_id in list(self._active):
            await self.stop(thread_id)
        self.feeds.stop()
        if self._control is not None:
            self._control.close()

    async def _stop_here(self, thread_id: str, run_key: str) -> None:
        if (live := self._active.get(thread_id)) and live.run_key == run_key:  # (not a later one)
            await self.stop(thread_id)

    def _add_active(self, live: LiveRun) -> None:
        self._active[live.thread_id] = live
        self._runs_of[live.principal] += 1

    def _remove_active(self, live: LiveRun) -> None:
        if self._active.get(live.thread_id) is live:
            del self._active[live.thread_id]
            self._runs_of[live.principal] -= 1
            if not self._runs_of[live.principal]:
                del self._runs_of[live.principal]

    async def _pump(self, live: LiveRun, batches: AsyncIterator[list[RuntimeEvent]]) -> None:
        """Keep the run's events (and share them) until it ends; a cancel ends it "cancelled",
        the server's time limit `run_timeout`."""
        deadline = self.limits.run_seconds
        keeper = None  # the lease is kept while the process lives, events or not
        if live.run_key is not None:
            keeper = asyncio.create_task(keep_lease(self._peers, live, self.owner,
                                                    self.lease_ttl), name="keep lease")
        try:
            async with asyncio.timeout(deadline) as limit:
                try:
                    async with contextlib.aclosing(batches):  # type: ignore[type-var]
                        async for batch in batches:
                            if live.run_key is not None:  # the store logs each event alone:
                                batch = merge_deltas(batch)  # deltas that came together, one
                            if isinstance(batch[-1], RunFinished | RunFailed):  # the last ones
                                await to_the_end(self._finish(live, batch))
                                continue
                            shown = await show(self.store, self._sharing, live, batch)
                            self.kept_states.remember(live.thread_id, live.kept_whole())
                            self._publish(live, shown)
                except asyncio.CancelledError:
                    if limit.expired():  # ended below, with `run_timeout`
                        raise
                    await to_the_end(self._cancelled(live))  # (a second stop waits for it)
                    raise
        except TimeoutError:
            failed = RunFailed(AgentError("run_timeout", f"the run took longer than {deadline:g} "
                                          "s, the server's limit, and was stopped"))
            await to_the_end(self._finish(live, [*live.open_texts(), failed]))
        finally:
            if keeper is not None:
                keeper.cancel()
            self._remove_active(live)
            try:
                if live.lease is not None:  # the run ended without telling its end
                    await to_the_end(release(self._peers, live, self.owner, self.lease_ttl))
            finally:
                live.end()

    async def _cancelled(self, live: LiveRun) -> None:
        """End a run cancelled before its last event: "cancelled", or the server's shutdown.
        What the run emitted that the pump had not taken comes first: a version of the state
        it committed (its tool's result is saved) must be kept with the run's end."""
        left = live.handle.untaken() if live.handle is not None else []
        if left and isinstance(left[-1], RunFinished | RunFailed):
            return await self._finish(live, left)
        self._publish(live, await noted(self.store, live, left))
        if not isinstance(live.last(), RunFinished | RunFailed):
            final = RunFailed(SHUTDOWN) if live.shutdown else RunFinished(
                answer=None, state=live.last_state(), outcome="cancelled")
            await self._finish(live, [*live.open_texts(), final])

    async def _finish(self, live: LiveRun, batch: Sequence[RuntimeEvent]) -> None:
        """Tell the run's end (`batch`'s last event, saying if keeping its state failed) once its
        state is kept and its thread and lease freed: who hears it finds the thread free. Run
        `to_the_end`: a cancel meanwhile (a second stop) must not leave the end saved, untold."""
        if isinstance(live.last(), RunFinished | RunFailed):
            return  # told already (the time limit came as it was told)
        batch = await kept_end(self.store, live, batch)
        self.kept_states.remember(live.thread_id, live.kept_whole())
        await record_run(self.store, live, batch, self.keep_state)
        self._remove_active(live)
        if live.lease is not None:
            await release(self._peers, live, self.owner, self.lease_ttl, batch)
        live.add(batch)
        self._publish(live, batch)

    def _publish(self, live: LiveRun, batch: Sequence[RuntimeEvent]) -> None:
        """Tell the thread's feed what `batch` brings (its versions, messages, the run's end)."""
        if batch and self.feeds.wanted(live.thread_id, live.principal):
            self.feeds.publish(live.thread_id, live.principal,
                               items_of(batch, live.run_id, live.start_delta, live.conversation))

    async def kept_state(self, thread_id: str) -> ThreadState:
        """The thread's kept shared state (version 0 when none is kept), a copy: a run that has
        not ended has its latest. A store this process alone writes is read once per thread."""
        if not self.keep_state:
            return ThreadState()
        store = self.store
        assert store is not None  # (keep_state needs one)
        return await self.kept_states.read(thread_id, lambda: latest_kept(store, thread_id))
