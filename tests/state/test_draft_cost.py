"""A loop of edits with reads in between copies each container once per draft (stays linear)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from pyox_agents.state.draft import DraftList
from pyox_agents.state.frozen import FrozenList, freeze
from pyox_agents.state.shared import SharedState

SIZE = 2_000


@contextmanager
def big_list_copies() -> Iterator[list[int]]:
    """Count the copies of a list of at least SIZE // 2 items (frozen or as a draft view)."""
    copies: list[int] = []
    original_new = FrozenList.__dict__["__new__"]
    original_make = DraftList.__dict__["_make"]

    def counting_new(cls: type[FrozenList], *args: Any) -> FrozenList:
        made: FrozenList = original_new(cls, *args)
        if len(made) >= SIZE // 2:
            copies.append(len(made))
        return made

    def counting_make(cls: type[DraftList], *args: Any) -> DraftList:
        made: DraftList = original_make.__func__(cls, *args)
        if list.__len__(made) >= SIZE // 2:
            copies.append(list.__len__(made))
        return made

    FrozenList.__new__ = staticmethod(counting_new)  # type: ignore[assignment]
    DraftList._make = classmethod(counting_make)  # type: ignore[assignment, method-assign]
    try:
        yield copies
    finally:
        FrozenList.__new__ = original_new  # type: ignore[method-assign]
        DraftList._make = original_make  # type: ignore[method-assign]


def slice_read_between_edits(state: Any) -> None:
    todos = state["todos"]
    for at in range(1, len(todos)):
        assert todos[at - 1 : at] == [{"id": at - 1, "done": at > 1}]
        todos[at]["done"] = True


def move_each_edited_item(state: Any) -> None:
    todos, archive = state["todos"], state["archive"]
    while todos:
        todos[-1]["done"] = True
        archive.append(todos.pop())


def read_value_between_edits(state: Any) -> None:
    todos = state["todos"]
    for at in range(0, len(todos), 50):
        todos[at]["done"] = True
        assert todos[at] == {"id": at, "done": True}


@pytest.mark.parametrize(
    "loop", [slice_read_between_edits, move_each_edited_item, read_value_between_edits]
)
def test_reads_and_moves_between_edits_copy_the_list_once(loop: Callable[[Any], None]) -> None:
    state = SharedState(freeze({
        "todos": [{"id": i, "done": False} for i in range(SIZE)], "archive": [],
    }))
    draft = state.draft("loop")
    with big_list_copies() as copies:
        loop(draft.root)
        commit = state.commit(draft)
    assert commit is not None
    assert len(copies) <= 2, f"the list was copied {len(copies)} times"


def test_reading_the_value_copies_only_what_changed() -> None:
    state = SharedState(freeze({
        "todos": [{"id": i, "done": False} for i in range(SIZE)], "meta": {"n": 0},
    }))
    draft = state.draft("meta")
    draft.root["meta"]["n"] = 1
    with big_list_copies() as copies:
        value: Any = draft.value
    assert copies == [] and value["meta"] == {"n": 1}
    assert value["todos"] is state.value["todos"]  # type: ignore[index,call-overload]
