"""History entries as JSON rows: every kind round-trips exactly; bad rows are refused clearly."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from pyox_agents.state.conversation import State, StoppedByPermission, StoppedByUntil
from pyox_agents.state.history import (
    ErrorEntry,
    HistoryEntry,
    RunStartEntry,
    StateChangeEntry,
    StopEntry,
    entry_from_json,
    shared_state_from,
    utc_now,
)
from pyox_agents.state.messages import Image, Message, Reply, ToolCall, Usage


def every_kind() -> State:
    """A State whose history holds every kind of entry."""
    state = State(messages=[Message.system("be brief"), Message.user("a", Image("data:x"))],
                  extra_data={"k": [1, 2.5, None, True]})
    state._start_run(parent_id="p-1", parent_call_id="call_p", run_id="r" * 64)
    state.add_message(Message.user("b"))
    state.add_message(Message.notice("n"))
    call = ToolCall("search", {"q": "x", "n": (1,)}, raw_arguments=None)
    state._begin_think(3, ["search"])
    state._end_think(Reply("", (call,), reasoning="hmm", usage=Usage(1, 2, 1, 0.1)))
    state._add_tool_result(call, "ok", {"hits": ("a",)}, is_error=False, child_ids=("sub",),
                           usage=Usage(3, 4, 1, 0.2), images=[Image("data:y", "image/jpeg")])
    state.clear_tool_results(0)
    state._add_state_change(call.id, [{"op": "add", "path": "/todos/0", "value": "x"}], 1)
    state._stop(StoppedByPermission(call, {"name": "ask_user"}))
    state._begin_think(4, [])
    state._fail_think("timeout")
    state._fail_run("RuntimeError")
    state.compact("summary")
    before = state.snapshot()
    state.add_message(Message.user("c"))
    state.restore(before)
    state.finish({"answer": [1]})
    return state


def roundtrip(entry: HistoryEntry) -> HistoryEntry:
    return entry_from_json(json.loads(json.dumps(entry.to_json())))


def test_every_kind_round_trips_through_json_exactly() -> None:
    state = every_kind()
    kinds = {e.kind for e in state.history}
    assert kinds >= {"import", "extra_data", "run_start", "user_message", "notice",
                     "model_request", "model_reply", "tool_result", "state_change",
                     "context_change", "finish", "stop", "error"}
    for entry in state.history:
        again = roundtrip(entry)
        assert again == entry and again.at == entry.at and again.at.tzinfo == datetime.UTC


def test_a_loaded_state_gives_an_equal_snapshot() -> None:
    state = every_kind()
    loaded = State(history=[roundtrip(e) for e in state.history])
    assert loaded.snapshot() == state.snapshot()
    assert loaded.created_at == state.created_at and loaded.updated_at == state.updated_at


def test_every_entry_is_timezone_aware_utc() -> None:
    for entry in every_kind().history:
        assert entry.at.utcoffset() == datetime.timedelta(0)


def test_an_entry_at_another_offset_is_stored_in_utc() -> None:
    at = datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    entry = RunStartEntry(at=at)
    assert entry.at.tzinfo is datetime.UTC and entry.at == at


def test_a_naive_at_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        RunStartEntry(at=datetime.datetime(2024, 5, 1))


def test_unknown_kind_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown history entry kind 'thought'.*expected one of"):
        entry_from_json({"kind": "thought", "at": utc_now().isoformat(), "content": None})


@pytest.mark.parametrize(
    "row",
    [{"kind": "error", "at": "yesterday", "content": "x", "during": "think"},
     {"kind": "error", "at": "2024-01-01T00:00:00+00:00", "during": "think"},
     {"kind": "tool_result", "at": "2024-01-01T00:00:00+00:00", "content": 1},
     {"kind": "model_reply", "at": "2024-01-01T00:00:00+00:00", "purpose": "think",
      "content": {"text": 3}},
     {"kind": "stop", "at": "2024-01-01T00:00:00+00:00", "content": {"reason": "tired"}}],
)
def test_malformed_entry_is_a_clear_error(row: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=f"malformed {row['kind']} history entry"):
        entry_from_json(row)


def test_a_row_that_is_not_a_dict_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="must be a dict"):
        entry_from_json([])  # type: ignore[arg-type]


def test_shared_state_is_rebuilt_from_state_change_entries() -> None:
    at = utc_now()
    history = [
        StateChangeEntry(at=at, content=[{"op": "add", "path": "/todos/0", "value": "a"}],
                         call_id="c1", version=1),
        ErrorEntry(at=at, content="unrelated"),
        StateChangeEntry(at=at, content=[{"op": "add", "path": "/todos/-", "value": "b"},
                                         {"op": "replace", "path": "/done", "value": True}],
                         call_id="c2", version=2),
        StateChangeEntry(at=at, content=[{"op": "remove", "path": "/todos/0"}],
                         call_id="c3", version=3),
    ]
    initial = {"todos": [], "done": False}
    assert shared_state_from(history, initial) == {"todos": ["b"], "done": True}
    assert initial == {"todos": [], "done": False}


def test_a_state_change_does_not_change_the_snapshot() -> None:
    state = State(messages=[Message.user("a")])
    before = state.snapshot()
    state._add_state_change("c1", [{"op": "add", "path": "/x", "value": 1}], 1)
    after = state.snapshot()
    assert after.history[:-1] == before.history
    assert (after.messages, after.turn, after.extra_data) == (
        before.messages, before.turn, before.extra_data)


def test_stop_entry_keeps_its_reason() -> None:
    entry = StopEntry(at=utc_now(), content=StoppedByUntil("waiting_for_user"))
    assert roundtrip(entry) == entry
