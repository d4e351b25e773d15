"""`ThreadState`: a server's kept versions of a thread's state, and the merge of a
client's edits onto the latest version with the parallel tools' rebase."""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from pyox_agents.service._thread_state import RECENT, ThreadState, aligned, json_equal, merge
from pyox_agents.state.frozen import freeze
from pyox_agents.state.patch import apply, diff

KEYS = st.sampled_from(["a", "b", "c", "d", "e", "f"])
VALUES = st.integers(-3, 3) | st.booleans() | st.text(max_size=3)


def kept_of(*states: Any) -> ThreadState:
    kept = ThreadState()
    for state in states:
        kept.add(state)
    return kept


@given(st.dictionaries(KEYS, VALUES), st.dictionaries(KEYS, VALUES),
       st.dictionaries(KEYS, VALUES))
def test_disjoint_edits_of_the_person_and_a_run_are_all_kept(
        base: dict[str, Any], run: dict[str, Any], person: dict[str, Any]) -> None:
    person = {k: v for k, v in person.items() if k not in run}  # disjoint places
    latest = {**base, **run}
    client = {**base, **person}
    merged = merge(kept_of(base, latest), client, base)  # the client saw `base`
    assert json_equal(merged, {**base, **run, **person})


@given(st.dictionaries(KEYS, VALUES, min_size=1), VALUES, VALUES)
def test_where_both_wrote_one_key_the_persons_value_wins(base: dict[str, Any], theirs: Any,
                                                         mine: Any) -> None:
    key = next(iter(base))
    assume(not json_equal(mine, base[key]) and not json_equal(theirs, base[key]))
    merged = merge(kept_of(base, {**base, key: theirs, "run": 1}), {**base, key: mine}, base)
    assert json_equal(merged, {**base, key: mine, "run": 1})


@given(st.lists(st.text(max_size=2), max_size=5), st.lists(st.text(max_size=2), max_size=3),
       st.text(max_size=2))
def test_items_a_run_appended_stay_when_the_person_edits_an_earlier_one(
        todos: list[str], added: list[str], edit: str) -> None:
    base = {"todos": todos, "title": ""}
    latest = {"todos": todos + added, "title": ""}
    client = {"todos": todos, "title": edit}
    merged = merge(kept_of(base, latest), client, client)  # AG-UI: found by content
    assert json_equal(merged, {"todos": todos + added, "title": edit})


def test_a_client_that_made_no_edit_gets_the_latest_version() -> None:
    kept = kept_of({"n": 1}, {"n": 2}, {"n": 3})
    assert merge(kept, {"n": 1}, {"n": 1}) == {"n": 3}


def test_versions_are_rebuilt_back_to_the_recent_ones() -> None:
    kept = kept_of(*({"n": n, "list": list(range(n))} for n in range(RECENT + 5)))
    versions = list(kept.versions())
    assert len(versions) == RECENT and versions[0][0] == kept.version
    assert [value["n"] for _, value in versions] == list(range(RECENT + 4, 4, -1))
    again = ThreadState.from_json(kept.to_json())
    assert [v for _, v in again.versions()] == [v for _, v in versions]


def test_json_equality_tells_true_from_one_and_minus_zero_from_zero() -> None:
    assert not json_equal({"x": True}, {"x": 1}) and not json_equal([-0.0], [0.0])
    assert json_equal({"a": 1, "b": 2}, {"b": 2, "a": 1})


JSONS = st.recursive(VALUES | st.none(), lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(KEYS, inner, max_size=4), max_leaves=12)


@given(JSONS, JSONS)
def test_a_state_aligned_on_a_version_is_the_same_json_made_of_its_parts(old: Any, new: Any
                                                                         ) -> None:
    base = freeze(old)
    made = aligned(base, new)
    assert json_equal(made, new)
    assert json_equal(apply(base, diff(base, made)), new)  # the diff takes one to the other
    if json_equal(old, new):
        assert made is base


def test_a_client_list_that_grew_differs_from_its_version_only_by_the_new_item() -> None:
    base = freeze({"todos": [{"text": str(i)} for i in range(50)]})
    client = {"todos": [{"text": "new"}] + [{"text": str(i)} for i in range(50)]}
    ops = diff(base, aligned(base, client))
    assert [op.to_json() for op in ops] == [{"op": "add", "path": "/todos/0",
                                             "value": {"text": "new"}}]
