"""read_json: a body whose JSON holds a lone surrogate is refused, however it was encoded."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyox_agents.adapters._body import read_json
from pyox_agents.service import RequestError

# any text, and lone surrogates (hypothesis leaves those out of text unless asked)
TEXT = st.lists(st.characters() | st.characters(categories=["Cs"]), max_size=8).map("".join)


def body_of(value: str, encoding: str) -> bytes:
    """A JSON body holding `value`, written the way `encoding` says."""
    if encoding == "escaped":  # what clients send: every non-ASCII character escaped
        return json.dumps({"text": value}).encode()
    if encoding == "escaped-utf-16-le":  # escapes too, in UTF-16 without a BOM
        return json.dumps({"text": value}).encode("utf-16-le")
    text = json.dumps({"text": value}, ensure_ascii=False)
    return text.encode(encoding, "surrogatepass")  # json.loads accepts all three


@given(TEXT, st.sampled_from(["escaped", "escaped-utf-16-le", "utf-8", "utf-16", "utf-32"]))
def test_a_body_is_refused_exactly_when_its_json_holds_a_lone_surrogate(
        value: str, encoding: str) -> None:
    body = body_of(value, encoding)
    decoded = json.loads(body)["text"]  # an escaped pair is one character again; others stay
    if any(0xD800 <= ord(c) <= 0xDFFF for c in decoded):
        with pytest.raises(RequestError, match="lone surrogate") as refused:
            read_json(body, "a test body")
        assert refused.value.status == 400
    else:
        assert read_json(body, "a test body") == {"text": decoded}


def test_a_str_body_with_a_raw_surrogate_is_refused() -> None:
    with pytest.raises(RequestError, match="lone surrogate"):
        read_json('{"text": "\ud800"}', "a test body")


@pytest.mark.parametrize("where", ["state", "other"])
def test_an_integer_of_more_digits_than_python_reads_is_refused_saying_so(where: str) -> None:
    """Rule: every bad input gets an error the client can act on: a number too long to read
    is named as one (not Python's advice to raise `sys.set_int_max_str_digits()`), and a long
    one within the limit is read."""
    too_long = f'{{"{where}": {{"n": {"7" * 5000}}}}}'.encode()
    with pytest.raises(RequestError, match="integer of 5,000 digits") as refused:
        read_json(too_long, "a test body", frozen="state")
    assert refused.value.status == 400 and "sys." not in str(refused.value)
    longest = f'{{"{where}": {{"n": -{"7" * 4300}}}}}'.encode()
    assert read_json(longest, "a test body", frozen="state")[where]["n"] == -int("7" * 4300)
