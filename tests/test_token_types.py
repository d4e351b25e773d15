"""`TextChunk` and `TextDelta`, one of each per token, write their slots themselves (a frozen
dataclass's `__init__` costs twice as much): they stay frozen dataclasses in every other way."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyox_agents.events import TextDelta
from pyox_agents.models.base import TextChunk

_TEXT = st.text(st.characters(exclude_categories=()), max_size=5)


@given(_TEXT, _TEXT, st.none() | _TEXT)
def test_a_text_delta_is_the_frozen_dataclass_it_says(message_id: str, delta: str,
                                                       run_id: str | None) -> None:
    """Rule: built by position or keyword, a `TextDelta` has its fields, compares and hashes by
    them, refuses a change, and survives `replace`, copies, pickling and `match`."""
    event = TextDelta(message_id, delta, run_id)
    assert event == TextDelta(message_id=message_id, delta=delta, run_id=run_id)
    assert (event.message_id, event.delta, event.run_id) == (message_id, delta, run_id)
    assert hash(event) == hash(TextDelta(message_id, delta, run_id))
    assert dataclasses.astuple(event) == (message_id, delta, run_id)
    assert TextDelta(message_id, delta).run_id is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.delta = "changed"  # type: ignore[misc]
    assert dataclasses.replace(event, delta="x") == TextDelta(message_id, "x", run_id)
    assert pickle.loads(pickle.dumps(event)) == event == copy.deepcopy(event)
    match event:
        case TextDelta(message_id=m, delta=d, run_id=r):
            assert (m, d, r) == (message_id, delta, run_id)


@given(_TEXT)
def test_a_text_chunk_is_the_frozen_dataclass_it_says(delta: str) -> None:
    """Rule: the same for a model's `TextChunk`."""
    chunk = TextChunk(delta)
    assert chunk == TextChunk(delta=delta) and chunk.delta == delta
    assert hash(chunk) == hash(TextChunk(delta))
    with pytest.raises(dataclasses.FrozenInstanceError):
        chunk.delta = "changed"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(chunk)) == chunk == copy.deepcopy(chunk)
    assert repr(chunk) == f"TextChunk(delta={delta!r})"


def test_a_text_delta_or_chunk_without_its_text_is_refused() -> None:
    """Rule: a missing or unknown argument is a TypeError, as a dataclass's is."""
    with pytest.raises(TypeError, match="delta"):
        TextDelta("m")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="colour"):
        TextChunk("x", colour=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        TextChunk()  # type: ignore[call-arg]
