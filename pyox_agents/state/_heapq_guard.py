"""The C `heapq` functions write a list subclass's storage directly, past its methods: for the
shared state's read-only lists and draft views they are routed through the stdlib's pure-Python
versions, which call the list's own methods (a frozen list refuses, a draft records). asyncio's
event loop, whose timer heap is a plain list, keeps the C functions."""

from __future__ import annotations

import asyncio.base_events
import heapq
import importlib.util
import sys
import types
from collections.abc import Callable
from typing import Any

__all__ = ["guard_heapq"]


def _pure_heapq() -> Any:
    """The stdlib `heapq` module's pure-Python functions (they call the list's own methods)."""
    spec = importlib.util.find_spec("heapq")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved = sys.modules.get("_heapq")
    sys.modules["_heapq"] = None  # type: ignore[assignment]
    try:
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            del sys.modules["_heapq"]
        else:
            sys.modules["_heapq"] = saved
    return module


def guard_heapq(*kinds: type) -> None:
    """Route `heapq`'s in-place functions through the list's methods for shared-state lists.

    The C `heapq` functions accept any list subclass and then write its storage directly,
    past every method a subclass defines: a frozen version would change without an error and
    a draft's change would be recorded nowhere. Given a `FrozenList` or a draft view, the
    guarded functions run the stdlib's pure-Python versions instead, which call `append`,
    `pop` and `__setitem__`: a frozen list refuses, a draft records its ops. Any other list
    goes to the C function as before.
    """
    if getattr(heapq, "_pyox_guarded", False):
        return
    pure = _pure_heapq()
    unguarded = vars(heapq).copy()
    for name in ("heappush", "heappop", "heapify", "heapreplace", "heappushpop",
                 "_heappop_max", "_heapify_max", "_heapreplace_max"):
        fast = getattr(heapq, name, None)
        slow = getattr(pure, name, None)
        if fast is None or slow is None or fast is slow:
            continue
        setattr(heapq, name, _guarded(fast, slow, kinds))
    heapq._pyox_guarded = True  # type: ignore[attr-defined]
    _loop_unguarded(unguarded)


def _loop_unguarded(functions: dict[str, Any]) -> None:
    """asyncio's event loop pushes and pops a timer on its heap, a plain list, for every
    `asyncio.sleep` and `call_later`: its module gets a `heapq` of its own with the functions
    as they were (the C ones, not the wrappers: a Python call each, 3-4% of a paced stream's
    server CPU), every other name the same."""
    loop: Any = asyncio.base_events  # (its `heapq` is not in the stubs)
    if loop.heapq is heapq:
        unguarded = types.ModuleType("heapq", heapq.__doc__)
        vars(unguarded).update(functions)
        loop.heapq = unguarded


def _guarded(fast: Callable[..., Any], slow: Callable[..., Any],
             kinds: tuple[type, ...]) -> Callable[..., Any]:
    # one wrapper per arity (the pure version's), no `*args`: asyncio's timer heap calls these
    # twice per timer
    if slow.__code__.co_argcount == 1:
        def guarded(heap: Any) -> Any:
            if type(heap) is list or not isinstance(heap, kinds):
                return fast(heap)
            return slow(heap)
    else:
        def guarded(heap: Any, item: Any) -> Any:  # type: ignore[misc]
            if type(heap) is list or not isinstance(heap, kinds):
                return fast(heap, item)
            return slow(heap, item)

    guarded.__name__ = guarded.__qualname__ = fast.__name__
    guarded.__doc__ = fast.__doc__
    guarded.__module__ = "heapq"
    return guarded
