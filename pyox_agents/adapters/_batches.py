"""Events one at a time and a batch at a time, for every protocol: each adapter translates
batches (a server writes each batch in one go), and its one-at-a-time `translate` is that,
over batches of one event, flattened."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Sequence
from typing import TypeVar

__all__ = ["flattened", "one_each"]

T = TypeVar("T")


async def one_each(items: AsyncIterable[T]) -> AsyncIterator[Sequence[T]]:
    """`items` as batches of one."""
    async for item in items:
        yield (item,)


async def flattened(batches: AsyncIterable[Sequence[T]]) -> AsyncIterator[T]:
    """The items of `batches`, one at a time."""
    async for batch in batches:
        for item in batch:
            yield item
