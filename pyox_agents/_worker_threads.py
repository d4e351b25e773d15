"""Sync functions in worker threads, handed over and answered in batches.

`anyio.to_thread.run_sync` wakes a thread for each call and posts each result back on its
own. On a loop that serves many streams, each such hop costs several context switches and GIL
hand-overs: a sync tool's hop was ~15% of a short run's CPU at 1,000 concurrent runs
(bench/concurrency.py; docs/guides/performance.md). Here the calls made in one turn of the loop
go to a runner thread together; it runs them one after another and posts the results back
together. A blocking call must not hold up the others, so a runner that finishes nothing for
`STUCK` seconds while calls wait gets company: a runner for each waiting call, up to anyio's
thread limit. Runners are anyio worker threads (a function may use `anyio.from_thread`),
counted apart from anyio's limiter (an idle runner takes none of the tokens a store's calls
need); one that has had nothing to do for `IDLE` seconds ends.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import math
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

__all__ = ["IDLE", "STUCK", "run_sync"]

T = TypeVar("T")

STUCK = 0.01
"""Seconds a runner may finish no call while calls wait before more runners start (twice
Python's switch interval: a runner that only waits for the GIL finishes one sooner)."""
IDLE = 10.0
"""Seconds a runner waits for a call before it ends (anyio's own workers: the same)."""

_Job = tuple[contextvars.Context, Callable[[], Any], "asyncio.Future[Any]"]


def run_sync(function: Callable[[], T]) -> asyncio.Future[T]:
    """Run `function()` in a worker thread, in a copy of the caller's context; its result or
    error is the future's. Cancelling the future abandons the call: not run if it has not
    started, its result dropped if it has."""
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        pool = _pools[loop] = _Pool()
    future: asyncio.Future[T] = loop.create_future()
    if not pool.new:
        loop.call_soon(pool.hand_over, loop)
    pool.new.append((contextvars.copy_context(), function, future))
    return future


class _Pool:
    """One loop's runners, the calls waiting for them and the results on their way back. It
    holds no reference to its loop (the loop's entry in `_pools` goes with the loop)."""

    def __init__(self) -> None:
        self.new: list[_Job] = []
        """Calls made in this turn of the loop (the loop's thread only)."""
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._waiting: collections.deque[_Job] = collections.deque()
        self._idle = 0
        """Runners waiting for a call."""
        self._runners = 0
        self._limit = 40.0
        """The most runners at once: anyio's default thread limit, as a runner last saw it."""
        self._stopping = False
        self._done: list[tuple[asyncio.Future[Any], bool, Any]] = []
        self._posted = False
        """A `_deliver` is on its way to the loop (a finished call needs no other)."""
        self._finished = 0
        self._finished_seen = -1
        self._watching = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._unlimited = anyio.CapacityLimiter(math.inf)
        """Runners are counted here (`_runners`), not by anyio's default limiter."""

    # -- the loop's side ------------------------------------------------------------------------

    def hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        """Give this turn's calls to the runners at once: one wake-up, not one a call."""
        new, self.new = self.new, []
        with self._lock:
            self._waiting.extend(new)
            if self._idle:
                self._ready.notify()
            start = self._runners == 0
        if start:
            self._start_runners(loop, 1)
        if not self._watching:
            self._watching = True
            loop.call_later(STUCK, self._look, loop)

    def _look(self, loop: asyncio.AbstractEventLoop) -> None:
        """While calls wait: if no runner finished one since the last look, they are stuck
        (blocking calls): start a runner for each waiting call, as anyio would have."""
        with self._lock:
            waiting = len(self._waiting) - self._idle
            stuck = self._finished == self._finished_seen
            self._finished_seen = self._finished
            runners = self._runners
        if waiting <= 0:
            self._finished_seen = -1
            self._watching = False
            return
        if stuck:
            self._start_runners(loop, int(min(waiting, self._limit - runners)))
        loop.call_later(STUCK, self._look, loop)

    def _start_runners(self, loop: asyncio.AbstractEventLoop, count: int) -> None:
        with self._lock:
            self._runners += max(count, 0)
        for _ in range(count):
            task = loop.create_task(self._runner(weakref.ref(loop)))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _runner(self, loop: weakref.ref[asyncio.AbstractEventLoop]) -> None:
        self._limit = anyio.to_thread.current_default_thread_limiter().total_tokens
        try:
            await anyio.to_thread.run_sync(self._serve, loop, abandon_on_cancel=True,
                                           limiter=self._unlimited)
        except asyncio.CancelledError:
            with self._lock:  # the loop is closing: let the threads go
                self._stopping = True
                self._ready.notify_all()
            raise

    def _deliver(self) -> None:
        with self._lock:
            done, self._done = self._done, []
            self._posted = False
        for future, ok, value in done:
            if future.cancelled():
                continue
            if ok:
                future.set_result(value)
            elif isinstance(value, StopIteration):  # a future cannot hold one
                error = RuntimeError("a sync tool raised StopIteration")
                error.__cause__ = value
                future.set_exception(error)
            else:
                future.set_exception(value)

    # -- a runner's thread ----------------------------------------------------------------------

    def _serve(self, loop: weakref.ref[asyncio.AbstractEventLoop]) -> None:
        """Run waiting calls one after another until none has come for `IDLE` seconds."""
        lock = self._lock
        while True:
            with lock:
                while not self._waiting:
                    if self._stopping:
                        self._runners -= 1
                        return
                    self._idle += 1
                    called = self._ready.wait(IDLE)
                    self._idle -= 1
                    if not called and not self._waiting:
                        self._runners -= 1
                        return
                context, function, future = self._waiting.popleft()
            if future.cancelled():  # abandoned before it started (a read: as anyio does)
                outcome: tuple[bool, Any] = (False, None)
            else:
                try:
                    outcome = (True, context.run(function))
                except BaseException as exc:
                    outcome = (False, exc)
            with lock:
                self._finished += 1
                self._done.append((future, *outcome))
                post = not self._posted
                self._posted = True
            del context, function, future, outcome
            running = loop()
            if post and running is not None:
                try:
                    running.call_soon_threadsafe(self._deliver)
                except RuntimeError:  # the loop is closed: nobody waits for the results
                    with lock:
                        self._done.clear()
                        self._runners -= 1
                    return
            del running


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pool] = (
    weakref.WeakKeyDictionary())
"""Each loop's pool, gone with its loop."""
