"""`freeze` of the plain dicts and lists `json.loads` gives (copied by dict's and list's own code,
then walked once) is the same as of any other mapping or list: the same frozen value, or the
same error naming the same path."""

from __future__ import annotations

import enum
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents.state.frozen import MAX_DEPTH, FrozenDict, FrozenList, freeze


class Color(enum.Enum):
    RED = "red"


class Text(str):
    """A str subclass: JSON, frozen as a plain str."""


class Mapping(dict[Any, Any]):
    """A dict subclass: `freeze` takes it key by key (the general path)."""


class Items(list[Any]):
    """A list subclass: likewise."""


LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4),
    st.sampled_from(["\ud800", "a\udfffb", "é", Text("t"), math.nan, math.inf, (1, 2),
                     {1, 2}, Color.RED, b"x", Color]),
)
KEYS = st.one_of(st.text(max_size=3), st.sampled_from(["\udc00", "ü", 3, Color.RED, Text("k")]))
VALUES = st.recursive(LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(KEYS, inner, max_size=4),
), max_leaves=25)


def general(value: Any) -> Any:
    """`value` with every dict and list replaced by a subclass, so none is a plain one."""
    if type(value) is dict:
        return Mapping({key: general(item) for key, item in value.items()})
    if type(value) is list:
        return Items(general(item) for item in value)
    return value


def outcome(value: Any) -> tuple[str, Any]:
    try:
        return "frozen", freeze(value, "state")
    except TypeError as exc:
        return "error", str(exc)


def all_frozen(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is FrozenDict and all(
            type(key) is str and all_frozen(item) for key, item in value.items())
    if isinstance(value, list):
        return type(value) is FrozenList and all(all_frozen(item) for item in value)
    return type(value) in (str, int, float, bool, type(None))


def same(a: Any, b: Any) -> bool:
    """Equal as JSON, NaN-free values compared by ==, types included (True is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_a_plain_dict_or_list_freezes_as_any_other_does(value: Any) -> None:
    """The same frozen value (every container frozen, keys and texts plain str), or the same
    error with the same path, whether the containers are plain or not."""
    kind, got = outcome(value)
    expected_kind, expected = outcome(general(value))
    assert kind == expected_kind, (got, expected)
    if kind == "error":
        assert got == expected
    else:
        assert all_frozen(got) and same(got, expected)


def test_a_plain_value_too_deep_is_refused_at_the_limit_with_its_path() -> None:
    """Nesting past MAX_DEPTH is refused at the first level past it, plain or not."""
    deep: Any = "leaf"
    for _ in range(MAX_DEPTH):
        deep = {"a": [deep]}
    assert outcome(deep) == outcome(general(deep))
    assert outcome(deep)[0] == "error"
