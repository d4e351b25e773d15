"""`AtOnce`: an async iterator whose producer can hand its reader the next item in its own task.

A run's events reach a client through stages, each an async iterator read by the next: the live
run's event list, the protocol's translation, the HTTP response. Read only so, every token of a
slow stream wakes the response's task after the run's own: two loop turns per token, where a
bare server streaming from one task has one. An `AtOnce` iterator lets its reader set
`at_once`: then, while the reader waits for its next item with everything before it read, the
producer calls `at_once` with that item, from the producer's task, and the reader is not woken.
The reader sets `at_once` back to None whenever it cannot take an item so (a write still in
flight, its end); the items then come through `__anext__` as usual. The order is kept either way.
A live run's follower (the service's `Following`) is one, and so is the translation of one
(`frame_batches`). A reader tells an `AtOnce` iterator by its `at_once` attribute (`hasattr`:
`isinstance` of a runtime protocol walks its members, ~10 us, once per stream).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Protocol, TypeVar

__all__ = ["AtOnce"]

T = TypeVar("T")


class AtOnce(Protocol[T]):
    """An async iterator of `T` that gives its next item to `at_once` while its reader waits."""

    at_once: Callable[[T], None] | None
    """Takes the next item in the producer's task while the reader waits with all before it
    read; None (the default) while the reader cannot take one that way."""

    def __aiter__(self) -> AsyncIterator[T]:
        """The iterator itself."""
        ...

    async def __anext__(self) -> T:
        """The next item, waiting for it."""
        ...
