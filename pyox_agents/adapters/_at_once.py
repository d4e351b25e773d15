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
(`frame_batches`). A reader tells an `AtOnce` iterator by its `at_once` attribute
(`at_once_of`: `isinstance` of a runtime protocol walks its members, ~10 us, once per stream).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Generic, Protocol, TypeVar, cast

__all__ = ["AtOnce", "AtOnceText", "Translating", "at_once_of"]

T = TypeVar("T")
B = TypeVar("B")
U = TypeVar("U")


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


class AtOnceText(AtOnce[T], Protocol[T]):
    """An `AtOnce` iterator of a run's batches with a lane for the tokens of the run's own
    reply: one comes to `at_once_text` as its message id and text, no event made for it."""

    at_once_text: Callable[[str, str], bool] | None
    """Takes a text delta of the run's own reply (message id, delta) in the producer's task
    while the reader waits with all before it read; False: it took nothing, and the delta
    comes as an item. None while the reader has no such lane."""


def at_once_of(source: AsyncIterable[T]) -> AtOnce[T] | None:
    """`source` as an `AtOnce` iterator, if it is one (it has `at_once`); else None."""
    return cast(AtOnce[T], source) if hasattr(source, "at_once") else None


class Translating(Generic[B, U]):
    """An async iterator of the translation of each item `source` gives (`_translated`; an item
    that gives nothing is skipped), then of its end (`_last`). `AtOnce` when `source` is: a
    reader that sets `at_once` gets each item's translation in the task that gives the item,
    while it waits with all before read. A translation or a read that raises ends the stream
    with what `_failed` gives, in the reader's task or the producer's alike (never raised into
    the producer). The protocols' frame streams are ones."""

    _takes_text = False
    """A subclass whose `_text_frame` writes text deltas sets this (before `__init__`): with a
    source that is `AtOnceText`, it gets the deltas of the run's own reply through that lane."""

    def __init__(self, source: AsyncIterable[B]) -> None:
        self._source = at_once_of(source)
        self._texts = cast("AtOnceText[B]", source) if self._takes_text and hasattr(
            source, "at_once_text") else None
        self._read = source.__aiter__()
        self._over = False
        """The stream has ended: its last translation is made."""
        self._at_once: Callable[[U], None] | None = None

    @property
    def at_once(self) -> Callable[[U], None] | None:
        """Takes each translation at once (`AtOnce`); None: the reader reads it."""
        return self._at_once

    @at_once.setter
    def at_once(self, take: Callable[[U], None] | None) -> None:
        self._at_once = take
        if self._source is not None:
            self._source.at_once = None if take is None else self._take
        if self._texts is not None:
            self._texts.at_once_text = None if take is None else self._take_text

    def __aiter__(self) -> Translating[B, U]:
        return self

    async def __anext__(self) -> U:
        while not self._over:
            try:
                item = await anext(self._read)
            except StopAsyncIteration:
                if self._over:  # the end was translated at once meanwhile
                    break
                self._over = True
                last = self._last()
                if last is None:
                    break
                return last
            except Exception as exc:
                if self._over:
                    break
                return self._end_failed(exc)
            out = self._one(item)
            if out is not None:
                return out
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """End the stream here, and close its source (a live run's follower lets go of the
        run at once: the stream ends after its last translation, before reading the source's
        end)."""
        self._over = True
        self.at_once = None
        close = getattr(self._read, "aclose", None)
        if close is not None:
            await close()

    def _take(self, item: B) -> None:
        out = self._one(item)
        take = self._at_once
        if out is not None and take is not None:
            take(out)

    def _take_text(self, message_id: str, delta: str) -> bool:
        """Take a text delta of the run's own reply at once (`AtOnceText`): its frame
        (`_text_frame`) to the reader. False, having taken nothing, where there is none (it
        then comes in an item); a frame that raises is none, never raised into the producer."""
        if self._over:
            return False
        try:
            frame = self._text_frame(message_id, delta)
        except Exception:  # (a lone surrogate: the item's way ends the stream as failed)
            return False
        if frame is None:
            return False
        take = self._at_once
        if take is not None:
            take(frame)
        return True

    def _text_frame(self, message_id: str, delta: str) -> U | None:
        """The translation of a text delta of the run's own reply, straight from its text; None
        where the subclass would not write it so. `_takes_text` says a subclass writes them."""
        return None

    def _one(self, item: B) -> U | None:
        if self._over:
            return None
        try:
            return self._translated(item)
        except Exception as exc:
            return self._end_failed(exc)

    def _end_failed(self, exc: Exception) -> U:
        self._over = True
        return self._failed(exc)

    def _translated(self, item: B) -> U | None:
        """What `item` gives (None: nothing); sets `_over` once the stream has ended."""
        raise NotImplementedError

    def _last(self) -> U | None:
        """What the source's end gives, unless the stream ended before it."""
        return None

    def _failed(self, exc: Exception) -> U:
        """What the stream ends with when reading `item`s or translating one raised `exc`."""
        raise NotImplementedError
