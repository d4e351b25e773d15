"""Every way to change a list or dict through its methods, operators or the library functions
that call them, used on a draft view, is recorded: the ops replayed on the start state give what
the same change gives on a plain list or dict. `heapq`'s C functions write the view's storage
past its methods and are not recorded (its docstring says so): a tool gives them a copy."""

from __future__ import annotations

import bisect
import heapq
import operator
import random
from collections.abc import Callable
from typing import Any

import jsonpatch
import pytest

from pyox_agents.state.draft import Draft
from pyox_agents.state.frozen import freeze, thaw


def _iadd(value: Any) -> None:
    value += [9]


def _imul(value: Any) -> None:
    value *= 2


def _ior(value: Any) -> None:
    value |= {"z": 1}


LIST_CHANGES: dict[str, Callable[[Any], object]] = {
    "append": lambda v: v.append(9),
    "extend": lambda v: v.extend([9, 8]),
    "insert": lambda v: v.insert(1, 9),
    "remove": lambda v: v.remove(1),
    "pop": lambda v: v.pop(0),
    "clear": lambda v: v.clear(),
    "sort": lambda v: v.sort(),
    "reverse": lambda v: v.reverse(),
    "__setitem__": lambda v: v.__setitem__(0, 9),
    "__setitem__ slice": lambda v: v.__setitem__(slice(0, 2), [9]),
    "__setitem__ extended slice": lambda v: v.__setitem__(slice(0, 3, 2), [8, 9]),
    "__delitem__ slice": lambda v: v.__delitem__(slice(0, 2)),
    "+=": _iadd,
    "*=": _imul,
    "__init__": lambda v: v.__init__([7, 6]),
    "bisect.insort": lambda v: bisect.insort(v, 2),
    "random.shuffle": lambda v: random.Random(4).shuffle(v),
    "operator.setitem": lambda v: operator.setitem(v, 0, 9),
    "operator.iadd": lambda v: operator.iadd(v, [9]),
}

DICT_CHANGES: dict[str, Callable[[Any], object]] = {
    "__setitem__": lambda v: v.__setitem__("a", 9),
    "__delitem__": lambda v: v.__delitem__("a"),
    "update": lambda v: v.update({"a": 9}, z=1),
    "setdefault": lambda v: v.setdefault("z", 1),
    "pop": lambda v: v.pop("a"),
    "popitem": lambda v: v.popitem(),
    "clear": lambda v: v.clear(),
    "|=": _ior,
    "__init__": lambda v: v.__init__(z=1),
    "operator.setitem": lambda v: operator.setitem(v, "a", 9),
}


def check(start: Any, change: Callable[[Any], object]) -> None:
    plain = thaw(start)
    draft = Draft(freeze({"x": start}))
    view = draft.root["x"]
    assert change(view) == change(plain)
    assert view == plain and draft.value == {"x": plain}
    patch = [op.to_json() for op in draft.ops]
    assert jsonpatch.apply_patch({"x": thaw(start)}, patch) == {"x": plain}


@pytest.mark.parametrize("change", LIST_CHANGES.values(), ids=LIST_CHANGES.keys())
def test_every_list_change_on_a_view_is_recorded(change: Callable[[Any], object]) -> None:
    check([3, 1, 4, 1, 5], change)


@pytest.mark.parametrize("change", DICT_CHANGES.values(), ids=DICT_CHANGES.keys())
def test_every_dict_change_on_a_view_is_recorded(change: Callable[[Any], object]) -> None:
    check({"a": 1, "b": 2}, change)


def test_heapq_on_a_draft_view_records_nothing_and_commits_nothing() -> None:
    """As `DraftList`'s docstring says: a C `heapq` function changes the view's own storage
    and records no op, so its change is not in the draft's value."""
    draft = Draft(freeze({"queue": [5, 1, 4, 2]}))
    heapq.heappush(draft.root["queue"], 0)
    assert draft.ops == [] and draft.value == {"queue": [5, 1, 4, 2]}


def test_heapq_on_a_copy_written_back_is_recorded() -> None:
    """What the docstring says to do instead: the copy written back is one recorded change."""
    draft = Draft(freeze({"queue": [5, 1, 4, 2]}))
    heap = list(draft.root["queue"])
    heapq.heappush(heap, 0)
    draft.root["queue"] = heap
    patch = [op.to_json() for op in draft.ops]
    assert jsonpatch.apply_patch({"queue": [5, 1, 4, 2]}, patch) == {"queue": heap}
    assert draft.value == {"queue": heap}
