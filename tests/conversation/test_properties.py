"""The properties of a State: each a pure function of its history."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import pydantic
import pytest

from pyox_agents.state.conversation import (
    State,
    StoppedByFinish,
    StoppedByLimit,
    StoppedByPermission,
    StoppedByUntil,
)
from pyox_agents.state.frozen import FrozenDict, FrozenList
from pyox_agents.state.messages import Message, Reply, ToolCall, Usage


def think(state: State, *calls: ToolCall, text: str = "", usage: Usage | None = None) -> None:
    """What the loop records for one think that the model answers."""
    state._begin_think(len(state.messages), [c.name for c in calls])
    state._end_think(Reply(text, calls, usage=usage or Usage()))


def result(state: State, call: ToolCall, value: object = "done", **more: object) -> None:
    state._add_tool_result(call, "ok", value, is_error=False, **more)  # type: ignore[arg-type]


@dataclass
class Review:
    verdict: str
    score: int


class Point(pydantic.BaseModel):
    x: int
    y: int


def test_parent_link_is_the_first_run_start() -> None:
    state = State(messages=[Message.user("sub task")])
    assert state.parent_id is None and state.parent_call_id is None
    state._start_run(parent_id="parent-1", parent_call_id="call_9")
    state._start_run(parent_id="parent-1", parent_call_id="call_9")
    assert (state.parent_id, state.parent_call_id) == ("parent-1", "call_9")
    loaded = State(history=state.history)
    assert (loaded.parent_id, loaded.parent_call_id) == ("parent-1", "call_9")


def test_a_later_run_start_must_carry_the_same_parent_link() -> None:
    state = State()
    state._start_run(parent_id="parent-1", parent_call_id="call_9")
    with pytest.raises(ValueError, match="parent link"):
        state._start_run(parent_id="parent-2", parent_call_id="call_9")


def test_a_run_started_without_a_link_keeps_the_states_parent_link() -> None:
    """A State keeps its parent link: agent.run of a subagent's State repeats it."""
    state = State()
    state._start_run(parent_id="parent-1", parent_call_id="call_9")
    state._start_run()
    assert (state.parent_id, state.parent_call_id) == ("parent-1", "call_9")
    assert [e.parent_id for e in state.history if e.kind == "run_start"] == ["parent-1"] * 2


def test_parent_call_id_is_none_together_with_parent_id() -> None:
    with pytest.raises(ValueError, match="give both or neither"):
        State()._start_run(parent_id="parent-1")


def test_history_entries_are_only_ever_added() -> None:
    state = State(messages=[Message.user("a")])
    before = state.history
    state.compact("summary")
    assert state.history[: len(before)] == before
    assert len(state.history) == len(before) + 1


def test_history_values_are_read_only_json() -> None:
    state = State(messages=[Message.user("a")])
    call = ToolCall("search", {"q": "x", "pages": (1, 2)})
    think(state, call)
    reply = state.history[-1]
    assert reply.kind == "model_reply"
    arguments = reply.content.tool_calls[0].arguments
    assert isinstance(arguments, FrozenDict) and arguments == {"q": "x", "pages": [1, 2]}
    assert json.dumps(arguments) == '{"q": "x", "pages": [1, 2]}'
    with pytest.raises(TypeError, match="read-only"):
        arguments["q"] = "y"  # type: ignore[index]
    editable = dict(arguments)
    editable["q"] = "y"
    assert arguments["q"] == "x"


def test_a_tuple_in_a_recorded_value_becomes_a_list() -> None:
    state = State(messages=[Message.user("a")])
    call = ToolCall("search", {})
    think(state, call)
    result(state, call, (1, (2, 3)))
    entry = state.history[-1]
    assert entry.kind == "tool_result"
    assert entry.content == [1, [2, 3]] and isinstance(entry.content, FrozenList)


def test_a_dataclass_or_pydantic_answer_becomes_a_read_only_dict() -> None:
    state = State()
    state.finish(Review("ok", 3))
    assert state.answer == {"verdict": "ok", "score": 3}
    assert Review(**state.answer) == Review("ok", 3)
    state.finish(Point(x=1, y=2))
    assert state.answer == {"x": 1, "y": 2} and isinstance(state.answer, FrozenDict)


def test_a_value_that_is_not_json_raises_when_recorded() -> None:
    state = State(messages=[Message.user("a")])
    call = ToolCall("search", {})
    think(state, call)
    with pytest.raises(TypeError, match=r"result\[\"when\"\] is a set"):
        result(state, call, {"when": {1}})
    assert state.pending_calls == (call,)


def test_kind_tells_which_entry_it_is() -> None:
    state = State(messages=[Message.user("a")])
    call = ToolCall("search", {})
    think(state, call)
    result(state, call)
    seen = []
    for entry in state.history:
        if entry.kind == "model_reply":
            seen.append(entry.content.tool_calls)
        elif entry.kind == "tool_result":
            seen.append((entry.call.name, entry.outcome))
    assert seen == [(call,), ("search", "ok")]


def test_messages_are_what_the_model_sees_next() -> None:
    state = State(messages=[Message.user("a")])
    think(state, text="hello")
    assert state.messages == (Message.user("a"), Message.assistant("hello"))


def test_results_go_in_together_once_the_last_call_has_a_result() -> None:
    state = State(messages=[Message.user("a")])
    first, second = ToolCall("one", {}), ToolCall("two", {})
    think(state, first, second)
    result(state, second, "2")
    assert [m.role for m in state.messages] == ["user", "assistant"]
    result(state, first, "1")
    assert [(m.role, m.content) for m in state.messages[2:]] == [("tool", "1"), ("tool", "2")]


def test_pending_calls_are_in_request_order_without_results() -> None:
    state = State(messages=[Message.user("a")])
    calls = [ToolCall(name, {}) for name in ("a", "b", "c")]
    think(state, *calls)
    assert state.pending_calls == tuple(calls)
    result(state, calls[1])
    assert state.pending_calls == (calls[0], calls[2])


@pytest.mark.parametrize("outcome", ["denied", "cancelled", "error"])
def test_a_call_leaves_pending_calls_when_denied_cancelled_or_failed(outcome: str) -> None:
    state = State(messages=[Message.user("a")])
    call = ToolCall("rm", {})
    think(state, call)
    state._add_tool_result(call, outcome, f"{outcome}: no", is_error=True)  # type: ignore[arg-type]
    assert state.pending_calls == ()
    assert state.messages[-1].is_error and state.messages[-1].content == f"{outcome}: no"


def test_think_raises_while_calls_are_pending() -> None:
    state = State(messages=[Message.user("a")])
    think(state, ToolCall("search", {}))
    with pytest.raises(ValueError, match=r"tool calls are pending \(search"):
        state._begin_think(2, [])


def test_turn_adds_one_while_think_waits_and_a_failed_think_takes_it_back() -> None:
    state = State(messages=[Message.user("a")])
    state._begin_think(1, [])
    assert state.turn == 1
    state._fail_think("connection reset")
    assert state.turn == 0
    think(state, text="ok")
    assert state.turn == 1


def test_usage_adds_every_think_ask_and_compact() -> None:
    state = State(messages=[Message.user("a")])
    think(state, text="x", usage=Usage(10, 2, 1, 0.5))
    state._begin_request("ask", 2)
    state._end_request("ask", Reply("yes", usage=Usage(1, 1, 1, 0.25)))
    state._begin_request("compact", 2)
    state._end_request("compact", Reply("summary", usage=Usage(3, 3, 1, 0.25)))
    assert state.usage == Usage(14, 6, 3, 1.0)
    assert state.messages == (Message.user("a"), Message.assistant("x"))


def test_subagent_usage_is_added_when_the_call_closes() -> None:
    state = State(messages=[Message.user("a")])
    call = ToolCall("research", {})
    think(state, call, usage=Usage(1, 1, 1, 0.0))
    result(state, call, "found", child_ids=("sub-1",), usage=Usage(100, 10, 4, 2.0))
    assert state.usage == Usage(101, 11, 5, 2.0)


def test_extra_data_is_read_only() -> None:
    state = State(extra_data={"x": 0})
    with pytest.raises(TypeError, match="read-only"):
        state.extra_data["x"] = 1  # type: ignore[index]
    assert isinstance(state.extra_data, FrozenDict)


def test_finished_is_whether_finish_was_called() -> None:
    state = State()
    assert not state.finished
    state.finish()
    assert state.finished


def test_answer_is_the_latest_reply_text_without_tool_calls() -> None:
    state = State(messages=[Message.user("a")])
    assert state.answer is None
    think(state, text="first")
    call = ToolCall("search", {})
    think_text = "looking"
    state.add_message(Message.user("more"))
    think(state, call, text=think_text)
    assert state.answer == "first"
    result(state, call)
    think(state, text="second")
    assert state.answer == "second"


def test_answer_given_to_finish_wins_over_reply_text() -> None:
    state = State(messages=[Message.user("a")])
    think(state, text="text")
    state.finish({"bug": "b.py"})
    assert state.answer == {"bug": "b.py"}


def test_a_failed_think_does_not_change_the_answer() -> None:
    state = State(messages=[Message.user("a")])
    think(state, text="kept")
    state.add_message(Message.user("again"))
    state._begin_think(3, [])
    state._fail_think("timeout")
    assert state.answer == "kept"


def test_stopped_is_none_until_something_decides() -> None:
    assert State().stopped is None


def test_finish_sets_stopped_right_away() -> None:
    state = State()
    state.finish("done")
    assert state.stopped == StoppedByFinish("done")


def test_a_permission_stop_does_not_finish_the_state() -> None:
    state = State(messages=[Message.user("a")])
    call = ToolCall("rm", {"path": "/"})
    think(state, call)
    state._add_tool_result(call, "denied", "denied by ask_user", is_error=True)
    state._stop(StoppedByPermission(call, "ask_user"))
    assert state.stopped == StoppedByPermission(call, "ask_user")
    assert not state.finished
    state.add_message(Message.user("go on"))
    state._start_run()
    assert state.stopped is None


@pytest.mark.parametrize("stopped", [StoppedByUntil("waiting_for_user"), StoppedByLimit(10)])
def test_a_run_start_resets_stopped(stopped: StoppedByUntil | StoppedByLimit) -> None:
    state = State()
    state._stop(stopped)
    assert state.stopped == stopped
    state._start_run()
    assert state.stopped is None


def test_stopped_is_none_after_a_run_that_ended_with_an_exception() -> None:
    state = State()
    state._start_run()
    state._stop(StoppedByLimit(3))
    state._fail_run("RuntimeError: boom")
    assert state.stopped is None


def test_created_at_is_the_first_entry_and_updated_at_the_latest() -> None:
    state = State(messages=[Message.user("a")])
    first = state.history[0].at
    assert first.tzinfo is not None and first.utcoffset().total_seconds() == 0  # type: ignore[union-attr]
    with state.edit_extra_data() as data:
        data["x"] = 1
    assert state.created_at == first
    assert state.updated_at == state.history[-1].at and state.updated_at >= first


def test_snapshot_compares_public_fields_but_not_times() -> None:
    snapshot = State(messages=[Message.user("a")]).snapshot()
    assert dataclasses.replace(snapshot, created_at=None, updated_at=None) == snapshot
    assert dataclasses.replace(snapshot, turn=1) != snapshot
