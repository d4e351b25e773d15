"""Property tests: deltas replay with jsonpatch to the committed state, and match plain Python.

A random edit script runs twice side by side: through a draft's views, and on an ordinary deep
copy with plain dicts and lists. Values put in are deep-copied on the plain side, since a draft
freezes a value as it is when put in. Then the committed state, the plain result and the delta
replayed with jsonpatch must all be equal (strictly: `1`, `1.0` and `True` differ).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import jsonpatch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyox_agents.state.draft import Draft
from pyox_agents.state.frozen import FrozenDict, FrozenList, freeze, thaw
from pyox_agents.state.patch import apply, diff
from pyox_agents.state.rebase import Conflict
from pyox_agents.state.shared import SharedState

Path = tuple[Any, ...]

KEYS = st.text(alphabet="ab/~0", max_size=3)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False, width=16)
    | st.text(alphabet="xy", max_size=2)
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=10,
)
DOCUMENTS = st.dictionaries(KEYS, VALUES, max_size=4) | VALUES

SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def canon(value: Any) -> str:
    return json.dumps(thaw(value), sort_keys=True)


def same(a: Any, b: Any) -> bool:
    """Equal as JSON documents, telling 1, 1.0 and True apart."""
    return canon(a) == canon(b)


def replay(original: Any, *deltas: list[dict[str, Any]]) -> Any:
    document = copy.deepcopy(original)
    for delta in deltas:
        document = jsonpatch.apply_patch(document, delta)
    return document


def all_frozen(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is FrozenDict and all(all_frozen(item) for item in value.values())
    if isinstance(value, list):
        return type(value) is FrozenList and all(all_frozen(item) for item in value)
    return True


def nodes(value: Any, path: Path = ()) -> Iterator[Path]:
    """The paths of every value in a plain document, containers first."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from nodes(item, (*path, index))


def at(value: Any, path: Path) -> Any:
    for token in path:
        value = value[token]
    return value


def reachable(document: Any, target: Any) -> bool:
    if document is target:
        return True
    if isinstance(document, dict):
        return any(reachable(item, target) for item in document.values())
    if isinstance(document, list):
        return any(reachable(item, target) for item in document)
    return False


# -- the side-by-side edit interpreter ------------------------------------------------------------


@dataclass
class Side:
    """One document seen two ways: through a draft, and as plain Python values."""

    view: Callable[[], Any]
    plain: Callable[[], Any]
    replace: Callable[[Any, Any], None]  # (draft value, plain value)
    whole_plain: Callable[[], Any]  # the whole plain document (for held views)
    draft: Draft
    held: list[tuple[Any, Any]] = field(default_factory=list)


def whole(draft: Draft, box: list[Any]) -> Side:
    def replace(draft_value: Any, plain_value: Any) -> None:
        draft.replace(draft_value)
        box[0] = plain_value

    return Side(lambda: draft.root, lambda: box[0], replace, lambda: box[0], draft)


def under(draft: Draft, box: list[Any], key: str) -> Side:
    def replace(draft_value: Any, plain_value: Any) -> None:
        draft.root[key] = draft_value
        box[0][key] = plain_value

    return Side(lambda: draft.root[key], lambda: box[0][key], replace, lambda: box[0], draft)


def draw_value(data: st.DataObject, side: Side) -> tuple[Any, Any]:
    """A value to put in: new, or one already in the document (a view vs a deep copy)."""
    if data.draw(st.integers(0, 3)) == 0:
        path = data.draw(st.sampled_from(list(nodes(side.plain()))))
        return at(side.view(), path), copy.deepcopy(at(side.plain(), path))
    value = data.draw(VALUES)
    return value, copy.deepcopy(value)


def draw_values(data: st.DataObject, side: Side, count: int) -> tuple[list[Any], list[Any]]:
    pairs = [draw_value(data, side) for _ in range(count)]
    return [mine for mine, _ in pairs], [plain for _, plain in pairs]


def edit(data: st.DataObject, side: Side) -> None:
    """One random edit, made through the draft and on the plain copy."""
    containers = [p for p in nodes(side.plain()) if isinstance(at(side.plain(), p), dict | list)]
    choice = data.draw(st.integers(0, 11))
    if not containers or choice == 0:
        edit_whole(data, side)
        return
    if side.held and choice in (1, 2):
        edit_held(data, side)
        return
    path = data.draw(st.sampled_from(containers))
    view, plain = at(side.view(), path), at(side.plain(), path)
    if path and len(side.held) < 4 and data.draw(st.booleans()):
        side.held.append((view, plain))
    if isinstance(plain, dict):
        edit_dict(data, side, view, plain)
    else:
        edit_list(data, side, view, plain)


def edit_whole(data: st.DataObject, side: Side) -> None:
    plain = side.plain()
    if isinstance(plain, dict) and data.draw(st.booleans()):
        key = data.draw(KEYS)
        mine, theirs = draw_value(data, side)
        side.replace({**side.view(), key: mine}, {**plain, key: theirs})
    else:
        value = data.draw(VALUES)
        side.replace(value, copy.deepcopy(value))


def edit_held(data: st.DataObject, side: Side) -> None:
    """Write through a view taken earlier: it writes where plain Python would, or refuses.

    It may refuse although plain Python could still reach the value: when a container above it
    was replaced by a new one holding the same items. It never writes to a value plain Python
    no longer reaches.
    """
    # The plain side stands for a value moved within the document by a deep copy, which Python
    # does not do when it is put back at its own place (`d[k] = d[k]` keeps the object, and so
    # does the draft); a held view whose plain object that copy cut off proves nothing.
    side.held = [pair for pair in side.held if reachable(side.whole_plain(), pair[1])]
    if not side.held:
        return
    view, plain = data.draw(st.sampled_from(side.held))
    value = data.draw(SCALARS)
    count = len(side.draft.ops)
    try:
        if isinstance(plain, dict):
            view["held"] = value
        else:
            view.append(value)
    except RuntimeError as gone:
        message = str(gone)
        assert "was removed from ctx.state" in message and len(side.draft.ops) == count
        side.held = [pair for pair in side.held if pair[0] is not view]
        return
    assert reachable(side.whole_plain(), plain)
    if isinstance(plain, dict):
        plain["held"] = value
    else:
        plain.append(value)


def edit_dict(data: st.DataObject, side: Side, view: Any, plain: dict[str, Any]) -> None:
    existing = st.sampled_from(sorted(plain)) if plain else KEYS
    key = data.draw(existing | KEYS)
    action = data.draw(st.sampled_from(["set", "del", "pop", "popitem", "setdefault", "update",
                                        "clear", "read"]))
    if action == "set":
        mine, theirs = draw_value(data, side)
        view[key] = mine
        plain[key] = theirs
    elif action == "del" and key in plain:
        del view[key]
        del plain[key]
    elif action == "pop":
        assert same(view.pop(key, "gone"), plain.pop(key, "gone"))
    elif action == "popitem" and plain:
        mine_item, plain_item = view.popitem(), plain.popitem()
        assert mine_item[0] == plain_item[0] and same(mine_item[1], plain_item[1])
    elif action == "setdefault":
        mine, theirs = draw_value(data, side)
        assert same(view.setdefault(key, mine), plain.setdefault(key, theirs))
    elif action == "update":
        keys = data.draw(st.lists(KEYS, max_size=3))
        mine_values, plain_values = draw_values(data, side, len(keys))
        view.update(dict(zip(keys, mine_values, strict=True)))
        plain.update(dict(zip(keys, plain_values, strict=True)))
    elif action == "clear":
        view.clear()
        plain.clear()
    else:
        assert (key in view) == (key in plain) and len(view) == len(plain)
        assert list(view) == list(plain) and same(view.get(key), plain.get(key))


LIST_ACTIONS = [
    "append", "extend", "insert", "pop", "remove", "sort", "reverse", "clear", "set", "del",
    "slice set", "slice del", "+=", "*=", "extend self", "read",
]


def edit_list(data: st.DataObject, side: Side, view: Any, plain: list[Any]) -> None:
    size = len(plain)
    action = data.draw(st.sampled_from(LIST_ACTIONS))
    if action == "append":
        mine, theirs = draw_value(data, side)
        view.append(mine)
        plain.append(theirs)
    elif action in ("extend", "+="):
        mine_values, plain_values = draw_values(data, side, data.draw(st.integers(0, 3)))
        if action == "extend":
            view.extend(mine_values)
        else:
            view += mine_values
        plain.extend(plain_values)
    elif action == "insert":
        index = data.draw(st.integers(-size - 2, size + 2))
        mine, theirs = draw_value(data, side)
        view.insert(index, mine)
        plain.insert(index, theirs)
    elif action == "pop" and size:
        index = data.draw(st.integers(-size, size - 1))
        assert same(view.pop(index), plain.pop(index))
    elif action == "remove" and size:
        value = copy.deepcopy(plain[data.draw(st.integers(0, size - 1))])
        view.remove(value)
        plain.remove(value)
    elif action == "sort":
        reverse = data.draw(st.booleans())
        view.sort(key=canon, reverse=reverse)
        plain.sort(key=canon, reverse=reverse)
    elif action == "reverse":
        view.reverse()
        plain.reverse()
    elif action == "clear":
        view.clear()
        plain.clear()
    elif action == "set" and size:
        index = data.draw(st.integers(-size, size - 1))
        mine, theirs = draw_value(data, side)
        view[index] = mine
        plain[index] = theirs
    elif action == "del" and size:
        index = data.draw(st.integers(-size, size - 1))
        del view[index]
        del plain[index]
    elif action in ("slice set", "slice del"):
        bounds = st.none() | st.integers(-size - 1, size + 1)
        step = data.draw(st.sampled_from([None, 1, 2, -1, -2]))
        part = slice(data.draw(bounds), data.draw(bounds), step)
        if action == "slice del":
            del view[part]
            del plain[part]
            return
        if step in (None, 1):
            count = data.draw(st.integers(0, 3))
        else:
            count = len(range(*part.indices(size)))
        mine_values, plain_values = draw_values(data, side, count)
        view[part] = mine_values
        plain[part] = plain_values
    elif action == "*=":
        times = data.draw(st.integers(0, 2))
        items = list(plain)
        view *= times
        if times == 0:
            plain.clear()
        else:
            plain.extend(copy.deepcopy(items) * (times - 1))
    elif action == "extend self":
        view.extend(view)
        plain.extend(copy.deepcopy(plain))
    elif action == "read" and size:
        value = plain[data.draw(st.integers(0, size - 1))]
        assert view.index(value) == plain.index(value) and view.count(value) == plain.count(value)
        assert value in view and same(view[1:], plain[1:])


def run_edits(data: st.DataObject, side: Side, most: int = 8) -> None:
    for _ in range(data.draw(st.integers(1, most))):
        edit(data, side)
        assert same(side.view(), side.plain())


# -- (1) one draft: delta replays, and equals plain Python ----------------------------------------


@SETTINGS
@given(document=DOCUMENTS, data=st.data())
def test_edits_through_a_draft_match_plain_python_and_replay(document: Any, data: Any) -> None:
    state = SharedState(document)
    base = state.value
    draft = state.draft("edit")
    box = [copy.deepcopy(document)]
    run_edits(data, whole(draft, box))
    commit = state.commit(draft)
    if commit is None:
        assert same(box[0], document)
        return
    assert same(commit.state, box[0]) and all_frozen(commit.state)
    assert same(replay(document, commit.delta), box[0])
    assert same(base, document)  # the version the draft started from never changed


@SETTINGS
@given(document=DOCUMENTS, data=st.data())
def test_apply_of_recorded_ops_gives_the_draft_value(document: Any, data: Any) -> None:
    base = freeze(document)
    draft = Draft(base)
    run_edits(data, whole(draft, [copy.deepcopy(document)]))
    assert same(apply(base, draft.ops), draft.value)


# -- (2) several drafts of one version, committed in some order -----------------------------------


@SETTINGS
@given(document=DOCUMENTS, data=st.data())
def test_parallel_drafts_commit_or_conflict_and_deltas_replay(document: Any, data: Any) -> None:
    state = SharedState(document)
    drafts = [state.draft(f"tool {n}") for n in range(data.draw(st.integers(2, 3)))]
    for draft in drafts:
        run_edits(data, whole(draft, [copy.deepcopy(document)]), most=4)
    order = data.draw(st.permutations(drafts))
    deltas = []
    for draft in order:
        try:
            commit = state.commit(draft)
        except Conflict:
            continue
        if commit is not None:
            deltas.append(commit.delta)
            assert same(replay(document, *deltas), commit.state)
    assert same(replay(document, *deltas), state.value)


@SETTINGS
@given(parts=st.lists(VALUES, min_size=2, max_size=3), data=st.data())
def test_drafts_writing_disjoint_keys_are_all_kept(parts: list[Any], data: Any) -> None:
    document = {f"k{n}": part for n, part in enumerate(parts)}
    state = SharedState(document)
    expected = copy.deepcopy(document)
    drafts = []
    for key in document:
        draft = state.draft(key)
        box = [copy.deepcopy(document)]
        run_edits(data, under(draft, box, key), most=4)
        expected[key] = box[0][key]
        drafts.append(draft)
    deltas = []
    for draft in data.draw(st.permutations(drafts)):
        commit = state.commit(draft)
        if commit is not None:
            deltas.append(commit.delta)
    assert same(state.value, expected)
    assert same(replay(document, *deltas), expected)


@SETTINGS
@given(todos=st.lists(VALUES, max_size=4), data=st.data())
def test_parallel_appends_are_all_kept_in_commit_order(todos: list[Any], data: Any) -> None:
    state = SharedState({"todos": todos})
    appended = {}
    for n in range(data.draw(st.integers(2, 3))):
        draft = state.draft(f"tool {n}")
        values = data.draw(st.lists(VALUES, min_size=1, max_size=3))
        for value in values:
            if data.draw(st.booleans()):
                draft.root["todos"].append(value)
            else:
                draft.root["todos"].extend([value])
        appended[draft] = values
    expected = list(todos)
    for draft in data.draw(st.permutations(list(appended))):
        state.commit(draft)
        expected.extend(appended[draft])
    assert same(state.value, {"todos": expected})


@SETTINGS
@given(size=st.integers(0, 6), data=st.data())
def test_edits_follow_their_items_past_inserts_and_removals(size: int, data: Any) -> None:
    """Items have unique ids: whatever the order of commits, each change lands on its item."""
    document = {"todos": [{"id": n, "v": 0} for n in range(size)]}
    state = SharedState(document)
    drafts: list[Draft] = []
    removed: list[set[int]] = []
    edited: list[dict[int, str]] = []
    added: list[set[int]] = []
    next_id = 100
    for n in range(2):
        draft = state.draft(f"tool {n}")
        gone: set[int] = set()
        marks: dict[int, str] = {}
        new: list[int] = []
        for _ in range(data.draw(st.integers(1, 5))):
            todos = draft.root["todos"]
            action = data.draw(st.sampled_from(["insert", "append", "remove", "edit"]))
            if action in ("insert", "append"):
                item = {"id": next_id, "v": 0}
                next_id += 1
                new.append(item["id"])
                if action == "append":
                    todos.append(item)
                else:
                    todos.insert(data.draw(st.integers(0, len(todos))), item)
            elif len(todos):
                index = data.draw(st.integers(0, len(todos) - 1))
                item_id = todos[index]["id"]
                if action == "remove":
                    del todos[index]
                    gone.add(item_id)
                elif n == 1:  # only the second draft edits, so edits never meet edits
                    todos[index]["v"] = f"mark {item_id}"
                    marks[item_id] = f"mark {item_id}"
        drafts.append(draft)
        removed.append(gone - set(new))  # items of the document as it was
        edited.append(marks)
        added.append(set(new) - gone)
    committed = []
    for index in data.draw(st.permutations([0, 1])):
        try:
            state.commit(drafts[index])
            committed.append(index)
        except Conflict:
            other = 1 - index
            touched = removed[index] | set(edited[index])
            assert removed[other] & touched or removed[index] & set(edited[other])
    clash = removed[0] & (removed[1] | set(edited[1])) or removed[1] & set(edited[0])
    assert len(committed) == (1 if clash else 2)
    final = state.value["todos"]  # type: ignore[index,call-overload]
    ids = [todo["id"] for todo in final]
    expected_ids = set(range(size))
    for index in committed:
        expected_ids = (expected_ids - removed[index]) | set(added[index])
    assert set(ids) == expected_ids and len(ids) == len(expected_ids)
    originals = [item_id for item_id in ids if item_id < 100]
    assert originals == sorted(originals)
    for todo in final:
        marks = edited[1] if 1 in committed else {}
        assert todo["v"] == marks.get(todo["id"], 0)


# -- (3) diff ------------------------------------------------------------------------------------


@SETTINGS
@given(old=DOCUMENTS, new=DOCUMENTS)
def test_diff_replays_to_the_new_document(old: Any, new: Any) -> None:
    frozen_old = freeze(old)
    ops = diff(frozen_old, freeze(new))
    assert same(replay(old, [op.to_json() for op in ops]), new)
    assert same(apply(frozen_old, ops), new) and same(frozen_old, old)


@SETTINGS
@given(old=DOCUMENTS, data=st.data())
def test_diff_of_a_small_edit_replays_and_stays_small(old: Any, data: Any) -> None:
    frozen_old = freeze(old)
    draft = Draft(frozen_old)
    box = [copy.deepcopy(old)]
    run_edits(data, whole(draft, box), most=3)
    edited = draft.value  # shares what the edits left alone
    for new in (edited, freeze(thaw(edited))):
        assert same(replay(old, [op.to_json() for op in diff(frozen_old, new)]), box[0])
