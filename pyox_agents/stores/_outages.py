"""`StoreUnavailable`: how every backend reports that it cannot be reached or written now.

A backend names the errors of its driver that mean an outage (a refused or timed-out
connection, a server restarting, a full disk, a read-only file) with `reports_outages`, which
wraps the store's public methods so that those errors leave them as `StoreUnavailable`: one
type the runtime and the server act on (the run ends with code "store_unavailable", a request
gets 503 with `Retry-After`) without knowing the driver.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any, NoReturn, TypeVar

from pyox_agents._errors import PyoxError

__all__ = ["DEFAULT_RETRY_AFTER", "StoreUnavailable", "reports_outages"]

DEFAULT_RETRY_AFTER = 5.0
"""Seconds a client is told to wait (`Retry-After`) before it tries again after an outage."""


class StoreUnavailable(PyoxError, ConnectionError):
    """The store cannot be reached or written now: its server is down, stuck past the
    timeout, or restarting, or its disk is full or read-only.

    Every write is all or nothing, so what was committed before stays as it was. A write that
    timed out may still be applied once the server answers again (it was sent): a run that
    failed so is continued by the thread's next request, as after a crash. Retry after
    `retry_after` seconds.
    """

    def __init__(self, message: str, *, retry_after: float = DEFAULT_RETRY_AFTER) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        """Seconds to wait before trying again (what a server sends as `Retry-After`)."""


Translate = Callable[[Any, BaseException], "StoreUnavailable | None"]
"""`translate(store, error)`: the outage `error` stands for, or None if it is not one."""

_Class = TypeVar("_Class", bound=type)


def reports_outages(translate: Translate) -> Callable[[_Class], _Class]:
    """A class decorator: the public methods of the store raise `StoreUnavailable` for the
    driver errors `translate` recognises (chained to them), and every other error as it was."""

    def decorate(cls: _Class) -> _Class:
        for name in dir(cls):
            if name.startswith("_"):
                continue
            method = inspect.getattr_static(cls, name)
            if inspect.isfunction(method):
                setattr(cls, name, _wrapped(method, translate))
        return cls

    return decorate


def _reraise(translate: Translate, store: Any, exc: Exception) -> NoReturn:
    """Raise `exc` again, as the `StoreUnavailable` it means when it is an outage."""
    outage = None if isinstance(exc, StoreUnavailable) else translate(store, exc)
    if outage is None:
        raise exc
    raise outage from exc


def _wrapped(method: Callable[..., Any], translate: Translate) -> Callable[..., Any]:
    if inspect.isasyncgenfunction(method):
        @functools.wraps(method)
        async def generator(self: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            try:
                async for item in method(self, *args, **kwargs):
                    yield item
            except Exception as exc:
                _reraise(translate, self, exc)

        return generator
    if inspect.iscoroutinefunction(method):
        @functools.wraps(method)
        async def coroutine(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return await method(self, *args, **kwargs)
            except Exception as exc:
                _reraise(translate, self, exc)

        return coroutine

    @functools.wraps(method)
    def function(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:
            _reraise(translate, self, exc)

    return function
