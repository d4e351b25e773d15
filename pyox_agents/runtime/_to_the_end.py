"""Await a store call to its end even when the awaiting task is cancelled meanwhile, as a call in
a worker thread is: a write that was sent may have landed, so the run must know how it ended
before it handles the cancel (its next save carries what this one did not write), and two writes
of one thing never run at once (an older one never lands last). The service ends a run the same
way (its end saved, then told: a second stop waits for it). The one way the library shields a
call from a cancel: anyio's shielded scopes do not hold off `Task.cancel()`, which stops runs."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["to_the_end"]

T = TypeVar("T")


async def to_the_end(call: Coroutine[Any, Any, T]) -> T:
    """Run `call` in a task of its own and wait for its result; a cancel of the caller
    (`task.cancel()`, or a cancel scope) is delivered once `call` has ended. The call is
    bounded by the store's own timeouts, so the cancel is delayed, not lost (also when the call
    failed: its error is then seen, and the cancel raised)."""
    task = asyncio.ensure_future(call)
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():  # `call` was cancelled itself, or ended as the cancel came
                raise
            cancelled = True
            continue
        except Exception:
            if cancelled:
                raise asyncio.CancelledError("cancelled while a store call was in flight"
                                             ) from None
            raise
        if cancelled:
            raise asyncio.CancelledError("cancelled while a store call was in flight")
        return result
