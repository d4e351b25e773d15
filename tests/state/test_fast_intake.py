"""A request's state taken in by orjson and frozen in bulk gives exactly what the checked path
(`json.loads`, the depth check, the lone-surrogate check, `freeze`, `json.dumps` for the size)
gave: the same value, of the same types at every level, with its keys in the same order, or the
same error, naming the same path, for any body: arbitrary JSON, hostile strings and numbers,
nesting around the limits, other encodings, str bodies.

The issue's words: "The JSON rules (non-JSON refused with the path, depth limit, lone
surrogates) still hold: the property tests say so."
"""

from __future__ import annotations

import json
from typing import Any
from unittest.mock import patch

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents.adapters._body import _read_checked, read_json
from pyox_agents.adapters.ag_ui import read_input
from pyox_agents.adapters.ai_sdk import parse_request
from pyox_agents.service import RequestError
from pyox_agents.state import _parsed
from pyox_agents.state._size_bound import json_size_bound, json_size_over
from pyox_agents.state.frozen import MAX_DEPTH, FrozenDict, FrozenList, freeze
from pyox_agents.state.shared import SharedState

WHAT = "a test body"

# strings as a client may write them: brackets (which the bulk path counts), `+` and `e`
# (which it reads floats by), DEL and control characters, non-ASCII, lone surrogates
CHARS = st.characters() | st.characters(categories=["Cs"]) | st.sampled_from(
    list("[]{}+e-E\x7f\x00\n\"\\/é€\U0001f600"))
TEXT = st.lists(CHARS, max_size=6).map("".join)
NUMBERS = st.sampled_from([
    "0", "-0", "1", "-1", "1.0", "-0.0", "0.1e-7", "1e16", "1E19", "1e+16", "2.5e-7",
    "12345678901234567890", "9223372036854775807", "9223372036854775808",
    "-9223372036854775809", "18446744073709551615", "18446744073709551616", "1e400", "-1e400",
    "9.3e18", "9.2e18", "NaN", "Infinity", "-Infinity", "1.7976931348623157e308", "5e-324",
])


@st.composite
def strings(draw: st.DrawFn) -> str:
    return json.dumps(draw(TEXT), ensure_ascii=draw(st.booleans()))


def scalars() -> st.SearchStrategy[str]:
    return st.one_of(
        strings(), NUMBERS, st.integers().map(str), st.sampled_from(["true", "false", "null"]),
        st.floats(allow_nan=False, allow_infinity=False).map(repr))


def containers(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    items = st.lists(inner, max_size=5)
    pairs = st.lists(st.tuples(strings(), inner), max_size=5)
    return st.one_of(
        items.map(lambda xs: "[" + ",".join(xs) + "]"),
        pairs.map(lambda ps: "{" + ",".join(f"{k}:{v}" for k, v in ps) + "}"),
        # a list of records, the shape the bulk path takes in one go
        st.lists(st.lists(st.tuples(strings(), inner), max_size=3), min_size=1, max_size=4)
        .map(lambda rs: "[" + ",".join(
            "{" + ",".join(f"{k}:{v}" for k, v in r) + "}" for r in rs) + "]"),
    )


VALUES = st.recursive(scalars(), containers, max_leaves=20)


@st.composite
def nested(draw: st.DrawFn) -> str:
    """A value, sometimes wrapped to nest near `MAX_DEPTH` (a state's limit) or the body's, or
    past orjson's limits for writing (254 levels) and for reading (1024)."""
    value = draw(VALUES)
    levels = draw(st.sampled_from([0, 0, 0, MAX_DEPTH - 4, MAX_DEPTH - 3, MAX_DEPTH - 2,
                                   MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 6, MAX_DEPTH + 7,
                                   MAX_DEPTH + 8, 300, 1100]))
    for _ in range(levels):
        value = draw(st.sampled_from(["[{}]", '{{"k":{}}}', '[{{"a":1,"k":{}}}]'])).format(value)
    return value


@st.composite
def bodies(draw: st.DrawFn) -> bytes | str:
    state, other = draw(nested()), draw(nested())
    text = draw(st.sampled_from([
        '{{"threadId":"t","state":{state},"messages":{other}}}',
        '{{"messages":{other},"state":{state}}}',
        '{{"state":{state},"state":{other}}}',
        '{{"messages":{other}}}',
        "[{state}]", "{state}", ' {state} ', "{state},",
    ])).format(state=state, other=other)
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-8-sig", "utf-16", "str"]))
    return text if encoding == "str" else text.encode(encoding, "surrogatepass")


def outcome_of(read: Any, body: bytes | str) -> Any:
    """What a server makes of `body`'s state: the frozen value or the error, as comparable data."""
    try:
        data = read(body)
    except RequestError as exc:
        return ("refused", exc.status, str(exc))
    state = data.get("state") if isinstance(data, dict) else None
    try:
        frozen = freeze(state, "state")
    except TypeError as exc:
        return ("not JSON", str(exc))
    rest = {k: v for k, v in data.items() if k != "state"} if isinstance(data, dict) else data
    return ("taken", shape(frozen), shape(rest))


def shape(value: Any) -> Any:
    """`value` with every type and key order spelled out (== alone takes 1 == 1.0 == True)."""
    if isinstance(value, dict):
        return (type(value).__name__, [(k, shape(v)) for k, v in value.items()])
    if isinstance(value, list):
        return (type(value).__name__, [shape(v) for v in value])
    return (type(value).__name__, repr(value))


@settings(max_examples=400, deadline=None)
@given(bodies())
def test_the_fast_intake_gives_the_value_and_the_error_the_checked_one_gave(
        body: bytes | str) -> None:
    checked = outcome_of(lambda b: _read_checked(b, WHAT), body)
    fast = outcome_of(lambda b: read_json(b, WHAT, frozen="state"), body)
    assert fast == checked


@settings(max_examples=300, deadline=None)
@given(VALUES, st.integers(-2, 2), st.booleans())
def test_the_state_bytes_check_decides_as_json_dumps_does(
        text: str, offset: int, taken: bool) -> None:
    """The issue's words: "size ... rather than a json.dumps", with the same answer and size."""
    try:
        value = json.loads(text)
        frozen = freeze(value)
    except (ValueError, TypeError):
        return  # not a state the server would measure
    if taken:  # the bound kept from the text it was taken in with
        frozen = read_json(json.dumps({"state": value}).encode(), WHAT, frozen="state")["state"]
    size = len(json.dumps(frozen, separators=(",", ":")))
    limit = max(0, size + offset)
    assert json_size_bound(frozen) >= size  # what a SharedState with max_bytes starts from
    assert json_size_over(frozen, limit) == (size if size > limit else None)


def test_a_request_state_is_taken_in_frozen_and_shared_as_it_is() -> None:
    """A request's state comes out of `read_input` frozen, so the run's `SharedState` takes it
    without walking it again."""
    body = json.dumps({"threadId": "t", "runId": "r", "messages": [], "tools": [], "context": [],
                       "forwardedProps": {}, "state": {"todos": [
                           {"id": f"t{i}", "done": i % 2 == 0, "tags": ["a"]}
                           for i in range(50)]}}).encode()
    state = read_input(body).state
    assert type(state) is FrozenDict and type(state["todos"]) is FrozenList
    assert all(type(todo) is FrozenDict and type(todo["tags"]) is FrozenList
               for todo in state["todos"])
    assert SharedState(state).value is state


def test_a_state_nested_past_the_limit_is_still_refused_with_its_path() -> None:
    """Past `MAX_DEPTH` the state is left as parsed, and `freeze` names where it is too deep."""
    value: Any = 1
    for _ in range(MAX_DEPTH):
        value = [value]
    state = read_json(json.dumps({"state": value}).encode(), WHAT, frozen="state")["state"]
    assert type(state) is list
    with pytest.raises(TypeError) as refused:
        freeze(state, "state")
    assert str(refused.value).startswith("state" + "[0]" * MAX_DEPTH + " is nested 65 levels")


def test_an_integer_past_64_bits_in_a_state_stays_an_int() -> None:
    """orjson reads it as a float; the state keeps the int `json.loads` gives."""
    body = b'{"state": {"big": 123456789012345678901234567890, "n": [18446744073709551616]}}'
    state = read_json(body, WHAT, frozen="state")["state"]
    assert state == {"big": 123456789012345678901234567890, "n": [18446744073709551616]}
    assert type(state["big"]) is int and type(state["n"][0]) is int


def test_an_ai_sdk_request_state_is_taken_in_frozen() -> None:
    """The AI SDK body's `state` field comes out of `parse_request` frozen, as AG-UI's does."""
    body = json.dumps({"id": "chat", "trigger": "submit-message", "state": {"todos": [
        {"id": "t1", "done": False}]}, "messages": [
        {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]}).encode()
    _, request = parse_request(body)
    assert type(request.state) is FrozenDict and type(request.state["todos"][0]) is FrozenDict
    assert request.state == {"todos": [{"id": "t1", "done": False}]}


SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False,
                   allow_infinity=False), TEXT.filter(lambda t: not any(
                       0xD800 <= ord(c) <= 0xDFFF for c in t)))
RECORD_KEYS = st.sampled_from(["id", "text", "done", "tags", "[x]", "a+b"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(RECORD_KEYS, SCALAR | st.lists(SCALAR, max_size=2)
                                | st.dictionaries(RECORD_KEYS, SCALAR, max_size=2), max_size=4),
                min_size=1, max_size=6))
def test_records_are_frozen_as_freeze_does_whatever_their_strings_hold(
        records: list[dict[str, Any]]) -> None:
    """Lists of records, the shape frozen in bulk on a guess: strings with brackets, `+` or `e+`
    (which the guess's check reads), containers under keys the first record lacks."""
    body = json.dumps({"state": {"todos": records}}).encode()
    checked = outcome_of(lambda b: _read_checked(b, WHAT), body)
    assert outcome_of(lambda b: read_json(b, WHAT, frozen="state"), body) == checked


RECORD_KEY = st.sampled_from(['"id"', '"text"', '"tags"', '"[x]"', '"e+"', '"\\u00e9"'])
RECORD_VALUE = st.recursive(scalars(), containers, max_leaves=6)
RECORD = st.lists(st.tuples(RECORD_KEY, RECORD_VALUE), max_size=4).map(
    lambda pairs: "{" + ",".join(f"{key}:{value}" for key, value in pairs) + "}")
SCALAR_RECORD = st.lists(st.tuples(RECORD_KEY, scalars()), max_size=3).map(
    lambda pairs: "{" + ",".join(f"{key}:{value}" for key, value in pairs) + "}")
LIST_ITEM = st.one_of(SCALAR_RECORD, SCALAR_RECORD, RECORD, RECORD_VALUE)


@settings(max_examples=400, deadline=None)
@given(st.lists(LIST_ITEM, min_size=1, max_size=9), st.sampled_from([1, 2, 3]), st.booleans(),
       st.sampled_from([0, 0, MAX_DEPTH - 4, MAX_DEPTH - 3, MAX_DEPTH - 2, MAX_DEPTH - 1]))
def test_a_list_of_dicts_is_frozen_as_freeze_does_run_by_run(
        items: list[str], chunk: int, tracking: bool, levels: int) -> None:
    """A list that starts with a dict is frozen a run of dicts at a time, the dicts of scalars
    told apart by the collector's tracking (or, without it, by the guess the text confirms):
    runs of one to three here, so every mix lands across a boundary: dicts of scalars, dicts
    that hold containers under other keys than the first, items that are not dicts, integers
    past 64 bits, `1e16`, strings with brackets or `e+`, nesting at the limit."""
    text = "[" + ",".join(items) + "]"
    for _ in range(levels):
        text = f'{{"k":{text}}}'
    body = f'{{"state":{text}}}'.encode("utf-8", "surrogatepass")
    checked = outcome_of(lambda b: _read_checked(b, WHAT), body)
    with patch.multiple(_parsed, _CHUNK=chunk, _NONES=(None,) * chunk,
                        _TRACKING_TELLS=tracking):
        fast = outcome_of(lambda b: read_json(b, WHAT, frozen="state"), body)
    assert fast == checked


def test_the_collector_tells_which_parsed_dicts_hold_containers() -> None:
    """The fast path for dicts of scalars rests on CPython tracking a dict once a container is
    put in it and leaving a dict of scalars untracked; on an interpreter where that does not
    hold every dict is checked instead (the property test above runs both ways)."""
    assert _parsed._TRACKING_TELLS
    holding, plain = orjson.loads(b'[{"a": 1, "b": [2]}, {"a": 1, "b": "[2]"}]')
    assert _parsed._is_tracked(holding) and not _parsed._is_tracked(plain)


def test_the_parsed_dicts_are_dropped_as_they_are_copied() -> None:
    """`freeze_parsed` owns what it is given: each run of parsed dicts is dropped once copied,
    so no two copies of a long list of records are kept whole at once."""
    value = orjson.loads(json.dumps({"todos": [{"id": i} for i in range(3000)]}))
    todos = value["todos"]
    frozen: Any = _parsed.freeze_parsed(value, MAX_DEPTH)
    assert todos == [None] * 3000
    assert frozen == {"todos": [{"id": i} for i in range(3000)]}
    assert all(type(todo) is FrozenDict for todo in frozen["todos"])
