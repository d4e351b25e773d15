"""Random edit scripts on a draft, checked against plain lists and dicts doing the same.

The model is a plain deep copy of the start state. An alias is a pair (model object, draft
view) taken at some moment; an edit through an alias is done on both. Values put in are copies
(a draft freezes what is put in), so in the model too: each model object is one place. An alias
whose model object is no longer in the model document is detached: the draft must refuse the
write, and reads must give what the model object holds. The start state holds one frozen
container at several places (`days + days`, `l * 2`); scripts also concatenate slices, move
items between lists and replace the root.

At the end: the committed state equals the model, it holds only frozen containers, and the
delta (and the draft's ops) replayed with `jsonpatch` on the start state give it.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonpatch
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyox_agents.state.frozen import FrozenDict, FrozenList, freeze, thaw
from pyox_agents.state.shared import SharedState

KEYS = ["a", "b", "c"]
scalars = st.one_of(st.integers(-3, 3), st.sampled_from(["x", "y", ""]), st.booleans(), st.none())
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def start_states(draw: st.DrawFn) -> Any:
    """A frozen document that holds one frozen container at several places."""
    day = freeze(draw(st.dictionaries(st.sampled_from(KEYS), values, max_size=2)))
    item = freeze({"n": draw(st.integers(0, 3)), "tags": draw(st.lists(scalars, max_size=2))})
    days = [day] * draw(st.integers(1, 3))
    return freeze({
        "days": days + days,
        "l": [item] * draw(st.integers(1, 3)),
        "todos": draw(st.lists(values, max_size=4)),
        "archive": [],
    })


def sort_key(item: Any) -> str:
    return json.dumps(item, sort_keys=True)


class Script:
    """One random edit script, run on the draft and on the model at once."""

    def __init__(self, data: st.DataObject, start: Any) -> None:
        self.data = data
        self.state = SharedState(start)
        self.draft = self.state.draft("fuzz")
        self.model: Any = thaw(start)
        self.aliases: list[tuple[Any, Any]] = [(self.model, self.draft.root)]

    def draw(self, strategy: st.SearchStrategy[Any], label: str) -> Any:
        return self.data.draw(strategy, label=label)

    # -- the model's view of places ----------------------------------------------------------

    def attached(self, obj: Any) -> bool:
        stack = [self.model]
        while stack:
            node = stack.pop()
            if node is obj:
                return True
            if isinstance(node, dict):
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        return False

    def value(self) -> tuple[Any, Any]:
        """A value to put in: a new one, or an alias's current value (a copy in the model)."""
        self.source: Any = None
        if self.draw(st.booleans(), "from an alias"):
            model, view = self.draw(st.sampled_from(self.aliases), "source alias")
            self.source = model
            return copy.deepcopy(model), view
        new = self.draw(values, "value")
        return new, copy.deepcopy(new)

    def kept(self, model_value: Any, current: Any) -> Any:
        """What the model puts at a place that holds `current`: a value stored back at its own
        place stays as it is (`d[k] = d[k]`), anything else is the copy."""
        return current if current is not None and current is self.source else model_value

    # -- steps -------------------------------------------------------------------------------

    def step(self) -> None:
        kind = self.draw(st.sampled_from(["alias", "root alias", "edit", "edit", "edit",
                                          "replace root", "check"]), "step")
        if kind == "alias":
            self.take_alias()
        elif kind == "root alias":
            self.aliases.append((self.model, self.draft.root))
        elif kind == "edit":
            self.edit()
        elif kind == "replace root":
            self.replace_root()
        self.check()

    def take_alias(self) -> None:
        model, view = self.draw(st.sampled_from(self.aliases), "parent alias")
        if isinstance(model, dict) and model:
            key = self.draw(st.sampled_from(sorted(model)), "key")
        elif isinstance(model, list) and model:
            key = self.draw(st.integers(0, len(model) - 1), "index")
        else:
            return
        child_model, child_view = model[key], view[key]
        assert child_view == child_model
        if isinstance(child_model, dict | list):
            self.aliases.append((child_model, child_view))

    def replace_root(self) -> None:
        if isinstance(self.model, dict) and self.draw(st.booleans(), "keep parts"):
            key = self.draw(st.sampled_from(KEYS), "new key")
            model_value, draft_value = self.value()
            model = {**self.model, key: self.kept(model_value, self.model.get(key))}
            self.draft.root = {**self.draft.root, key: draft_value}
            for kept in model:  # the old root, detached, keeps what it held
                if kept in self.model and model[kept] is self.model[kept]:
                    self.model[kept] = copy.deepcopy(self.model[kept])
        elif isinstance(self.model, list) and self.draw(st.booleans(), "keep items"):
            model_value, draft_value = self.value()
            model = [*self.model, model_value]
            self.draft.root = [*self.draft.root, draft_value]
            self.model[:] = [copy.deepcopy(item) for item in self.model]  # the old root
        else:
            model_value, draft_value = self.value()
            if draft_value is self.draft.root:
                return  # `ctx.state = ctx.state` changes nothing
            model = model_value
            self.draft.root = draft_value
        self.model = model
        if isinstance(model, dict | list):
            self.aliases.append((self.model, self.draft.root))

    def edit(self) -> None:
        model, view = self.draw(st.sampled_from(self.aliases), "alias")
        if not isinstance(model, dict | list):
            return
        edit = self.list_edit if isinstance(model, list) else self.dict_edit
        if self.attached(model):
            edit(model, view)
            return
        refused: list[str] = []
        try:  # the draft refuses any write; check() then sees that nothing changed
            edit(copy.deepcopy(model), view)
        except RuntimeError as exc:
            refused.append(str(exc))
        assert all("read it again" in message for message in refused)

    def list_edit(self, model: list[Any], view: Any) -> None:
        size = len(model)
        name = self.draw(st.sampled_from([
            "append", "insert", "set", "delete", "pop", "move", "extend", "slices", "del slice",
            "sort", "reverse", "clear", "+=", "*=", "read slice",
        ]), "list edit")
        at = self.draw(st.integers(0, max(size - 1, 0)), "at")
        if name == "append":
            model_value, draft_value = self.value()
            view.append(draft_value)
            model.append(model_value)
        elif name == "insert":
            model_value, draft_value = self.value()
            view.insert(at, draft_value)
            model.insert(at, model_value)
        elif name in {"set", "delete", "pop"} and size:
            if name == "set":
                model_value, draft_value = self.value()
                view[at] = draft_value
                model[at] = self.kept(model_value, model[at])
            elif name == "delete":
                del view[at]
                del model[at]
            else:
                assert view.pop(at) == model.pop(at)
        elif name == "move" and size:
            target_model, target_view = self.draw(st.sampled_from(self.aliases), "target")
            if isinstance(target_model, list) and self.attached(target_model):
                moved = view.pop(at)
                popped = model.pop(at)
                assert moved == popped
                if self.attached(target_model):
                    target_view.append(moved)
                    target_model.append(copy.deepcopy(popped))
                else:  # the target was inside the moved item
                    with pytest.raises(RuntimeError, match="read it again"):
                        target_view.append(moved)
        elif name == "extend":
            model_value, draft_value = self.value()
            items = [model_value, copy.deepcopy(model_value)]
            view.extend([draft_value, draft_value])
            model.extend(items)
        elif name == "slices":
            stop = self.draw(st.integers(0, size), "stop")
            part = view[at:stop] + view[0:stop]
            view[:] = part
            model[:] = [copy.deepcopy(item) for item in model[at:stop] + model[0:stop]]
        elif name == "del slice":
            stop = self.draw(st.integers(0, size), "stop")
            del view[at:stop]
            del model[at:stop]
        elif name == "sort":
            view.sort(key=sort_key)
            model.sort(key=sort_key)
        elif name == "reverse":
            view.reverse()
            model.reverse()
        elif name == "clear":
            view.clear()
            model.clear()
        elif name == "+=":
            model_value, draft_value = self.value()
            view += [draft_value]
            model += [model_value]
        elif name == "*=":
            times = self.draw(st.integers(0, 2), "times")
            original = list(model)
            view *= times
            if times == 0:
                model.clear()
            for _ in range(times - 1):
                model.extend(copy.deepcopy(item) for item in original)
        elif name == "read slice":
            assert view[at:] == model[at:]

    def dict_edit(self, model: dict[str, Any], view: Any) -> None:
        key = self.draw(st.sampled_from(KEYS), "key")
        name = self.draw(st.sampled_from(["set", "delete", "pop", "popitem", "update",
                                          "setdefault", "clear"]), "dict edit")
        if name in {"set", "update", "setdefault"}:
            model_value, draft_value = self.value()
            if name == "set":
                view[key] = draft_value
                model[key] = self.kept(model_value, model.get(key))
            elif name == "update":
                view.update({key: draft_value})
                model.update({key: self.kept(model_value, model.get(key))})
            else:
                assert view.setdefault(key, draft_value) == model.setdefault(key, model_value)
        elif name in {"delete", "pop"} and key in model:
            if name == "delete":
                del view[key]
                del model[key]
            else:
                assert view.pop(key) == model.pop(key)
        elif name == "popitem" and model:
            assert view.popitem() == model.popitem()
        elif name == "clear":
            view.clear()
            model.clear()

    def check(self) -> None:
        assert self.draft.value == self.model
        for model, view in self.aliases:
            assert view == model

    def finish(self, start: Any) -> None:
        self.check()
        patch = [op.to_json() for op in self.draft.ops]
        assert jsonpatch.apply_patch(thaw(start), patch) == self.model
        commit = self.state.commit(self.draft)
        committed = self.state.value
        assert committed == self.model
        assert only_frozen(committed)
        if commit is not None:
            assert jsonpatch.apply_patch(thaw(start), commit.delta) == self.model
        else:
            assert self.model == start


def only_frozen(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is FrozenDict and all(only_frozen(item) for item in value.values())
    if isinstance(value, list):
        return type(value) is FrozenList and all(only_frozen(item) for item in value)
    return True


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=start_states(), data=st.data(), steps=st.integers(1, 30))
def test_edits_through_aliases_give_what_plain_lists_and_dicts_give(
    start: Any, data: st.DataObject, steps: int
) -> None:
    """Writes through an alias land where the alias was taken; the committed state and its
    delta agree with plain Python doing the same edits."""
    script = Script(data, start)
    for _ in range(steps):
        script.step()
    script.finish(start)
