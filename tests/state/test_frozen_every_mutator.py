"""A committed version is frozen for every path that changes a list or dict through its methods,
operators or the library functions that call them; what writes its storage in C past them
(`heapq`'s functions, `list`'s own methods called by hand) is documented, and pinned here."""

from __future__ import annotations

import _heapq
import bisect
import heapq
import operator
import random
from collections.abc import Callable
from typing import Any

import pytest

from pyox_agents.state.frozen import FrozenDict, FrozenList, freeze


class PlainList(list[Any]):
    __slots__ = ()


class PlainDict(dict[str, Any]):
    __slots__ = ()


def _iadd(value: Any) -> None:
    value += [9]


def _imul(value: Any) -> None:
    value *= 2


def _ior(value: Any) -> None:
    value |= {"z": 1}


LIST_CHANGES: dict[str, Callable[[Any], object]] = {
    "append": lambda v: v.append(9),
    "extend": lambda v: v.extend([9]),
    "insert": lambda v: v.insert(0, 9),
    "remove": lambda v: v.remove(3),
    "pop": lambda v: v.pop(),
    "clear": lambda v: v.clear(),
    "sort": lambda v: v.sort(),
    "reverse": lambda v: v.reverse(),
    "__setitem__": lambda v: v.__setitem__(0, 9),
    "__setitem__ slice": lambda v: v.__setitem__(slice(0, 1), [9]),
    "__delitem__": lambda v: v.__delitem__(0),
    "__delitem__ slice": lambda v: v.__delitem__(slice(0, 2)),
    "+=": _iadd,
    "*=": _imul,
    "FrozenList.__init__": lambda v: FrozenList.__init__(v, [9]),
    "type(v).__init__": lambda v: type(v).__init__(v, [9]),
    "setattr": lambda v: setattr(v, "x", 1),
    "__class__ =": lambda v: setattr(v, "__class__", PlainList),
    "object.__setattr__ __class__": lambda v: object.__setattr__(v, "__class__", PlainList),
    "object.__setattr__": lambda v: object.__setattr__(v, "x", 1),
    "bisect.insort": lambda v: bisect.insort(v, 2),
    "random.shuffle": lambda v: random.Random(1).shuffle(v),
    "operator.setitem": lambda v: operator.setitem(v, 0, 9),
    "operator.delitem": lambda v: operator.delitem(v, 0),
    "operator.iadd": lambda v: operator.iadd(v, [9]),
}

DICT_CHANGES: dict[str, Callable[[Any], object]] = {
    "__setitem__": lambda v: v.__setitem__("a", 9),
    "__delitem__": lambda v: v.__delitem__("a"),
    "update": lambda v: v.update(a=9),
    "setdefault": lambda v: v.setdefault("z", 1),
    "pop": lambda v: v.pop("a"),
    "popitem": lambda v: v.popitem(),
    "clear": lambda v: v.clear(),
    "|=": _ior,
    "FrozenDict.__init__": lambda v: FrozenDict.__init__(v, z=1),
    "type(v).__init__": lambda v: type(v).__init__(v, {"z": 1}),
    "setattr": lambda v: setattr(v, "x", 1),
    "__class__ =": lambda v: setattr(v, "__class__", PlainDict),
    "object.__setattr__ __class__": lambda v: object.__setattr__(v, "__class__", PlainDict),
    "object.__setattr__": lambda v: object.__setattr__(v, "x", 1),
    "operator.setitem": lambda v: operator.setitem(v, "a", 9),
    "operator.ior": lambda v: operator.ior(v, {"z": 1}),
}


@pytest.mark.parametrize("change", LIST_CHANGES.values(), ids=LIST_CHANGES.keys())
def test_frozen_list_refuses_every_change(change: Callable[[Any], object]) -> None:
    value = freeze([3, 1, 2])
    with pytest.raises((TypeError, AttributeError)):
        change(value)
    assert value == [3, 1, 2] and type(value) is FrozenList


@pytest.mark.parametrize("change", DICT_CHANGES.values(), ids=DICT_CHANGES.keys())
def test_frozen_dict_refuses_every_change(change: Callable[[Any], object]) -> None:
    value = freeze({"a": 1, "b": 2})
    with pytest.raises((TypeError, AttributeError)):
        change(value)
    assert value == {"a": 1, "b": 2} and type(value) is FrozenDict


def test_frozen_values_are_built_by_calling_the_type() -> None:
    assert FrozenList([1, 2]) == [1, 2] and FrozenDict({"a": 1}, b=2) == {"a": 1, "b": 2}
    assert FrozenList() == [] and FrozenDict() == {}


def test_importing_pyox_agents_leaves_heapq_as_it_is() -> None:
    """Nothing changes process-wide behaviour at import: every library's `heapq` (asyncio's
    timer heap included) calls the C functions, unwrapped."""
    import asyncio.base_events

    import pyox_agents  # noqa: F401

    assert heapq.heappush is _heapq.heappush and heapq.heappop is _heapq.heappop
    assert heapq.heapify is _heapq.heapify
    assert asyncio.base_events.heapq is heapq  # type: ignore[attr-defined]


# what the docstring of `pyox_agents.state.frozen` names as getting past a frozen list: C code
# that writes a list subclass's storage without calling its methods
_PAST_THE_METHODS: dict[str, Callable[[Any], object]] = {
    "heapq.heappush": lambda v: heapq.heappush(v, 0),
    "heapq.heappop": lambda v: heapq.heappop(v),
    "heapq.heapify": lambda v: heapq.heapify(v),
    "heapq.heapreplace": lambda v: heapq.heapreplace(v, 0),
    "heapq.heappushpop": lambda v: heapq.heappushpop(v, 10),
    "list.append(value, x)": lambda v: list.append(v, 9),
    "list.sort(value)": lambda v: list.sort(v),
}


@pytest.mark.parametrize("change", _PAST_THE_METHODS.values(), ids=_PAST_THE_METHODS.keys())
def test_c_code_that_writes_a_lists_storage_gets_past_a_frozen_list_as_documented(
        change: Callable[[Any], object]) -> None:
    """The hole the docstring names, as it is: these change a frozen list in place (give
    them a copy). If one ever refuses, the docstring says too much."""
    value = freeze([3, 1, 2])
    change(value)
    assert value != [3, 1, 2] and type(value) is FrozenList


def test_heapq_on_a_copy_of_a_frozen_list_leaves_the_frozen_one_as_it_was() -> None:
    """What the docstring says to do instead: `list(value)`, then `heapq` on the copy."""
    value = freeze([5, 1, 4, 2])
    heap = list(value)
    heapq.heappush(heap, 0)
    assert heapq.heappop(heap) == 0 and value == [5, 1, 4, 2]
