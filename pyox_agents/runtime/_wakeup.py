"""`Wakeup`: wake the tasks that wait for a run's next events, at no cost while none waits.

A run emits dozens of events per model reply; its consumers (the task streaming it, a server's
followers) mostly find them already there. A waiter therefore waits on a bare future of its own,
made only when it waits (no `asyncio.Event`, whose lock-style bookkeeping and deque cost more
than the wait itself, once per token of a slow stream), so an event that nobody waits for costs
a single attribute check. Each waiter has its own future: one cancelled does not wake the others.
"""

from __future__ import annotations

import asyncio

__all__ = ["Wakeup"]


class Wakeup:
    """Wake whoever waits in `wait`; `notify` without a waiter does nothing."""

    __slots__ = ("_others", "_waiter")

    def __init__(self) -> None:
        self._waiter: asyncio.Future[None] | None = None
        self._others: list[asyncio.Future[None]] | None = None

    def notify(self) -> None:
        """Wake the tasks waiting now; later waiters wait for the next `notify`."""
        waiter = self._waiter
        if waiter is None:
            return
        self._waiter = None
        if not waiter.done():  # a waiter cancelled meanwhile has its future cancelled
            waiter.set_result(None)
        others = self._others
        if others is not None:
            self._others = None
            for other in others:
                if not other.done():
                    other.set_result(None)

    async def wait(self) -> None:
        """Return at the next `notify`."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._waiter is None:
            self._waiter = future
        elif self._others is None:
            self._others = [future]
        else:
            self._others.append(future)
        await future
