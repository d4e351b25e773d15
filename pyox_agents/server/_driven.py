"""`Driven`: an awaitable run to its end by the callbacks of the futures it waits on, without a
task of its own.

A response waits for its client's disconnect for as long as it streams: with thousands of open
streams, a task per wait (its coroutine, context and registration) was some 600 bytes each. A
coroutine that only ever waits on asyncio futures (ASGI's `receive()` waits on an
`asyncio.Event`) can be stepped from each future's done-callback instead, as a task would step
it. Anything else it yields (a bare turn of the loop excepted) is left to a task.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine
from types import CoroutineType
from typing import Any, Generic, TypeVar

__all__ = ["Driven", "rest_of"]

T = TypeVar("T")


class Driven(Generic[T]):
    """Run `awaitable` to its end now and in the callbacks of what it waits on; then call
    `done(result, None)`, or `done(None, error)` if it raised. `close()` stops it where it
    waits (its `finally` runs), and `done` is not called."""

    __slots__ = ("_coroutine", "_done", "_waiting")

    def __init__(self, awaitable: Awaitable[T],
                 done: Callable[[T | None, BaseException | None], None]) -> None:
        self._done = done
        self._waiting: asyncio.Future[Any] | None = None
        """What the coroutine waits on now (or the task that runs what it does not drive)."""
        self._coroutine: Coroutine[Any, Any, T] | None = None
        if type(awaitable) is CoroutineType:
            self._coroutine = awaitable
            self._step()
        else:  # another kind of awaitable: in a task, as asyncio runs it
            self._wait_in_a_task(awaitable)

    def _step(self, _: object = None) -> None:
        """Resume the coroutine (what it waited on is done) up to its next wait, or its end."""
        coroutine = self._coroutine
        assert coroutine is not None
        self._waiting = None
        try:
            waits_on = coroutine.send(None)
        except StopIteration as end:
            self._done(end.value, None)
            return
        except BaseException as error:  # (a cancel of what it waited on included)
            self._done(None, error)
            return
        if getattr(waits_on, "_asyncio_future_blocking", None):  # an asyncio future
            waits_on._asyncio_future_blocking = False
            self._waiting = waits_on
            waits_on.add_done_callback(self._step)
        elif waits_on is None:  # a bare yield (`asyncio.sleep(0)`): at the loop's next turn
            asyncio.get_running_loop().call_soon(self._step)
        else:
            self._coroutine = None
            self._wait_in_a_task(rest_of(coroutine, waits_on))

    def _wait_in_a_task(self, awaitable: Awaitable[T]) -> None:
        task = asyncio.ensure_future(awaitable)
        self._waiting = task
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Future[T]) -> None:
        self._waiting = None
        if task.cancelled():
            self._done(None, asyncio.CancelledError())
        elif task.exception() is not None:
            self._done(None, task.exception())
        else:
            self._done(task.result(), None)

    def close(self) -> None:
        """Stop where it waits: no more steps, `done` is not called."""
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            waiting.remove_done_callback(self._step)
            waiting.remove_done_callback(self._finished)
            if self._coroutine is None:
                waiting.cancel()
        if self._coroutine is not None:
            self._coroutine.close()


async def rest_of(coroutine: Coroutine[Any, Any, T], waits_on: Any) -> T:
    """The rest of `coroutine`, started by hand, which now waits on `waits_on` (what it yielded:
    a future, or None for a bare turn of the loop), driven as a task would drive it."""
    while True:
        try:
            if waits_on is None:
                await asyncio.sleep(0)
            else:
                await waits_on
        except BaseException as error:  # cancelled meanwhile: so is the coroutine, where it waits
            step = functools.partial(coroutine.throw, error)
        else:
            step = functools.partial(coroutine.send, None)
        try:
            waits_on = step()
        except StopIteration as end:
            return end.value  # type: ignore[no-any-return]
