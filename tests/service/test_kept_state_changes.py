"""A thread's kept state written as its changes: the changes `ThreadState` gives for the
versions added since the store's, applied to what the store holds, are the whole state a
whole write would have kept, whatever versions came (whole states, ops, skipped numbers,
more than `RECENT` of them)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents.service._thread_state import RECENT, ThreadState
from pyox_agents.state.patch import parse_patch
from pyox_agents.stores._kept_changes import fold

ITEMS = st.lists(st.integers(0, 5), max_size=6)
STATES = st.fixed_dictionaries({"todos": ITEMS}, optional={"title": st.text(max_size=3)})
EDITS = st.one_of(
    st.tuples(st.just("whole"), STATES),
    st.tuples(st.just("append"), st.integers(0, 9)),
    st.tuples(st.just("remove"), st.integers(0, 9)),
    st.tuples(st.just("skip"), st.integers(1, 3)),
    st.tuples(st.just("write"), st.none()),
)


def as_stored(kept: ThreadState) -> dict[str, Any]:
    """What a store gives back of a whole write of `kept` (JSON text, read again)."""
    loaded: dict[str, Any] = json.loads(json.dumps(kept.to_json()))
    return loaded


def apply_edit(kept: ThreadState, kind: str, arg: Any) -> None:
    if kind == "whole":
        kept.add(arg)
    elif kind == "skip":
        kept.add({"todos": [kept.version]}, kept.version + arg)
    elif kind == "append":
        _, ops = parse_patch(kept.frozen(), [{"op": "add", "path": "/todos/-", "value": arg}])
        state, _ = parse_patch(kept.frozen(), [op.to_json() for op in ops])
        kept.add(state, ops=ops)
    elif kind == "remove" and kept.frozen()["todos"]:
        at = arg % len(kept.frozen()["todos"])
        state, ops = parse_patch(kept.frozen(), [{"op": "remove", "path": f"/todos/{at}"}])
        kept.add(state, ops=ops)


@settings(max_examples=200, deadline=None)
@given(STATES, st.lists(EDITS, max_size=3 * RECENT))
def test_the_changes_since_the_stored_version_give_the_whole_state(
        first: dict[str, Any], edits: list[tuple[str, Any]]) -> None:
    kept = ThreadState()
    kept.add(first)
    stored = as_stored(kept)  # written whole
    kept.stored()
    for kind, arg in edits:
        if kind == "write":  # the changes so far are appended: the store holds this version
            unstored = kept.unstored()
            if unstored is not None:
                assert unstored[0] == stored["version"]
                stored = json.loads(json.dumps(fold(stored, unstored[1])))
            kept.stored()
            continue
        apply_edit(kept, kind, arg)
    unstored = kept.unstored()
    changes = unstored[1] if unstored is not None else []
    assert fold(stored, changes) == as_stored(kept)


def test_a_state_never_written_has_no_changes_to_append() -> None:
    """A new thread's state is written whole: the store holds nothing it could extend."""
    kept = ThreadState()
    kept.add({"n": 1})
    kept.add({"n": 2})
    assert kept.unstored() is None


def test_one_items_edit_of_a_big_state_is_a_small_change() -> None:
    """The change of a one-item edit is the size of the edit, not of the state."""
    kept = ThreadState.from_json({"version": 1, "state": {"todos": list(range(100_000))},
                                  "back": []})
    state, ops = parse_patch(kept.frozen(), [{"op": "replace", "path": "/todos/5", "value": 9}])
    kept.add(state, ops=ops)
    unstored = kept.unstored()
    assert unstored is not None and unstored[0] == 1
    assert len(json.dumps(unstored[1])) < 300
