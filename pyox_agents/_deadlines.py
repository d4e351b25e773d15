"""Timers far ahead (an open stream's next keep-alive, a run's time limit), off asyncio's heap.

asyncio keeps every timer of a loop in one heap ordered by `TimerHandle.__lt__`, a Python call
per comparison. Each open stream kept two timers there that rarely fire (its run's limit,
minutes ahead; its keep-alive look, 15 s ahead), and every token's short sleep climbed past
them: ~7 more Python calls a token at 200 paced streams, 7% of a token's instructions at 1,000
(1-2 µs of ~32 over HTTP, bench/paced_streams.py alternated with the code before;
docs/guides/performance.md). Here such timers wait in a heap of `(when, n, Deadline)` tuples,
compared in C, and the loop holds one asyncio timer, at the earliest of them. Each one's
callback runs as `loop.call_soon` runs it.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import weakref
from collections.abc import Callable

__all__ = ["Deadline", "call_later"]


class Deadline:
    """One timer of `call_later`: `cancel()` it and its callback never runs."""

    __slots__ = ("_timers", "callback")

    def __init__(self, timers: _Timers, callback: Callable[[], object]) -> None:
        self._timers = timers
        self.callback: Callable[[], object] | None = callback
        """None once cancelled or run."""

    def cancel(self) -> None:
        """Do not run the callback (nothing happens if it ran already)."""
        if self.callback is not None:
            self.callback = None
            self._timers.cancelled()


def call_later(delay: float, callback: Callable[[], object]) -> Deadline:
    """Run `callback` in the running loop `delay` seconds from now, as `loop.call_later` does,
    for a timer that will mostly be cancelled before it is due."""
    loop = asyncio.get_running_loop()
    timers = _timers.get(loop)
    if timers is None:
        timers = _timers[loop] = _Timers()
    return timers.add(loop, loop.time() + delay, callback)


class _Timers:
    """The far timers of one loop, and the one asyncio timer at the earliest. It holds no
    reference to its loop (the loop's entry in `_timers` goes with the loop)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._armed: weakref.ref[asyncio.TimerHandle] | None = None
        """The loop's timer at the earliest, weakly: a pending one holds its loop."""
        self._armed_at = math.inf
        self._cancelled = 0

    def add(self, loop: asyncio.AbstractEventLoop, when: float, callback: Callable[[], object]
            ) -> Deadline:
        deadline = Deadline(self, callback)
        heapq.heappush(self._heap, (when, next(self._order), deadline))
        if when < self._armed_at:
            self._arm(loop, when)
        return deadline

    def cancelled(self) -> None:
        """One more entry is cancelled: past half the heap, drop them all (as asyncio does)."""
        self._cancelled += 1
        heap = self._heap
        if self._cancelled > 50 and self._cancelled * 2 > len(heap):
            heap[:] = [entry for entry in heap if entry[2].callback is not None]
            heapq.heapify(heap)
            self._cancelled = 0

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        armed = None if self._armed is None else self._armed()
        if armed is not None:
            armed.cancel()
        self._armed_at = when
        self._armed = weakref.ref(loop.call_at(when, self._fire))

    def _fire(self) -> None:
        heap, loop = self._heap, asyncio.get_running_loop()
        due = max(self._armed_at, loop.time())  # (the loop runs a timer a clock tick early)
        self._armed, self._armed_at = None, math.inf
        # the due ones, and the cancelled ones on top after them
        while heap and (heap[0][0] <= due or heap[0][2].callback is None):
            deadline = heapq.heappop(heap)[2]
            callback, deadline.callback = deadline.callback, None
            if callback is None:
                self._cancelled -= 1
            else:
                loop.call_soon(callback)
        if heap:
            self._arm(loop, heap[0][0])


_timers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Timers] = \
    weakref.WeakKeyDictionary()
"""Each running loop's far timers (a loop that is gone takes its own with it)."""
