"""SharedState: versions, commits (fast path and rebase), conflicts, and the log it keeps."""

from __future__ import annotations

import gc
from typing import Any

import jsonpatch
import pytest

from pyox_agents.state.frozen import FrozenDict, freeze, thaw
from pyox_agents.state.rebase import Conflict
from pyox_agents.state.shared import Commit, SharedState


def test_state_must_be_json_naming_the_path() -> None:
    with pytest.raises(TypeError, match=r'state\["tags"\] is a set; shared state must be JSON'):
        SharedState({"tags": {"a"}})


def test_callers_object_is_never_changed() -> None:
    given = {"todos": []}
    state = SharedState(given)
    draft = state.draft()
    draft.root["todos"].append("x")
    state.commit(draft)
    assert given == {"todos": []}
    assert type(state.value) is FrozenDict


def test_versions_start_at_zero_and_count_commits() -> None:
    state = SharedState({"n": 0})
    assert state.version == 0
    for expected in (1, 2):
        draft = state.draft()
        draft.root["n"] += 1
        commit = state.commit(draft)
        assert commit is not None and commit.version == expected == state.version
    assert state.value == {"n": 2}


def test_commit_of_a_draft_without_changes_is_none() -> None:
    state = SharedState({"n": 0})
    draft = state.draft()
    draft.root["n"]
    assert state.commit(draft) is None and state.version == 0


def test_commit_gives_delta_state_and_ops() -> None:
    state = SharedState({"todos": []})
    draft = state.draft("add_todo")
    draft.root["todos"].append("Book the flight")
    commit = state.commit(draft)
    assert isinstance(commit, Commit)
    assert commit.delta == [{"op": "add", "path": "/todos/0", "value": "Book the flight"}]
    assert commit.state == {"todos": ["Book the flight"]} and commit.state is state.value
    assert [op.to_json() for op in commit.ops] == commit.delta


def test_commit_copies_only_the_containers_on_the_written_paths() -> None:
    state = SharedState({"todos": [1], "other": {"a": 1}})
    old: Any = state.value
    draft = state.draft()
    draft.root["todos"].append(2)
    working = draft.value
    commit = state.commit(draft)
    assert commit is not None and commit.state == working
    assert commit.state["other"] is old["other"]  # type: ignore[index,call-overload]


def test_commit_closes_the_draft() -> None:
    state = SharedState({"todos": [], "meta": {}})
    draft = state.draft("t")
    todos = draft.root["todos"]
    meta = draft.root["meta"]
    todos.append(1)
    state.commit(draft)
    with pytest.raises(RuntimeError, match="after tool 't' returned"):
        meta["x"] = 1
    # a changed view became the committed version itself (no copy): it is read-only now
    with pytest.raises(TypeError, match=r"read-only \(a committed version"):
        todos.append(2)
    assert state.value == {"todos": [1], "meta": {}}


def test_parallel_appends_are_both_kept() -> None:
    state = SharedState({"todos": ["a"]})
    first, second = state.draft("first"), state.draft("second")
    first.root["todos"].append("from first")
    second.root["todos"].append("from second")
    state.commit(second)
    commit = state.commit(first)
    assert commit is not None
    assert commit.delta == [{"op": "add", "path": "/todos/2", "value": "from first"}]
    assert state.value == {"todos": ["a", "from second", "from first"]}


def test_parallel_writes_to_different_keys_are_both_kept() -> None:
    state = SharedState({"a": 0, "b": 0})
    first, second = state.draft(), state.draft()
    first.root["a"] = 1
    second.root["b"] = 2
    state.commit(first)
    state.commit(second)
    assert state.value == {"a": 1, "b": 2}


def test_write_to_a_shifted_item_lands_on_that_item() -> None:
    state = SharedState({"todos": [{"done": False}, {"done": False}]})
    first, second = state.draft(), state.draft()
    first.root["todos"].insert(0, {"done": "new"})
    second.root["todos"][1]["done"] = True
    state.commit(first)
    commit = state.commit(second)
    assert commit is not None and commit.delta[0]["path"] == "/todos/2/done"
    assert state.value == {"todos": [{"done": "new"}, {"done": False}, {"done": True}]}


def test_same_path_conflicts_and_changes_nothing() -> None:
    state = SharedState({"n": 0, "m": 0})
    first, second = state.draft(), state.draft()
    first.root["n"] = 1
    second.root["m"] = 5
    second.root["n"] = 2
    state.commit(first)
    before, version = state.value, state.version
    with pytest.raises(Conflict, match="the shared state changed at /n while this tool ran"):
        state.commit(second)
    assert state.value is before and state.version == version


def test_ancestor_write_conflicts() -> None:
    state = SharedState({"todos": [{"done": False}]})
    first, second = state.draft(), state.draft()
    first.root["todos"] = []
    second.root["todos"][0]["done"] = True
    state.commit(first)
    with pytest.raises(Conflict) as info:
        state.commit(second)
    assert info.value.path == "/todos"


def test_deltas_replay_to_the_final_state() -> None:
    original = {"todos": [{"id": 0}, {"id": 1}], "n": 0}
    state = SharedState(original)
    drafts = [state.draft() for _ in range(3)]
    drafts[0].root["todos"].insert(0, {"id": "a"})
    drafts[1].root["todos"][1]["id"] = 10
    drafts[2].root["n"] = 3
    drafts[2].root["todos"].pop(0)
    deltas = [commit.delta for draft in drafts if (commit := state.commit(draft))]
    replayed = original
    for delta in deltas:
        replayed = jsonpatch.apply_patch(replayed, delta)
    assert replayed == state.value == {"todos": [{"id": "a"}, {"id": 10}], "n": 3}


def test_read_only_draft_refuses_writes() -> None:
    state = SharedState({"n": 0})
    draft = state.draft("peek", writable=False)
    with pytest.raises(PermissionError, match="read-only in tool 'peek'"):
        draft.root["n"] = 1
    assert state.commit(draft) is None


def test_draft_of_another_state_is_refused() -> None:
    draft = SharedState({}).draft()
    with pytest.raises(ValueError, match="another SharedState"):
        SharedState({}).commit(draft)


def test_draft_committed_twice_is_refused() -> None:
    state = SharedState({"n": 0})
    draft = state.draft()
    draft.root["n"] = 1
    state.commit(draft)
    with pytest.raises(RuntimeError, match="already committed"):
        state.commit(draft)


def test_draft_closed_then_committed_still_rebases() -> None:
    state = SharedState({"todos": []})
    first, second = state.draft(), state.draft()
    first.root["todos"].append(1)
    second.root["todos"].append(2)
    first.close()
    state.commit(first)
    second.close()
    state.commit(second)
    assert state.value == {"todos": [1, 2]}


def test_log_is_kept_only_as_far_as_open_drafts_need() -> None:
    state = SharedState({"n": 0})
    old = state.draft()
    for _ in range(5):
        draft = state.draft()
        draft.root["n"] += 1
        state.commit(draft)
    assert len(state._log) == 5  # the old draft may still be committed
    old.close()
    draft = state.draft()
    draft.root["n"] += 1
    state.commit(draft)
    assert len(state._log) == 0


def test_forgotten_drafts_do_not_keep_the_log() -> None:
    state = SharedState({"n": 0})
    forgotten = state.draft()
    forgotten.root["n"] = 100
    del forgotten
    gc.collect()
    for _ in range(3):
        draft = state.draft()
        draft.root["n"] += 1
        state.commit(draft)
    assert len(state._log) == 0 and state.value == {"n": 3}


def test_closed_draft_whose_base_is_no_longer_kept_is_refused() -> None:
    state = SharedState({"a": 0, "b": 0})
    stale = state.draft()
    stale.root["a"] = 1
    stale.close()
    draft = state.draft()
    draft.root["b"] = 1
    state.commit(draft)
    with pytest.raises(RuntimeError, match="no longer kept; commit a draft before closing it"):
        state.commit(stale)


def test_committed_state_replays_from_a_frozen_original() -> None:
    state = SharedState({"l": [1]})
    original = state.value
    draft = state.draft()
    draft.root["l"].insert(0, 0)
    commit = state.commit(draft)
    assert commit is not None
    assert jsonpatch.apply_patch(original, commit.delta) == {"l": [0, 1]}
    assert thaw(original) == {"l": [1]} and original is not state.value
    assert freeze(original) is original
