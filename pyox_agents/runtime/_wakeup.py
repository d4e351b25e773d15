"""`Wakeup`: wake the tasks that wait for a run's next events, at no cost while none waits.

A run emits dozens of events per model reply; its consumers (the task streaming it, a server's
followers) mostly find them already there. The `asyncio.Event` they wait on is therefore made
only when one of them waits, and dropped once set, so an event that nobody waits for costs a
single attribute check.
"""

from __future__ import annotations

import asyncio

__all__ = ["Wakeup"]


class Wakeup:
    """Wake whoever waits in `wait`; `notify` without a waiter does nothing."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event: asyncio.Event | None = None

    def notify(self) -> None:
        """Wake the tasks waiting now; later waiters wait for the next `notify`."""
        if self._event is not None:
            self._event.set()
            self._event = None

    async def wait(self) -> None:
        """Return at the next `notify`."""
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()
