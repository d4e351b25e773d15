"""Drafts: live views that copy on write and record each change as an op when it happens."""

from __future__ import annotations

import datetime
from typing import Any

import jsonpatch
import pytest

from pyox_agents.state.draft import Draft, DraftDict, DraftList
from pyox_agents.state.frozen import FrozenDict, FrozenList, freeze, thaw
from pyox_agents.state.patch import Op


def todos_doc(size: int = 3) -> Any:
    return freeze({"todos": [{"id": i, "done": False} for i in range(size)], "meta": {"n": 0}})


def ops_of(draft: Draft) -> list[dict[str, Any]]:
    return [op.to_json() for op in draft.ops]


def assert_replays(draft: Draft) -> None:
    """The recorded ops, applied with jsonpatch to the base, give the draft's value."""
    assert jsonpatch.apply_patch(thaw(draft.base), ops_of(draft)) == draft.value


# -- reads ---------------------------------------------------------------------------------------


def test_reads_see_the_base_version() -> None:
    draft = Draft(todos_doc())
    state = draft.root
    assert isinstance(state, DraftDict) and isinstance(state["todos"], DraftList)
    assert state["todos"][1]["id"] == 1 and state["todos"][-1]["id"] == 2
    assert len(state["todos"]) == 3 and "meta" in state and state.get("x", 5) == 5
    assert state == thaw(todos_doc()) and state["todos"] == todos_doc()["todos"]
    assert repr(state["meta"]) == "{'n': 0}"


def test_root_of_a_scalar_document_is_the_scalar() -> None:
    assert Draft(freeze(5)).root == 5


def test_reads_record_no_ops_and_keep_the_base_version() -> None:
    base = todos_doc()
    draft = Draft(base)
    list(draft.root["todos"])
    dict(draft.root["meta"])
    assert draft.value is base and not draft.changed


def test_views_compare_with_views_and_plain_values() -> None:
    draft = Draft(todos_doc())
    assert draft.root["todos"][0] == draft.root["todos"][0]
    assert draft.root["todos"][0] == {"id": 0, "done": False}
    assert draft.root["todos"][0] != draft.root["todos"][1]
    assert draft.root["todos"][0] in draft.root["todos"]
    assert draft.root["todos"].index({"id": 1, "done": False}) == 1
    assert draft.root["todos"].count(draft.root["todos"][2]) == 1


def test_copy_is_a_plain_editable_deep_copy() -> None:
    draft = Draft(todos_doc())
    plain = draft.root.copy()
    plain["todos"][0]["done"] = True
    assert type(plain["todos"]) is list and draft.root["todos"][0]["done"] is False
    assert type(draft.root["todos"].copy()) is list


def test_slices_read_as_frozen_lists() -> None:
    draft = Draft(freeze({"l": [1, 2, 3, 4]}))
    part = draft.root["l"][1:3]
    assert part == [2, 3] and type(part) is FrozenList


# -- copy on write -------------------------------------------------------------------------------


def test_write_copies_only_the_containers_on_its_path() -> None:
    base = todos_doc()
    draft = Draft(base)
    draft.root["todos"][1]["done"] = True
    new: Any = draft.value
    assert new is not base and new["todos"] is not base["todos"]
    assert new["todos"][1] is not base["todos"][1]
    assert new["meta"] is base["meta"]
    assert new["todos"][0] is base["todos"][0] and new["todos"][2] is base["todos"][2]
    assert base["todos"][1]["done"] is False
    assert type(new["todos"]) is FrozenList and type(new["todos"][1]) is FrozenDict


def test_each_container_is_copied_once_per_draft() -> None:
    """One working copy per place: the view read at a place is that copy, kept across writes."""
    draft = Draft(todos_doc())
    todos = draft.root["todos"]
    item = todos[1]
    draft.root["todos"][1]["done"] = True
    draft.root["todos"][1]["id"] = 7
    draft.root["todos"].append(1)
    assert draft.root["todos"] is todos and draft.root["todos"][1] is item
    assert item == {"id": 7, "done": True}


def test_the_base_version_never_changes() -> None:
    base = todos_doc()
    before = thaw(base)
    draft = Draft(base)
    draft.root["todos"].insert(0, {"id": 9})
    draft.root["todos"][2]["done"] = True
    draft.root["meta"].clear()
    del draft.root["todos"][1]
    assert base == before


def test_value_put_in_is_copied_as_it_is_then() -> None:
    draft = Draft(freeze({"l": []}))
    mine = {"a": [1]}
    draft.root["l"].append(mine)
    mine["a"].append(2)
    assert draft.root["l"][0] == {"a": [1]} and draft.ops[0].value == {"a": [1]}


# -- dict writes and their ops -------------------------------------------------------------------


def test_dict_set_records_add_or_replace() -> None:
    draft = Draft(freeze({"a": 1}))
    draft.root["a"] = 2
    draft.root["b"] = {"c": [1]}
    assert ops_of(draft) == [
        {"op": "replace", "path": "/a", "value": 2},
        {"op": "add", "path": "/b", "value": {"c": [1]}},
    ]
    assert_replays(draft)


def test_nested_write_records_its_full_path() -> None:
    draft = Draft(todos_doc())
    draft.root["todos"][0]["done"] = True
    assert ops_of(draft) == [{"op": "replace", "path": "/todos/0/done", "value": True}]


def test_dict_delete_pop_popitem_record_removes() -> None:
    draft = Draft(freeze({"a": 1, "b": {"x": 1}, "c": 3, "d": 4}))
    del draft.root["a"]
    assert draft.root.pop("b") == {"x": 1}
    assert draft.root.pop("missing", "default") == "default"
    assert draft.root.popitem() == ("d", 4)
    assert ops_of(draft) == [
        {"op": "remove", "path": "/a"},
        {"op": "remove", "path": "/b"},
        {"op": "remove", "path": "/d"},
    ]
    assert draft.root == {"c": 3}
    with pytest.raises(KeyError):
        del draft.root["missing"]
    with pytest.raises(KeyError):
        draft.root.pop("missing")


def test_popitem_of_empty_dict_raises_key_error() -> None:
    with pytest.raises(KeyError, match="dictionary is empty"):
        Draft(freeze({})).root.popitem()


def test_setdefault_adds_once_and_returns_a_view() -> None:
    draft = Draft(freeze({}))
    draft.root.setdefault("todos", []).append("x")
    draft.root.setdefault("todos", []).append("y")
    assert ops_of(draft) == [
        {"op": "add", "path": "/todos", "value": []},
        {"op": "add", "path": "/todos/0", "value": "x"},
        {"op": "add", "path": "/todos/1", "value": "y"},
    ]


def test_update_and_or_equals_record_one_op_per_key() -> None:
    draft = Draft(freeze({"a": 1}))
    draft.root.update({"a": 2}, b=3)
    state = draft.root
    state |= {"c": 4}
    draft.root |= {}  # assigned back to root: the same document, so nothing is recorded
    assert ops_of(draft) == [
        {"op": "replace", "path": "/a", "value": 2},
        {"op": "add", "path": "/b", "value": 3},
        {"op": "add", "path": "/c", "value": 4},
    ]
    assert draft.root | {"d": 5} == {"a": 2, "b": 3, "c": 4, "d": 5}


def test_dict_clear_records_one_replace() -> None:
    draft = Draft(todos_doc())
    draft.root["meta"].clear()
    assert ops_of(draft) == [{"op": "replace", "path": "/meta", "value": {}}]


def test_keys_values_items_iterate_the_current_dict() -> None:
    draft = Draft(freeze({"a": 1, "b": [2]}))
    draft.root["c"] = 3
    assert list(draft.root.keys()) == ["a", "b", "c"]
    assert list(draft.root.values()) == [1, [2], 3]
    assert isinstance(list(draft.root.values())[1], DraftList)
    assert [(k, v) for k, v in draft.root.items()] == [("a", 1), ("b", [2]), ("c", 3)]


def test_augmented_assignment_of_a_number_records_a_replace() -> None:
    draft = Draft(todos_doc())
    draft.root["meta"]["n"] += 1
    assert ops_of(draft) == [{"op": "replace", "path": "/meta/n", "value": 1}]


def test_non_str_key_is_refused_with_the_path() -> None:
    draft = Draft(todos_doc())
    with pytest.raises(TypeError, match=r'ctx\.state\["meta"\] got a key 3 \(int\); .*str\(key\)'):
        draft.root["meta"][3] = 1
    assert not draft.changed


def test_value_that_is_not_json_is_refused_with_its_path() -> None:
    draft = Draft(todos_doc())
    with pytest.raises(TypeError, match=r'ctx\.state\["todos"\]\[1\]\["due"\] is a datetime'):
        draft.root["todos"][1]["due"] = datetime.datetime.now()
    with pytest.raises(TypeError, match=r'ctx\.state\["todos"\]\[3\]\["tags"\] is a set'):
        draft.root["todos"].append({"tags": {"a"}})
    assert not draft.changed and draft.value is draft.base


# -- list writes and their ops -------------------------------------------------------------------


def test_append_and_extend_record_appends_with_concrete_indices() -> None:
    draft = Draft(freeze({"todos": []}))
    draft.root["todos"].append("Book the flight")
    draft.root["todos"].extend(["a", "b"])
    draft.root["todos"] += ["c"]
    assert ops_of(draft) == [
        {"op": "add", "path": "/todos/0", "value": "Book the flight"},
        {"op": "add", "path": "/todos/1", "value": "a"},
        {"op": "add", "path": "/todos/2", "value": "b"},
        {"op": "add", "path": "/todos/3", "value": "c"},
    ]
    assert all(op.append for op in draft.ops)


def test_plus_equals_on_a_list_does_not_replace_it() -> None:
    draft = Draft(freeze({"todos": [1]}))
    draft.root["todos"] += [2]
    assert [op.kind for op in draft.ops] == ["add"]


def test_extend_with_itself_reads_it_first() -> None:
    draft = Draft(freeze({"l": [1, 2]}))
    draft.root["l"].extend(draft.root["l"])
    assert draft.root["l"] == [1, 2, 1, 2]
    assert_replays(draft)


@pytest.mark.parametrize("index", [-10, -3, -1, 0, 1, 3, 10])
def test_insert_normalises_the_index_like_list_insert(index: int) -> None:
    draft = Draft(freeze({"l": [0, 1, 2]}))
    expected = [0, 1, 2]
    expected.insert(index, "x")
    draft.root["l"].insert(index, "x")
    assert draft.root["l"] == expected
    assert draft.ops[0].path == ("l", expected.index("x"))
    assert not draft.ops[0].append


def test_list_set_delete_pop_remove_record_ops() -> None:
    draft = Draft(freeze({"l": [0, 1, 2, 3, 4]}))
    lst = draft.root["l"]
    lst[-1] = 40
    del lst[0]
    assert lst.pop() == 40
    assert lst.pop(0) == 1
    lst.remove(3)
    assert ops_of(draft) == [
        {"op": "replace", "path": "/l/4", "value": 40},
        {"op": "remove", "path": "/l/0"},
        {"op": "remove", "path": "/l/3"},
        {"op": "remove", "path": "/l/0"},
        {"op": "remove", "path": "/l/1"},
    ]
    assert lst == [2]


def test_list_errors_match_python() -> None:
    lst = Draft(freeze({"l": [1]})).root["l"]
    with pytest.raises(IndexError, match="list index out of range"):
        lst[5]
    with pytest.raises(IndexError, match="list assignment index out of range"):
        lst[-5] = 1
    with pytest.raises(IndexError, match="pop index out of range"):
        lst.pop(3)
    with pytest.raises(ValueError, match=r"list.remove\(x\): x not in list"):
        lst.remove(7)
    lst.clear()
    with pytest.raises(IndexError, match="pop from empty list"):
        lst.pop()


def test_sort_and_reverse_record_one_replace() -> None:
    draft = Draft(freeze({"l": [3, 1, 2]}))
    draft.root["l"].sort()
    draft.root["l"].reverse()
    draft.root["l"].sort(key=lambda v: -v)  # already in that order: nothing to record
    assert ops_of(draft) == [
        {"op": "replace", "path": "/l", "value": [1, 2, 3]},
        {"op": "replace", "path": "/l", "value": [3, 2, 1]},
    ]


def test_sort_key_reads_the_items() -> None:
    draft = Draft(todos_doc())
    draft.root["todos"].sort(key=lambda todo: -todo["id"])
    assert [todo["id"] for todo in draft.root["todos"]] == [2, 1, 0]


def test_list_clear_records_one_replace() -> None:
    draft = Draft(freeze({"l": [1, 2]}))
    draft.root["l"].clear()
    draft.root["l"].clear()
    assert ops_of(draft) == [{"op": "replace", "path": "/l", "value": []}]


@pytest.mark.parametrize(
    ("index", "values"),
    [
        (slice(1, 3), ["a"]),
        (slice(1, 1), ["a", "b"]),
        (slice(3, 1), ["a"]),
        (slice(None), []),
        (slice(-2, None), ["a", "b", "c"]),
        (slice(None, None, 2), ["a", "b", "c"]),
        (slice(None, None, -1), ["a", "b", "c", "d", "e"]),
    ],
)
def test_slice_assignment_matches_python(index: slice, values: list[str]) -> None:
    draft = Draft(freeze({"l": [0, 1, 2, 3, 4]}))
    expected = [0, 1, 2, 3, 4]
    expected[index] = values
    draft.root["l"][index] = values
    assert draft.root["l"] == expected
    assert_replays(draft)


def test_extended_slice_needs_equal_length() -> None:
    lst = Draft(freeze({"l": [0, 1, 2, 3]})).root["l"]
    with pytest.raises(ValueError, match="sequence of size 1 to extended slice of size 2"):
        lst[::2] = ["a"]


@pytest.mark.parametrize(
    "index", [slice(1, 3), slice(None, None, 2), slice(None, None, -2), slice(9, 10)]
)
def test_slice_delete_matches_python(index: slice) -> None:
    draft = Draft(freeze({"l": [0, 1, 2, 3, 4]}))
    expected = [0, 1, 2, 3, 4]
    del expected[index]
    del draft.root["l"][index]
    assert draft.root["l"] == expected
    assert_replays(draft)


def test_multiply_and_add_like_a_list() -> None:
    draft = Draft(freeze({"l": [1, 2]}))
    assert draft.root["l"] + [3] == [1, 2, 3] and [0] + draft.root["l"] == [0, 1, 2]
    assert draft.root["l"] * 2 == [1, 2, 1, 2]
    lst = draft.root["l"]
    lst *= 2
    assert draft.root["l"] == [1, 2, 1, 2]
    assert_replays(draft)


# -- views follow their value --------------------------------------------------------------------


def test_view_keeps_working_after_its_index_shifts() -> None:
    draft = Draft(todos_doc(10))
    item = draft.root["todos"][5]
    draft.root["todos"].insert(0, {"id": "new"})
    item["done"] = True
    assert ops_of(draft)[-1] == {"op": "replace", "path": "/todos/6/done", "value": True}
    draft.root["todos"].pop(0)
    draft.root["todos"].pop(0)
    item["id"] = 50
    assert ops_of(draft)[-1] == {"op": "replace", "path": "/todos/4/id", "value": 50}
    assert_replays(draft)


def test_two_views_of_one_place_see_each_others_writes() -> None:
    draft = Draft(todos_doc())
    first = draft.root["todos"][1]
    second = draft.root["todos"][1]
    first["done"] = True
    second["id"] = 10
    assert first == {"id": 10, "done": True} == second
    assert [op.path for op in draft.ops] == [("todos", 1, "done"), ("todos", 1, "id")]


def test_view_of_a_removed_value_refuses_writes() -> None:
    draft = Draft(todos_doc())
    item = draft.root["todos"][1]
    del draft.root["todos"][1]
    assert item["id"] == 1  # reads give the value it had
    with pytest.raises(RuntimeError, match=r"was removed from ctx\.state .*read it again"):
        item["done"] = True


def test_view_of_a_replaced_value_refuses_writes() -> None:
    draft = Draft(todos_doc())
    meta = draft.root["meta"]
    draft.root["meta"] = {"n": 5}
    with pytest.raises(RuntimeError, match=r'ctx\.state\["meta"\] was removed'):
        meta["n"] = 1


def test_view_of_a_cleared_container_follows_it() -> None:
    draft = Draft(todos_doc())
    todos = draft.root["todos"]
    draft.root["todos"].clear()
    todos.append("x")
    assert draft.root["todos"] == ["x"]
    assert_replays(draft)


# -- sealing: a working copy put at a second place is never changed again ------------------------


def test_value_copied_within_the_document_is_not_changed_from_the_other_place() -> None:
    draft = Draft(freeze({"a": {"x": 1}}))
    draft.root["a"]["x"] = 2  # "a" is now a working copy
    draft.root["b"] = draft.root["a"]
    draft.root["a"]["x"] = 3
    assert draft.root == {"a": {"x": 3}, "b": {"x": 2}}
    assert draft.ops[1].value == {"x": 2}
    assert_replays(draft)


def test_item_appended_to_its_own_list_is_a_separate_value() -> None:
    draft = Draft(freeze({"l": [{"n": 0}]}))
    lst = draft.root["l"]
    lst[0]["n"] = 1
    lst.append(lst[0])
    lst[0]["n"] = 2
    lst[1]["n"] = 3
    assert lst == [{"n": 2}, {"n": 3}]
    assert_replays(draft)


def test_values_handed_out_never_change() -> None:
    draft = Draft(freeze({"l": [{"n": 0}]}))
    draft.root["l"][0]["n"] = 1
    part = draft.root["l"][:]
    snapshot = draft.value
    draft.root["l"][0]["n"] = 2
    assert part == [{"n": 1}] and snapshot == {"l": [{"n": 1}]}
    assert draft.root["l"][0]["n"] == 2


def test_popped_value_put_back_is_not_changed_from_its_old_place() -> None:
    draft = Draft(freeze({"l": [{"n": 0}], "m": []}))
    draft.root["l"][0]["n"] = 1
    popped = draft.root["l"].pop()
    draft.root["m"].append([popped])
    draft.root["m"][0][0]["n"] = 2
    assert draft.ops[2].value == [{"n": 1}]
    assert_replays(draft)


def test_freeze_of_a_view_gives_its_current_value() -> None:
    draft = Draft(todos_doc())
    draft.root["meta"]["n"] = 3
    value = freeze(draft.root["meta"])
    draft.root["meta"]["n"] = 4
    assert value == {"n": 3} and type(value) is FrozenDict


# -- replace -------------------------------------------------------------------------------------


def test_replace_records_a_diff_and_keeps_recording_after() -> None:
    base = todos_doc()
    draft = Draft(base)
    draft.replace({**draft.root, "x": 1})
    draft.root["meta"]["n"] = 2
    assert ops_of(draft) == [
        {"op": "add", "path": "/x", "value": 1},
        {"op": "replace", "path": "/meta/n", "value": 2},
    ]
    new: Any = draft.value
    assert new["todos"] is base["todos"]
    assert_replays(draft)


def test_views_taken_before_replace_still_work_on_kept_parts() -> None:
    draft = Draft(todos_doc())
    todos = draft.root["todos"]
    draft.replace({**draft.root, "x": 1})
    todos.append("y")
    assert ops_of(draft)[-1] == {"op": "add", "path": "/todos/3", "value": "y"}


def test_replace_with_a_scalar_and_back() -> None:
    draft = Draft(todos_doc())
    draft.replace(5)
    assert draft.root == 5
    draft.replace(["a"])
    draft.root.append("b")
    assert ops_of(draft) == [
        {"op": "replace", "path": "", "value": 5},
        {"op": "replace", "path": "", "value": ["a"]},
        {"op": "add", "path": "/1", "value": "b"},
    ]


def test_replace_with_itself_records_nothing() -> None:
    draft = Draft(todos_doc())
    draft.replace(draft.root)
    assert not draft.changed


def test_replace_refuses_what_is_not_json() -> None:
    draft = Draft(todos_doc())
    with pytest.raises(TypeError, match=r'ctx\.state\["x"\] is a set'):
        draft.replace({"x": {1}})
    assert not draft.changed


def test_keys_with_slash_and_tilde_are_escaped_in_ops() -> None:
    draft = Draft(freeze({"a/b": {"~c": 1}}))
    draft.root["a/b"]["~c"] = 2
    assert ops_of(draft) == [{"op": "replace", "path": "/a~1b/~0c", "value": 2}]
    assert_replays(draft)


# -- close and read-only -------------------------------------------------------------------------


def test_writes_after_close_raise_and_reads_still_work() -> None:
    draft = Draft(todos_doc(), tool="add_todo")
    todos = draft.root["todos"]
    draft.close()
    assert todos[0]["id"] == 0 and draft.closed
    message = r"ctx\.state changed after tool 'add_todo' returned; change it inside the tool"
    with pytest.raises(RuntimeError, match=message):
        todos.append(1)
    with pytest.raises(RuntimeError, match="after tool 'add_todo' returned"):
        draft.replace({})
    assert not draft.changed


def test_read_only_draft_refuses_every_write() -> None:
    draft = Draft(todos_doc(), tool="lookup", writable=False)
    assert draft.root["todos"][0]["id"] == 0
    with pytest.raises(PermissionError, match=r"ctx\.state is read-only in tool 'lookup'"):
        draft.root["todos"].append(1)
    with pytest.raises(PermissionError, match="read-only"):
        draft.root["meta"]["n"] = 1
    with pytest.raises(PermissionError, match="read-only"):
        draft.replace({})
    with pytest.raises(PermissionError, match="read-only"):
        draft.root.clear()
    assert not draft.changed


def test_close_tells_the_owner_once() -> None:
    closed: list[Draft] = []
    draft = Draft(todos_doc(), on_close=closed.append)
    draft.close()
    draft.close()
    assert closed == [draft]


def test_op_records_the_frozen_value() -> None:
    draft = Draft(freeze({}))
    draft.root["a"] = [1, {"b": 2}]
    op = draft.ops[0]
    assert op == Op("add", ("a",), [1, {"b": 2}])
    assert type(op.value) is FrozenList


def test_item_inserted_before_itself_is_a_separate_value() -> None:
    draft = Draft(freeze({"l": [{"n": 0}]}))
    lst = draft.root["l"]
    item = lst[0]
    lst.insert(0, item)
    item["n"] = 1
    assert lst == [{"n": 0}, {"n": 1}]
    assert_replays(draft)


def test_view_under_a_rebuilt_container_must_be_read_again() -> None:
    draft = Draft(todos_doc())
    first = draft.root["todos"][0]
    draft.root["todos"] = [*draft.root["todos"], {"id": 3}]
    with pytest.raises(RuntimeError, match=r'ctx\.state\["todos"\]\[0\] was removed'):
        first["done"] = True
    draft.root["todos"][0]["done"] = True
    assert ops_of(draft)[-1] == {"op": "replace", "path": "/todos/0/done", "value": True}


def test_value_put_at_a_second_place_is_changed_only_through_that_place() -> None:
    """A frozen container may sit at two places; each place gets its own view when read, so a
    write lands only where it was made (the issue changed this: the moved value was a copy)."""
    base = todos_doc()
    draft = Draft(base)
    draft.replace({**draft.root, "archive": draft.root["todos"]})
    new: Any = draft.value
    assert new["todos"] is base["todos"]  # kept at its place: shared
    assert new["archive"] == base["todos"]
    draft.root["archive"][0]["done"] = True
    assert draft.root["todos"][0]["done"] is False and draft.root["archive"][0]["done"] is True
    assert_replays(draft)
