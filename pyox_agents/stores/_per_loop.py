"""`PerLoop`: the asyncio clients of `RedisStore` and `PostgresStore`, one per event loop (a
client's connections belong to one loop), each closed when its loop shuts down."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Generic, TypeVar

__all__ = ["Close", "PerLoop"]

T = TypeVar("T")
Close = Callable[[], Awaitable[None]]


class PerLoop(Generic[T]):
    """One value per event loop, made on first use in that loop by `make` (which gives the
    value and the calls that close it).

    With each value an async generator is parked in its loop: when the loop shuts down
    (`asyncio.run`, `asyncio.Runner.close`, anyio) it finalizes its async generators, and this
    one runs the close calls there, while the loop still runs.
    """

    def __init__(self, make: Callable[[], Awaitable[tuple[T, Sequence[Close]]]],
                 no_loop: str) -> None:
        self._make = make
        self._no_loop = no_loop  # the RuntimeError's message outside a running asyncio loop
        self._held: dict[asyncio.AbstractEventLoop, tuple[T, AsyncGenerator[None, None]]] = {}

    async def get(self) -> T:
        """The running loop's value, made now if it has none."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(self._no_loop) from None
        held = self._held.get(loop)
        if held is None:
            for old in [old for old in self._held if old.is_closed()]:
                del self._held[old]
            value, closes = await self._make()
            closer = _close_at_shutdown(closes)
            await closer.asend(None)
            held = self._held[loop] = (value, closer)
        return held[0]

    def forget(self) -> None:
        """Forget every loop's value (each still closes when its loop shuts down)."""
        self._held.clear()

    async def aclose(self) -> None:
        """Close the running loop's value now, if it has one."""
        held = self._held.pop(asyncio.get_running_loop(), None)
        if held is not None:
            await held[1].aclose()


async def _close_at_shutdown(closes: Sequence[Close]) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        for close in closes:
            await close()
