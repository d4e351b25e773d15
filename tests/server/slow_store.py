"""A MemoryStore whose reads a test can hold: a read slowed by a busy machine, at the moment
the test chooses."""

from __future__ import annotations

import asyncio
from typing import Any

from pyox_agents.stores import MemoryStore


class SlowRead(MemoryStore):
    """A MemoryStore whose next read of `slow` ("kept": a thread's kept state, "conversation":
    its conversation), once set, answers only when `answer` is set, with what the store held
    when it began (a read slowed by a busy machine, as a thread-pool read of a large state is)."""

    def __init__(self) -> None:
        super().__init__()
        self.slow: str | None = None
        self.began, self.answer = asyncio.Event(), asyncio.Event()

    async def _late(self, read: str, held: Any) -> Any:
        if self.slow == read:
            self.slow = None
            self.began.set()
            await self.answer.wait()
        return held

    async def aload_kept_state(self, thread_id: str) -> Any:
        return await self._late("kept", await super().aload_kept_state(thread_id))

    async def aload(self, thread_id: str) -> Any:
        return await self._late("conversation", await super().aload(thread_id))
