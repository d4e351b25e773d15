"""A committed version is frozen for every path that changes a list or dict, C-level ones too."""

from __future__ import annotations

import _heapq
import bisect
import heapq
import operator
import random
from collections.abc import Callable
from typing import Any

import jsonpatch
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.state.draft import Draft
from pyox_agents.state.frozen import FrozenDict, FrozenList, freeze, thaw

from ..runs import collect, finished


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
    "heapq.heappush": lambda v: heapq.heappush(v, 0),
    "heapq.heappop": lambda v: heapq.heappop(v),
    "heapq.heapify": lambda v: heapq.heapify(v),
    "heapq.heapreplace": lambda v: heapq.heapreplace(v, 0),
    "heapq.heappushpop": lambda v: heapq.heappushpop(v, 10),
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


@pytest.mark.parametrize("change", ["heappush", "heappop", "heapify", "heapreplace", "heappushpop"])
def test_heapq_on_a_draft_view_records_its_ops(change: str) -> None:
    draft = Draft(freeze({"queue": [5, 1, 4, 2]}))
    queue = draft.root["queue"]
    plain = [5, 1, 4, 2]
    args = () if change in {"heappop", "heapify"} else (3,)
    expected = getattr(heapq, change)(plain, *args)
    assert getattr(heapq, change)(queue, *args) == expected
    assert draft.value == {"queue": plain}
    patch = [op.to_json() for op in draft.ops]
    assert jsonpatch.apply_patch(thaw(draft.base), patch) == {"queue": plain}


def test_heapq_on_plain_lists_is_unchanged() -> None:
    heap: list[int] = []
    for item in (5, 1, 4):
        heapq.heappush(heap, item)
    assert heapq.heappop(heap) == 1 and heap == [4, 5]


def test_the_event_loops_timer_heap_calls_the_c_functions() -> None:
    """asyncio pushes and pops a timer on its heap (a plain list) for every sleep: the guard
    leaves it the C functions, no Python wrapper per timer, while `heapq` itself is guarded."""
    import asyncio.base_events

    loop_heapq: Any = asyncio.base_events.heapq  # type: ignore[attr-defined]
    assert loop_heapq.heappush is _heapq.heappush and loop_heapq.heappop is _heapq.heappop
    assert loop_heapq.heapify is _heapq.heapify
    assert heapq.heappush is not _heapq.heappush  # what everyone else calls is guarded


# each function the guard wraps, with the arguments it takes (the `_max` ones serve
# `heapq.merge(..., reverse=True)` and `nlargest`)
_HEAPQ_CALLS: dict[str, tuple[object, ...]] = {
    "heappush": (3,), "heappop": (), "heapify": (), "heapreplace": (3,), "heappushpop": (10,),
    "_heappop_max": (), "_heapify_max": (), "_heapreplace_max": (3,),
}


@pytest.mark.parametrize("name", sorted(_HEAPQ_CALLS))
def test_every_guarded_heapq_function_works_on_a_plain_list_and_refuses_a_frozen_one(
        name: str) -> None:
    """The guard changes nothing for a plain list (the same result and list as the C
    function's) and refuses a frozen one, for every function it wraps."""
    function = getattr(heapq, name)
    args = _HEAPQ_CALLS[name]
    plain: list[Any] = [5, 1, 4, 2]
    reference: list[Any] = [5, 1, 4, 2]
    heapify = getattr(heapq, "_heapify_max" if name.endswith("_max") else "heapify")
    heapify(plain)
    heapify(reference)
    c_function = getattr(_heapq, name)
    assert function(plain, *args) == c_function(reference, *args)
    assert plain == reference
    frozen = freeze([5, 1, 4, 2])
    with pytest.raises(TypeError):
        function(frozen, *args)
    assert frozen == [5, 1, 4, 2]


@pytest.mark.anyio
async def test_a_hook_cannot_pop_from_the_committed_state_with_heapq() -> None:
    """Seed 004: "Hooks read a copy. Only tools change the state." """
    errors: list[str] = []

    def instructions(ctx: RunContext) -> str:
        try:
            heapq.heappop(ctx.state["queue"])
        except TypeError as exc:
            errors.append(str(exc))
        return "Work the queue."

    @tool
    def peek(ctx: RunContext) -> int:
        """The smallest item of the queue."""
        return int(ctx.state["queue"][0])

    agent = Agent(model=ScriptedModel([ToolCall("peek", {}), "done"]), tools=[peek],
                  instructions=instructions)
    events = await collect(agent, state={"queue": [1, 2, 3]})
    assert errors and "read-only" in errors[0]
    assert finished(events).state == {"queue": [1, 2, 3]}
