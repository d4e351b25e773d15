"""`Translating`: the translation of a run's events, a batch at a time, as an async iterator the
reader pulls (a server's response, each item one write). Every protocol's frame stream is one:
it says what a batch gives, what the run's end gives, and what a failure gives."""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Generic, TypeVar

__all__ = ["Translating", "sse_frames"]

B = TypeVar("B")
U = TypeVar("U")


class Translating(Generic[B, U]):
    """An async iterator of the translation of each item `source` gives (`_translated`; an item
    that gives nothing is skipped), then of its end (`_last`). A read or a translation that
    raises ends the stream with what `_failed` gives. A cancelled `__anext__` loses nothing
    when the source's does not (`cancel_safe`): it holds nothing across its wait."""

    def __init__(self, source: AsyncIterable[B]) -> None:
        self._read = source.__aiter__()
        self._over = False
        """The stream has ended: its last translation is made."""
        self.cancel_safe: bool = getattr(self._read, "cancel_safe", False)
        """A wait for the next item may be cancelled and the stream read on (its source's
        may: a run's log as the service reads it)."""

    def __aiter__(self) -> Translating[B, U]:
        return self

    async def __anext__(self) -> U:
        while not self._over:
            try:
                out = self._translated(await anext(self._read))
            except StopAsyncIteration:
                self._over = True
                out = self._last()
            except Exception as exc:
                self._over = True
                return self._failed(exc)
            if out is not None:
                return out
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """End the stream here, and close its source (a live run's reader lets go of it)."""
        self._over = True
        close = getattr(self._read, "aclose", None)
        if close is not None:
            await close()

    def _translated(self, item: B) -> U | None:
        """What `item` gives (None: nothing); sets `_over` once the stream has ended."""
        raise NotImplementedError

    def _last(self) -> U | None:
        """What the source's end gives, unless the stream ended before it."""
        return None

    def _failed(self, exc: Exception) -> U:
        """What the stream ends with when reading an item or translating one raised `exc`."""
        raise NotImplementedError


def sse_frames(texts: list[str]) -> bytes:
    """SSE `data:` frames for `texts` (each a frame's data), as one write."""
    return "".join(f"data: {text}\n\n" for text in texts).encode()
