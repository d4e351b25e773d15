"""Ops: their RFC 6902 form, applying with path copying, rebasing past commits, diffing."""

from __future__ import annotations

from typing import Any

import jsonpatch
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyox_agents.state.frozen import FrozenDict, FrozenList, freeze, thaw
from pyox_agents.state.patch import Op, apply, apply_json, diff
from pyox_agents.state.rebase import Conflict, rebase


def doc() -> Any:
    return freeze({"todos": [{"id": 0}, {"id": 1}, {"id": 2}], "other": {"deep": [1, 2]}, "n": 1})


# -- Op.to_json ----------------------------------------------------------------------------------


def test_op_to_json_is_plain_rfc6902_with_the_concrete_index() -> None:
    op = Op("add", ("todos", 0), "Book the flight", append=True)
    assert op.to_json() == {"op": "add", "path": "/todos/0", "value": "Book the flight"}


def test_remove_to_json_has_no_value() -> None:
    assert Op("remove", ("a/b", "c~d")).to_json() == {"op": "remove", "path": "/a~1b/c~0d"}


def test_op_to_json_value_is_a_plain_copy() -> None:
    value = Op("replace", (), freeze({"a": [1]})).to_json()["value"]
    assert type(value) is dict and type(value["a"]) is list  # type: ignore[index]


# -- apply ---------------------------------------------------------------------------------------


def test_apply_leaves_the_old_version_unchanged() -> None:
    old = doc()
    before = thaw(old)
    apply(old, [Op("replace", ("todos", 1, "id"), 9), Op("remove", ("n",))])
    assert old == before


def test_untouched_subtrees_are_shared() -> None:
    old = doc()
    new: Any = apply(old, [Op("replace", ("todos", 1, "id"), 9)])
    assert new["other"] is old["other"]
    assert new["todos"][0] is old["todos"][0] and new["todos"][2] is old["todos"][2]
    assert new["todos"] is not old["todos"] and new["todos"][1] == {"id": 9}
    assert type(new) is FrozenDict and type(new["todos"]) is FrozenList


def test_apply_copies_each_container_once_per_call() -> None:
    old = doc()
    copies: list[Any] = []
    original_new = FrozenList.__dict__["__new__"]

    def counting_new(cls: type[FrozenList], *args: Any) -> FrozenList:
        made: FrozenList = original_new(cls, *args)
        copies.append(made)
        return made

    FrozenList.__new__ = staticmethod(counting_new)  # type: ignore[assignment]
    try:
        ops = [Op("add", ("todos", 3), 3, append=True), Op("replace", ("todos", 0), 0)]
        new: Any = apply(old, [*ops, Op("remove", ("todos", 1))])
    finally:
        FrozenList.__new__ = original_new  # type: ignore[method-assign]
    assert len(copies) == 1
    assert new["todos"] == [0, {"id": 2}, 3]


def test_apply_can_replace_the_root() -> None:
    assert apply(doc(), [Op("replace", (), freeze([1]))]) == [1]


def test_apply_refuses_a_path_that_does_not_exist() -> None:
    with pytest.raises(ValueError, match=r"cannot replace /todos/7/id: /todos/7 does not exist"):
        apply(doc(), [Op("replace", ("todos", 7, "id"), 1)])
    with pytest.raises(ValueError, match="cannot remove /missing"):
        apply(doc(), [Op("remove", ("missing",))])
    with pytest.raises(ValueError, match=r"/n is not an object or array"):
        apply(doc(), [Op("add", ("n", "x"), 1)])


# -- rebase --------------------------------------------------------------------------------------


def test_insert_committed_before_shifts_later_indices() -> None:
    mine = [Op("replace", ("todos", 1, "id"), 9)]
    assert rebase(mine, [Op("add", ("todos", 0), "new")])[0].path == ("todos", 2, "id")


def test_insert_committed_after_leaves_earlier_indices() -> None:
    mine = [Op("replace", ("todos", 1, "id"), 9)]
    assert rebase(mine, [Op("add", ("todos", 2), "new")])[0].path == ("todos", 1, "id")


def test_remove_committed_before_shifts_later_indices_down() -> None:
    mine = [Op("replace", ("todos", 2, "id"), 9)]
    assert rebase(mine, [Op("remove", ("todos", 0))])[0].path == ("todos", 1, "id")


def test_two_inserts_at_one_index_put_the_committed_one_first() -> None:
    assert rebase([Op("add", ("todos", 1), "mine")], [Op("add", ("todos", 1), "theirs")]) == [
        Op("add", ("todos", 2), "mine")
    ]


def test_append_stays_at_the_end_of_the_list() -> None:
    committed = [Op("add", ("todos", 3), "a", append=True), Op("add", ("todos", 4), "b")]
    mine = [Op("add", ("todos", 3), "mine", append=True)]
    assert rebase(mine, committed)[0].path == ("todos", 5)
    shrunk = [Op("remove", ("todos", 0)), Op("remove", ("todos", 0))]
    assert rebase(mine, shrunk)[0].path == ("todos", 1)


def test_later_tool_ops_line_up_with_earlier_ones() -> None:
    base = doc()
    mine = [Op("add", ("todos", 0), "x"), Op("replace", ("todos", 2, "id"), 9)]  # 2 = old item 1
    committed = [Op("add", ("todos", 1), "theirs")]
    rebased = rebase(mine, committed)
    result: Any = apply(apply(base, committed), rebased)
    assert result["todos"] == ["x", {"id": 0}, "theirs", {"id": 9}, {"id": 2}]


def test_committed_ops_are_shifted_past_the_tool_ops_too() -> None:
    mine = [Op("add", ("todos", 0), "x"), Op("remove", ("todos", 3))]  # removes old item 2
    committed = [Op("add", ("todos", 2), "theirs"), Op("replace", ("todos", 1, "id"), 7)]
    result: Any = apply(apply(doc(), committed), rebase(mine, committed))
    assert result["todos"] == ["x", {"id": 0}, {"id": 7}, "theirs"]


def test_different_keys_of_one_dict_never_conflict() -> None:
    assert rebase([Op("add", ("a",), 1)], [Op("add", ("b",), 2)]) == [Op("add", ("a",), 1)]


def test_different_list_items_never_conflict() -> None:
    mine = [Op("replace", ("todos", 0, "id"), 5)]
    assert rebase(mine, [Op("replace", ("todos", 1, "id"), 6)]) == mine


def test_insert_next_to_a_removed_item_does_not_conflict() -> None:
    mine = [Op("add", ("todos", 1), "x")]
    assert rebase(mine, [Op("remove", ("todos", 1))]) == mine


def test_insert_before_an_edited_item_does_not_conflict() -> None:
    mine = [Op("add", ("todos", 1), "x")]
    assert rebase(mine, [Op("replace", ("todos", 1, "id"), 5)]) == mine


@pytest.mark.parametrize(
    ("mine", "theirs", "where"),
    [
        (Op("replace", ("n",), 2), Op("replace", ("n",), 3), "/n"),
        (Op("add", ("x",), 2), Op("add", ("x",), 3), "/x"),
        (Op("replace", ("todos", 1, "id"), 2), Op("remove", ("todos", 1)), "/todos/1"),
        (Op("remove", ("todos", 1)), Op("replace", ("todos", 1, "id"), 2), "/todos/1"),
        (Op("replace", ("other", "deep", 0), 5), Op("replace", ("other",), 1), "/other"),
        (Op("add", ("todos", 1), "x"), Op("replace", ("todos",), []), "/todos"),
        (Op("replace", ("todos",), []), Op("add", ("todos", 3), "x", append=True), "/todos"),
        (Op("replace", ("todos", 0, "id"), 1), Op("replace", (), {}), ""),
    ],
)
def test_same_place_or_ancestor_conflicts(mine: Op, theirs: Op, where: str) -> None:
    with pytest.raises(Conflict, match=r"the shared state changed .* while this tool ran") as info:
        rebase([mine], [theirs])
    assert info.value.path == where


def test_conflict_message_names_the_path() -> None:
    assert str(Conflict("/x")) == "the shared state changed at /x while this tool ran"


def test_conflict_found_after_shifting() -> None:
    mine = [Op("replace", ("todos", 1, "id"), 5)]
    committed = [Op("add", ("todos", 0), "new"), Op("remove", ("todos", 2))]
    with pytest.raises(Conflict) as info:
        rebase(mine, committed)
    assert info.value.path == "/todos/2"


# -- diff ----------------------------------------------------------------------------------------


def replayed(old: Any, new: Any) -> Any:
    return jsonpatch.apply_patch(thaw(old), [op.to_json() for op in diff(old, new)])


def test_diff_of_the_same_object_is_empty() -> None:
    old = doc()
    assert diff(old, old) == []


def test_diff_skips_values_kept_by_identity() -> None:
    old = doc()
    new = freeze({**old, "x": 1})
    assert diff(old, new) == [Op("add", ("x",), 1)]


def test_diff_of_dicts_removes_adds_and_recurses() -> None:
    old = freeze({"a": 1, "b": {"c": 1, "d": 2}, "gone": 0})
    new = freeze({"a": 1, "b": {"c": 5, "d": 2}, "new": []})
    assert diff(old, new) == [
        Op("remove", ("gone",)),
        Op("replace", ("b", "c"), 5),
        Op("add", ("new",), []),
    ]


def test_diff_of_lists_strips_common_prefix_and_suffix() -> None:
    old = freeze([1, 2, 3, 4])
    assert diff(old, freeze([1, 9, 2, 3, 4])) == [Op("add", (1,), 9)]
    assert diff(old, freeze([1, 4])) == [Op("remove", (2,)), Op("remove", (1,))]
    assert diff(old, freeze([1, 7, 8, 4])) == [Op("replace", (1,), 7), Op("replace", (2,), 8)]


def test_diff_tells_bool_int_and_float_apart() -> None:
    assert diff(freeze([1]), freeze([True])) == [Op("replace", (0,), True)]
    assert diff(freeze({"a": 1}), freeze({"a": 1.0})) == [Op("replace", ("a",), 1.0)]


def test_diff_replaces_when_types_differ() -> None:
    assert diff(freeze({"a": [1]}), freeze({"a": {"b": 1}})) == [Op("replace", ("a",), {"b": 1})]
    assert diff(freeze({"a": 1}), freeze([1])) == [Op("replace", (), [1])]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"a": [1, 2, 3]}, {"a": [3, 2, 1, 0]}),
        ([{"a": 1}, {"b": 2}], [{"b": 2}]),
        ({"x/y": {"~": 1}}, {"x/y": {"~": 2, "": 3}}),
        ("a", None),
    ],
)
def test_diff_replays_with_jsonpatch(old: Any, new: Any) -> None:
    assert replayed(freeze(old), freeze(new)) == new


# -- apply_json: the same applier for ops in their JSON form ---------------------------------------

KEYS = st.sampled_from(["a", "b", "x/y", "~", ""])
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(alphabet="xy", max_size=2),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(old=VALUES, new=VALUES)
def test_json_ops_apply_as_jsonpatch_applies_them(old: Any, new: Any) -> None:
    """jsonpatch's own patches (move, copy and test among them) give what jsonpatch gives."""
    patch = jsonpatch.make_patch(old, new).patch
    patch.append({"op": "test", "path": "", "value": new})
    frozen = freeze(old)
    assert thaw(apply_json(frozen, patch)) == jsonpatch.apply_patch(old, patch) == new
    assert thaw(frozen) == old


def test_json_ops_of_every_kind_apply_in_order() -> None:
    ops = [
        {"op": "add", "path": "/todos/-", "value": {"id": 3}},
        {"op": "move", "from": "/todos/0", "path": "/todos/-"},
        {"op": "copy", "from": "/other/deep", "path": "/copied"},
        {"op": "replace", "path": "/n", "value": 2},
        {"op": "remove", "path": "/other"},
        {"op": "test", "path": "/todos/3/id", "value": 0},
    ]
    assert apply_json(doc(), ops) == {"todos": [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 0}],
                                      "copied": [1, 2], "n": 2}


def test_json_ops_share_what_they_do_not_touch() -> None:
    old = doc()
    new = apply_json(old, [{"op": "replace", "path": "/todos/1/id", "value": 9}])
    assert new["other"] is old["other"] and new["todos"][0] is old["todos"][0]  # type: ignore[index]
    assert isinstance(new, FrozenDict) and isinstance(new["todos"], FrozenList)  # type: ignore[index]


@pytest.mark.parametrize(
    ("op", "message"),
    [
        ({"op": "replace", "path": "/todos/7/id", "value": 1},
         r"cannot replace /todos/7/id: /todos/7 does not exist"),
        ({"op": "add", "path": "/n/x", "value": 1},
         r"cannot add /n/x: /n is not an object or array"),
        ({"op": "remove", "path": "/missing"}, r"cannot remove /missing: there is no such place"),
        ({"op": "move", "from": "/gone", "path": "/n"}, r"cannot move /gone: /gone does not exist"),
        ({"op": "test", "path": "/n", "value": 2},
         r"patch test failed at '/n': the value there is 1"),
        ({"op": "add", "path": "/n"}, r"has no 'value'"),
        ({"op": "copy", "path": "/n"}, r"has no string 'from'"),
        ({"op": "add", "value": 1}, r"has no string 'path'"),
        ({"op": "increment", "path": "/n", "value": 1},
         r"unknown patch operation 'increment': use add, remove, replace, move, copy or test"),
        ({"op": "add", "path": "n", "value": 1}, r"'n' is not a JSON Pointer"),
    ],
)
def test_a_json_op_that_does_not_apply_says_what_and_where(op: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        apply_json(doc(), [op])


# -- rebase's shortcuts give what the op-by-op transform gives -----------------------------------

_KEYS = st.sampled_from(["a", "b", "c"])


@st.composite
def _ops(draw: st.DrawFn) -> list[Op]:
    """Ops as a tool records them on a dict of short lists: inserts, removals, replacements of
    items and of keys inside items, and keys added or removed."""
    ops = []
    for _ in range(draw(st.integers(0, 6))):
        key, index = draw(_KEYS), draw(st.integers(0, 3))
        kind = draw(st.sampled_from(["insert", "remove", "replace", "inner", "key"]))
        if kind == "insert":
            ops.append(Op("add", (key, index), index))
        elif kind == "remove":
            ops.append(Op("remove", (key, index)))
        elif kind == "replace":
            ops.append(Op("replace", (key, index), -index))
        elif kind == "inner":
            ops.append(Op("replace", (key, index, "x"), 1))
        else:
            ops.append(Op("add", (key,), []))
    return ops


@settings(max_examples=400, deadline=None)
@given(mine=_ops(), committed=_ops())
def test_rebase_by_parts_gives_what_the_op_by_op_transform_gives(mine: list[Op],
                                                                  committed: list[Op]) -> None:
    from pyox_agents.state.rebase import _rebase_pairs

    try:
        expected: list[Op] | None = _rebase_pairs(list(mine), list(committed))
    except Conflict:
        expected = None
    try:
        got: list[Op] | None = rebase(mine, committed)
    except Conflict:
        got = None
    assert got == expected


def test_two_changes_that_move_one_list_by_the_thousand_are_a_conflict_not_a_long_wait() -> None:
    mine = [Op("remove", ("todos", i)) for i in range(2_000, 0, -2)]
    committed = [Op("add", ("todos", i), i) for i in range(0, 2_000, 2)]
    with pytest.raises(Conflict) as info:
        rebase(mine, committed)
    assert info.value.path == "/todos"
    assert rebase(mine[:10], committed)  # a few against many: combined op by op
