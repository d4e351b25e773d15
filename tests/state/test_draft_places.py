"""Writes through a draft's views land at the place where the view was taken, always."""

from __future__ import annotations

import jsonpatch
import pytest

from pyox_agents.state.draft import Draft
from pyox_agents.state.frozen import FrozenDict, FrozenList, freeze, thaw
from pyox_agents.state.shared import SharedState


def assert_replays(draft: Draft) -> None:
    """The recorded ops, applied with jsonpatch to the base, give the draft's value."""
    patch = [op.to_json() for op in draft.ops]
    assert jsonpatch.apply_patch(thaw(draft.base), patch) == draft.value


def test_alias_writes_where_it_was_taken_with_one_container_at_two_indexes() -> None:
    """`days + days`: the same frozen container at indexes 0 and 1 (and 2, 3)."""
    day = freeze({"slots": []})
    draft = Draft(freeze({"days": [day, day, day, day]}))
    days = draft.root["days"]
    alias = days[2]
    days.insert(0, {"slots": ["new"]})
    alias["slots"].append("9:00")
    assert [thaw(d) for d in draft.root["days"]] == [
        {"slots": ["new"]}, {"slots": []}, {"slots": []}, {"slots": ["9:00"]}, {"slots": []},
    ]
    assert draft.ops[-1].to_json() == {"op": "add", "path": "/days/3/slots/0", "value": "9:00"}
    assert_replays(draft)


def test_alias_writes_where_it_was_taken_after_a_list_times_two() -> None:
    draft = Draft(freeze({"l": [{"n": 0}]}))
    lst = draft.root["l"]
    lst *= 2
    second = lst[1]
    first = lst[0]
    lst.insert(0, {"n": -1})
    second["n"] = 2
    first["n"] = 1
    assert draft.root["l"] == [{"n": -1}, {"n": 1}, {"n": 2}]
    assert_replays(draft)


def test_alias_writes_where_it_was_taken_in_concatenated_slices() -> None:
    draft = Draft(freeze({"l": [{"n": 0}, {"n": 1}]}))
    draft.root["l"] = draft.root["l"][0:1] + draft.root["l"][0:2]
    lst = draft.root["l"]
    third = lst[2]
    del lst[0]
    third["n"] = 10
    assert draft.root["l"] == [{"n": 0}, {"n": 10}]
    assert_replays(draft)


def test_alias_writes_where_it_was_taken_in_the_committed_version() -> None:
    day = freeze({"slots": []})
    state = SharedState(freeze({"days": [day, day]}))
    draft = state.draft("plan")
    alias = draft.root["days"][1]
    draft.root["days"].insert(0, {"slots": []})
    alias["slots"].append("x")
    commit = state.commit(draft)
    expected = {"days": [{"slots": []}, {"slots": []}, {"slots": ["x"]}]}
    assert commit is not None and commit.state == expected
    assert jsonpatch.apply_patch({"days": [{"slots": []}, {"slots": []}]}, commit.delta) == expected


def test_write_through_the_old_root_view_after_replacing_the_state_raises() -> None:
    draft = Draft(freeze({"todos": ["a"]}))
    old = draft.root
    draft.root = {"todos": []}
    message = r"ctx\.state was replaced \(ctx\.state = \.\.\.\) .*read it again from ctx\.state"
    with pytest.raises(RuntimeError, match=message):
        old["x"] = 1
    with pytest.raises(RuntimeError, match="read it again"):
        old["todos"].append("b")
    assert draft.value == {"todos": []} and old == {"todos": ["a"]}


def test_detached_alias_reads_the_value_its_place_had_when_removed() -> None:
    draft = Draft(freeze({"todos": [{"done": False}]}))
    first = draft.root["todos"][0]
    second = draft.root["todos"][0]
    first["done"] = True
    draft.root["todos"].pop(0)
    assert second == {"done": True} and second["done"] is True
    with pytest.raises(RuntimeError, match=r'ctx\.state\["todos"\]\[0\] was removed'):
        second["done"] = False


def test_aliases_of_one_place_are_one_object() -> None:
    draft = Draft(freeze({"todos": [{"done": False}]}))
    assert draft.root["todos"][0] is draft.root["todos"][0]
    assert draft.root is draft.root


def test_views_of_kept_parts_keep_working_after_replacing_the_state() -> None:
    draft = Draft(freeze({"todos": [1], "meta": {"n": 0}}))
    todos, meta = draft.root["todos"], draft.root["meta"]
    draft.root = {**draft.root, "meta": {"n": 1}}
    todos.append(2)
    with pytest.raises(RuntimeError, match=r'ctx\.state\["meta"\] was removed'):
        meta["n"] = 5
    assert draft.value == {"todos": [1, 2], "meta": {"n": 1}}
    assert_replays(draft)


def test_moving_an_edited_item_keeps_both_places_right() -> None:
    draft = Draft(freeze({"todos": [{"n": 0}, {"n": 1}], "archive": []}))
    draft.root["todos"][1]["n"] = 11
    draft.root["archive"].append(draft.root["todos"].pop())
    draft.root["archive"][0]["n"] = 12
    draft.root["todos"][0]["n"] = 10
    assert draft.value == {"todos": [{"n": 10}], "archive": [{"n": 12}]}
    assert type(draft.value) is FrozenDict and type(draft.value["archive"]) is FrozenList  # type: ignore[index,call-overload]
    assert_replays(draft)


def test_alias_writes_where_it_was_taken_after_removals_before_it() -> None:
    draft = Draft(freeze([None, 0, 0, []]))
    alias = draft.root[3]
    del draft.root[0:3]
    alias.append(1)
    assert draft.value == [[1]]
    assert draft.ops[-1].to_json() == {"op": "add", "path": "/0/0", "value": 1}
    assert_replays(draft)
