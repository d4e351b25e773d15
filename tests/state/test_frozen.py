"""Read-only committed values, freezing (JSON validation with paths), thawing, JSON Pointers."""

from __future__ import annotations

import copy
import datetime
import enum
import json
import pickle
from decimal import Decimal
from typing import Any

import pydantic
import pytest

from pyox_agents.state.frozen import (
    FrozenDict,
    FrozenList,
    freeze,
    parse_pointer,
    pointer,
    python_path,
    thaw,
)


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Name(enum.StrEnum):
    ADA = "ada"


def sample() -> Any:
    return freeze({"todos": [{"id": 1, "tags": ["a"]}], "n": 1.5, "ok": True, "none": None})


# -- read-only -----------------------------------------------------------------------------------

DICT_CHANGES = [
    lambda d: d.__setitem__("x", 1),
    lambda d: d.__delitem__("n"),
    lambda d: d.update(x=1),
    lambda d: d.pop("n"),
    lambda d: d.popitem(),
    lambda d: d.clear(),
    lambda d: d.setdefault("x", 1),
    lambda d: d.__ior__({"x": 1}),
]

LIST_CHANGES = [
    lambda lst: lst.__setitem__(0, 1),
    lambda lst: lst.__setitem__(slice(0, 1), [1]),
    lambda lst: lst.__delitem__(0),
    lambda lst: lst.__delitem__(slice(0, 1)),
    lambda lst: lst.append(1),
    lambda lst: lst.extend([1]),
    lambda lst: lst.insert(0, 1),
    lambda lst: lst.remove(lst[0]),
    lambda lst: lst.pop(),
    lambda lst: lst.clear(),
    lambda lst: lst.sort(),
    lambda lst: lst.reverse(),
    lambda lst: lst.__iadd__([1]),
    lambda lst: lst.__imul__(2),
]


@pytest.mark.parametrize("change", DICT_CHANGES)
def test_every_dict_change_raises_read_only(change: Any) -> None:
    state = sample()
    with pytest.raises(TypeError, match=r"read-only .*ctx\.state inside a tool.*dict\(value\)"):
        change(state)
    assert state == thaw(sample())


@pytest.mark.parametrize("change", LIST_CHANGES)
def test_every_list_change_raises_read_only(change: Any) -> None:
    todos = sample()["todos"]
    with pytest.raises(TypeError, match=r"read-only .*list\(value\)"):
        change(todos)
    assert todos == [{"id": 1, "tags": ["a"]}]


def test_augmented_assignment_is_refused() -> None:
    state = sample()
    todos = state["todos"]
    with pytest.raises(TypeError, match="read-only"):
        todos += [1]
    with pytest.raises(TypeError, match="read-only"):
        state |= {"x": 1}


def test_frozen_values_read_like_plain_ones() -> None:
    state = sample()
    assert isinstance(state, dict) and isinstance(state["todos"], list)
    assert state == {"todos": [{"id": 1, "tags": ["a"]}], "n": 1.5, "ok": True, "none": None}
    assert state["todos"][0]["tags"][0] == "a"
    assert list(state) == ["todos", "n", "ok", "none"]
    assert json.loads(json.dumps(state)) == state
    assert repr(state) == repr(thaw(state))
    assert repr(state["todos"]) == "[{'id': 1, 'tags': ['a']}]"


def test_frozen_values_are_unhashable_like_dict_and_list() -> None:
    state = sample()
    with pytest.raises(TypeError, match="unhashable"):
        hash(state)
    with pytest.raises(TypeError, match="unhashable"):
        hash(state["todos"])


def test_editable_copies_are_plain() -> None:
    state = sample()
    shallow = dict(state)
    shallow["x"] = 1
    assert type(state.copy()) is dict and type(state["todos"].copy()) is list
    assert type(copy.copy(state)) is dict and type(copy.copy(state["todos"])) is list
    assert "x" not in state


def test_deepcopy_is_plain_all_the_way_down() -> None:
    deep = copy.deepcopy(sample())
    assert type(deep) is dict and type(deep["todos"]) is list and type(deep["todos"][0]) is dict
    assert type(copy.deepcopy(sample()["todos"])[0]["tags"]) is list
    deep["todos"][0]["tags"].append("b")
    assert sample()["todos"][0]["tags"] == ["a"]


def test_pickle_round_trips_frozen() -> None:
    state = sample()
    back = pickle.loads(pickle.dumps(state))
    assert back == state
    assert type(back) is FrozenDict and type(back["todos"]) is FrozenList
    assert type(back["todos"][0]) is FrozenDict


def test_pydantic_accepts_frozen_values() -> None:
    class Model(pydantic.BaseModel):
        todos: list[dict[str, Any]]

    state = sample()
    assert pydantic.TypeAdapter(dict[str, Any]).validate_python(state) == state
    assert Model.model_validate(state).todos == [{"id": 1, "tags": ["a"]}]
    assert json.loads(pydantic.TypeAdapter(Any).dump_json(state)) == state


# -- freeze --------------------------------------------------------------------------------------


def test_freeze_accepts_json_and_gives_frozen_containers() -> None:
    value = {"a": [1, 2.5, "s", True, None, {"b": []}]}
    frozen = freeze(value)
    assert frozen == value
    assert type(frozen) is FrozenDict and type(frozen["a"]) is FrozenList
    assert type(frozen["a"][5]) is FrozenDict and type(frozen["a"][5]["b"]) is FrozenList


def test_freeze_never_changes_the_callers_object() -> None:
    value = {"a": [1]}
    freeze(value)["a"]
    assert type(value["a"]) is list
    value["a"].append(2)
    assert value == {"a": [1, 2]}


def test_freeze_copies_the_value_as_it_is_then() -> None:
    value = {"a": [1]}
    frozen = freeze(value)
    value["a"].append(2)
    assert frozen == {"a": [1]}


def test_freeze_reuses_frozen_containers_without_a_walk() -> None:
    frozen = sample()
    assert freeze(frozen) is frozen
    rebuilt = freeze({"inner": frozen, "x": 1})
    assert rebuilt["inner"] is frozen  # type: ignore[index]


def test_freeze_accepts_subclasses_of_dict_and_list() -> None:
    class MyDict(dict[str, Any]):
        pass

    class MyList(list[Any]):
        pass

    frozen = freeze(MyDict(a=MyList([1])))
    assert frozen == {"a": [1]} and type(frozen) is FrozenDict


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            {"cart": [1, 2, {3}]},
            r'state\["cart"\]\[2\] is a set; shared state must be JSON: use a list',
        ),
        ({"t": (1, 2)}, r'state\["t"\] is a tuple; shared state must be JSON: use a list'),
        (
            {"when": datetime.datetime(2024, 1, 1)},
            r'state\["when"\] is a datetime; shared state must be JSON: use an ISO 8601 string '
            r"\(value\.isoformat\(\)\)",
        ),
        ({"day": datetime.date(2024, 1, 1)}, r'state\["day"\] is a date; .*ISO 8601'),
        ({"b": b"x"}, r'state\["b"\] is bytes; .*use a str'),
        ({"x": float("nan")}, r'state\["x"\] is nan; .*no NaN or infinity'),
        ({"x": [float("inf")]}, r'state\["x"\]\[0\] is inf; .*no NaN or infinity'),
        ({"x": -float("inf")}, r'state\["x"\] is -inf'),
        ({"c": Color.RED}, r'state\["c"\] is an enum member .*value\.value'),
        ({"c": Level.HIGH}, r'state\["c"\] is an enum member'),
        ({"c": Name.ADA}, r'state\["c"\] is an enum member'),
        ({"d": Decimal("1.5")}, r'state\["d"\] is a Decimal; .*float or a str'),
        ({"o": object()}, r'state\["o"\] is a object object; shared state must be JSON'),
        ({"a": {3: 1}}, r'state\["a"\] has a key 3 \(int\); keys of shared state must be str'),
        ({("a",): 1}, r"state has a key \('a',\) \(tuple\); keys of shared state must be str"),
        ({Name.ADA: 1}, r"state has a key .* \(Name\); keys of shared state must be str"),
    ],
)
def test_freeze_refuses_what_is_not_json_naming_the_path(value: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        freeze(value)


def test_freeze_refuses_a_top_level_nan_and_an_infinite_float_subclass() -> None:
    class Real(float):
        pass

    with pytest.raises(TypeError, match=r"^state is nan; "):
        freeze(float("nan"))
    with pytest.raises(TypeError, match=r'state\["x"\] is inf'):
        freeze({"x": Real("inf")})
    assert type(freeze({"x": Real(1.5)})["x"]) is float  # type: ignore[index]


def test_fromkeys_builds_a_frozen_dict() -> None:
    frozen = FrozenDict.fromkeys(["a", "b"], [1])
    assert frozen == {"a": [1], "b": [1]} and type(frozen["a"]) is FrozenList
    with pytest.raises(TypeError, match="is a set"):
        FrozenDict.fromkeys(["a"], {1})


def test_freeze_error_uses_the_given_path_prefix() -> None:
    with pytest.raises(TypeError, match=r'ctx\.state\["todos"\]\[0\] is a set'):
        freeze({"todos": [{1}]}, "ctx.state")
    with pytest.raises(TypeError, match=r'ctx\.state\["todos"\]\[3\]\["due"\] is a datetime'):
        freeze(datetime.datetime.now(), "ctx.state", at=("todos", 3, "due"))


def test_path_names_keys_with_quotes_escaped() -> None:
    assert python_path("state", ["a\"b", 0, "x/y"]) == 'state["a\\"b"][0]["x/y"]'


def test_freeze_gives_plain_scalars_for_str_and_int_subclasses() -> None:
    class Text(str):
        pass

    class Count(int):
        pass

    frozen: Any = freeze({"t": Text("x"), "c": Count(3)})
    assert type(frozen["t"]) is str and type(frozen["c"]) is int


# -- thaw ----------------------------------------------------------------------------------------


def test_thaw_gives_a_plain_editable_deep_copy() -> None:
    frozen = sample()
    plain = thaw(frozen)
    assert plain == frozen and type(plain) is dict
    plain["todos"][0]["tags"].append("b")  # type: ignore[index,call-overload,union-attr]
    assert frozen["todos"][0]["tags"] == ["a"]


# -- JSON Pointer --------------------------------------------------------------------------------


def test_pointer_escapes_tilde_then_slash() -> None:
    assert pointer(["a/b", "m~n", 0, "~1"]) == "/a~1b/m~0n/0/~01"
    assert pointer([]) == ""
    assert pointer([""]) == "/"


def test_parse_pointer_inverts_pointer() -> None:
    tokens = ("a/b", "m~n", "0", "~1", "")
    assert parse_pointer(pointer(tokens)) == tokens
    assert parse_pointer("") == ()


def test_parse_pointer_refuses_a_pointer_without_leading_slash() -> None:
    with pytest.raises(ValueError, match=r"'todos/0' is not a JSON Pointer: .*start with '/'"):
        parse_pointer("todos/0")
