"""A second message while a run is going on its thread ("double texting", as LangGraph Platform
names it): `reject` answers 409; `enqueue` waits for the run to end, then starts (the default:
no message is lost and the thread keeps the order the messages came in); `interrupt` stops the
running run at its next step boundary (its finished steps kept, its stream ended "cancelled"),
then starts. Per agent (`Agent(double_texting=...)`) and per request (AG-UI
`forwardedProps.doubleTexting`, the AI SDK body's `doubleTexting`)."""

from __future__ import annotations

import collections
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from pyox_agents._run_request import Busy, DoubleTexting
from pyox_agents.runtime._process_runs import interrupt_at_step_boundary
from pyox_agents.service._live import LiveRun

__all__ = ["WAITING_PER_THREAD", "Queue"]

WAITING_PER_THREAD = 4
"""How many requests may wait for a thread's run at once; one more is refused (409)."""


class Queue:
    """The requests waiting, per thread, for the run going on it to end."""

    def __init__(self) -> None:
        self._waiting: collections.Counter[str] = collections.Counter()

    async def wait_turn(self, thread_id: str, policy: DoubleTexting,
                        running: Callable[[], Awaitable[LiveRun | AsyncIterator[Any] | None]],
                        ) -> None:
        """Wait, as `policy` says, until no run goes on `thread_id` (`running()` gives the run
        of this process, or the events of another process's, or None when none runs).

        Raises:
            Busy: `policy` is "reject" and a run goes on, or too many requests wait already.
        """
        while (run := await running()) is not None:
            if policy == "reject" or self._waiting[thread_id] >= WAITING_PER_THREAD:
                raise Busy(thread_id)
            self._waiting[thread_id] += 1
            try:
                if isinstance(run, LiveRun):
                    if policy == "interrupt" and run.run_id is not None:
                        interrupt_at_step_boundary(run.run_id)
                    await run.ended()
                else:  # another process's run: followed to its end (it cannot be interrupted
                    async for _ in run:  # from here: the request waits, as enqueued)
                        pass
            finally:
                self._waiting[thread_id] -= 1
                if not self._waiting[thread_id]:
                    del self._waiting[thread_id]
