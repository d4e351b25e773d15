"""The person's rule for an edit made on an older version (`rebase_edit`), checked on what a
user means rather than on ops: todos with ids, a run and a person each doing things to them
from the same version. Whatever the interleaving, no change is lost silently: either the edit
is refused (a place it writes is gone), or every intent of both holds in the result, the
person's where both wrote."""

from __future__ import annotations

from typing import Any

import jsonpatch  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents.state.frozen import freeze, thaw
from pyox_agents.state.patch import apply, parse_patch
from pyox_agents.state.rebase import Conflict, rebase_edit

Intent = tuple[str, int, Any]
"""(what, todo id, value): "tick" (done = value), "rename" (text = value), "delete", "add"."""


def _index(todos: list[dict[str, Any]], ident: int) -> int | None:
    return next((i for i, t in enumerate(todos) if t["id"] == ident), None)


def _ops(state: dict[str, Any], intents: list[Intent]) -> list[dict[str, Any]]:
    """RFC 6902 ops doing `intents` in turn on `state` (skipping those on missing todos)."""
    todos = [dict(t) for t in state["todos"]]
    ops: list[dict[str, Any]] = []
    for what, ident, value in intents:
        at = _index(todos, ident)
        if what == "add":
            if at is None:
                todos.append({"id": ident, "text": "new", "done": False})
                ops.append({"op": "add", "path": "/todos/-", "value": todos[-1]})
            continue
        if at is None:
            continue
        if what == "delete":
            del todos[at]
            ops.append({"op": "remove", "path": f"/todos/{at}"})
        elif what == "tick":
            todos[at]["done"] = value
            ops.append({"op": "replace", "path": f"/todos/{at}/done", "value": value})
        else:
            todos[at]["text"] = value
            ops.append({"op": "replace", "path": f"/todos/{at}/text", "value": value})
    return ops


def _intents(ids: list[int], fresh: int) -> st.SearchStrategy[list[Intent]]:
    one = st.one_of(
        st.tuples(st.just("tick"), st.sampled_from(ids), st.booleans()),
        st.tuples(st.just("rename"), st.sampled_from(ids), st.sampled_from(["x", "y"])),
        st.tuples(st.just("delete"), st.sampled_from(ids), st.none()),
        st.tuples(st.just("add"), st.integers(fresh, fresh + 3), st.none()),
    )
    return st.lists(one, max_size=5)


BASE = {"todos": [{"id": i, "text": f"t{i}", "done": False} for i in range(5)]}
IDS = list(range(5))


@settings(max_examples=400, deadline=None)
@given(_intents(IDS, 100), _intents(IDS, 200))
def test_no_intent_is_lost_and_the_person_wins_where_both_wrote(
    run: list[Intent], person: list[Intent]
) -> None:
    """Rule (DESIGN "Live shared state"): disjoint changes are all kept; where both wrote one
    place the person's write wins; an edit whose place is gone is refused whole."""
    base = freeze(BASE)
    after_run, run_ops = parse_patch(base, _ops(BASE, run))
    _, mine = parse_patch(base, _ops(BASE, person))
    try:
        result = thaw(apply(after_run, rebase_edit(mine, run_ops)))
    except Conflict:
        # refused: one of the person's changes was to a todo the run deleted
        run_deleted = {i for what, i, _ in run if what == "delete"}
        assert {i for what, i, _ in person if what in ("tick", "rename")} & run_deleted
        return
    todos = {t["id"]: t for t in result["todos"]}
    final: dict[int, dict[str, Any] | None] = {t["id"]: dict(t) for t in BASE["todos"]}
    for what, ident, value in [*run, *person]:  # the person's last: theirs wins
        _apply_intent(final, what, ident, value)
    person_touched = {i for _, i, _ in person}
    for ident, todo in final.items():
        if todo is None:
            assert ident not in todos, f"todo {ident} was deleted but is back: {result}"
            continue
        if ident >= 100 and ident not in todos:
            continue  # an add that was a no-op (the same id added twice)
        assert ident in todos, f"todo {ident} is missing: {result}"
        for key in ("done", "text"):
            mine_value = _last(person, ident, key)
            expected = mine_value if mine_value is not None else _last(run, ident, key)
            if expected is not None:
                assert todos[ident][key] == expected, (ident, key, result)
    assert len(todos) == len(result["todos"]), f"a todo is there twice: {result}"
    del person_touched


def _apply_intent(final: dict[int, Any], what: str, ident: int, value: Any) -> None:
    if what == "add":
        final.setdefault(ident, {"id": ident, "text": "new", "done": False})
    elif final.get(ident) is not None:
        if what == "delete":
            final[ident] = None
        elif what == "tick":
            final[ident]["done"] = value
        else:
            final[ident]["text"] = value


def _last(intents: list[Intent], ident: int, key: str) -> Any:
    """The last value `intents` give `key` of todo `ident` (None: not written, or deleted)."""
    value = None
    for what, i, v in intents:
        if i != ident:
            continue
        if what == "delete":
            return None
        if (what, key) in (("tick", "done"), ("rename", "text")):
            value = v
    return value


@settings(max_examples=200, deadline=None)
@given(_intents(IDS, 100))
def test_an_edit_on_the_latest_version_applies_as_made(person: list[Intent]) -> None:
    """Rule: with nothing committed since its base, an edit is applied exactly as sent."""
    base = freeze(BASE)
    patch = _ops(BASE, person)
    _, mine = parse_patch(base, patch)
    assert thaw(apply(base, rebase_edit(mine, []))) == jsonpatch.apply_patch(BASE, patch)


def test_a_tick_on_a_todo_the_run_removed_is_refused_naming_it() -> None:
    """Rule: an edit whose place is gone is refused, naming the place."""
    base = freeze(BASE)
    _, theirs = parse_patch(base, [{"op": "remove", "path": "/todos/2"}])
    _, mine = parse_patch(base, [{"op": "replace", "path": "/todos/2/done", "value": True}])
    with pytest.raises(Conflict) as refused:
        rebase_edit(mine, theirs)
    assert refused.value.path == "/todos/2/done"


def test_deleting_a_todo_the_run_ticked_deletes_it() -> None:
    """Rule: the person's write over a place containing the run's wins (a delete stands)."""
    base = freeze(BASE)
    after, theirs = parse_patch(base, [{"op": "replace", "path": "/todos/1/done",
                                        "value": True}])
    _, mine = parse_patch(base, [{"op": "remove", "path": "/todos/1"}])
    result = thaw(apply(after, rebase_edit(mine, theirs)))
    assert [t["id"] for t in result["todos"]] == [0, 2, 3, 4]


@settings(max_examples=300, deadline=None)
@given(_intents(IDS, 100))
def test_the_inverse_of_an_edit_takes_the_state_back(person: list[Intent]) -> None:
    """Rule: the way back a thread keeps for a version (`inverse` of the ops that made it)
    turns it into the version before, exactly."""
    from pyox_agents.state.patch import inverse

    base = freeze(BASE)
    after, ops = parse_patch(base, _ops(BASE, person))
    assert thaw(apply(after, inverse(base, ops))) == BASE


def test_the_inverse_of_key_writes_takes_the_state_back() -> None:
    """Rule: `inverse` also takes back object keys added, replaced, added over and removed."""
    from pyox_agents.state.patch import inverse

    start = {"a": 1, "b": {"c": [1, 2]}, "d": None}
    base = freeze(start)
    patch = [{"op": "add", "path": "/n", "value": 5}, {"op": "replace", "path": "/a", "value": 2},
             {"op": "add", "path": "/d", "value": {"x": 1}}, {"op": "remove", "path": "/b/c/0"},
             {"op": "remove", "path": "/b"}, {"op": "replace", "path": "", "value": [1]}]
    for size in range(1, len(patch) + 1):
        after, ops = parse_patch(base, patch[:size])
        assert thaw(apply(after, inverse(base, ops))) == start, patch[:size]


def test_rfc_6902_test_compares_numbers_by_value_and_a_move_onto_itself_is_nothing() -> None:
    """Rule (RFC 6902): `test` of 1 against 1.0 holds; a `move` onto its own place changes
    nothing; a `move` into its own child is refused."""
    base = freeze({"n": 1, "l": [{"a": 1}]})
    assert parse_patch(base, [{"op": "test", "path": "/n", "value": 1.0}])[1] == []
    assert parse_patch(base, [{"op": "move", "from": "/n", "path": "/n"}])[1] == []
    with pytest.raises(ValueError, match="into itself"):
        parse_patch(base, [{"op": "move", "from": "/l/0", "path": "/l/0/a"}])
