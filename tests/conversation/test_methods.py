"""add_message, finish, compact, clear_tool_results and edit_extra_data."""

from __future__ import annotations

import pathlib
import threading
from datetime import UTC, datetime
from enum import Enum
from typing import Any

import pytest

from pyox_agents.state.conversation import State, StoppedByFinish
from pyox_agents.state.messages import Image, Message, Reply, ToolCall, Usage


def think(state: State, *calls: ToolCall, text: str = "") -> None:
    state._begin_think(len(state.messages), [c.name for c in calls])
    state._end_think(Reply(text, calls, usage=Usage(1, 1, 1, 0.0)))


def result(state: State, call: ToolCall, value: Any = "done", **more: Any) -> None:
    state._add_tool_result(call, "ok", value, is_error=False, **more)


def roles(state: State) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in state.messages]


# --- add_message -------------------------------------------------------------------------------


def test_add_message_appends_a_user_message() -> None:
    state = State()
    state.add_message(Message.user("Now fix it"))
    assert state.messages == (Message.user("Now fix it"),)
    assert state.history[-1].kind == "user_message"


def test_add_message_records_a_notice_as_a_notice() -> None:
    state = State()
    state.add_message(Message.notice("The tests failed"))
    assert state.history[-1].kind == "notice"
    assert state.messages[-1].content == "[notice] The tests failed"


def test_add_message_is_held_while_calls_are_pending() -> None:
    state = State(messages=[Message.user("a")])
    call = ToolCall("search", {})
    think(state, call)
    state.add_message(Message.user("also check b.py"))
    assert roles(state)[-1] == ("assistant", "")
    result(state, call, "found")
    assert roles(state)[-2:] == [("tool", "found"), ("user", "also check b.py")]


def test_add_message_is_held_while_think_waits_on_the_model() -> None:
    state = State(messages=[Message.user("a")])
    state._begin_think(1, [])
    state.add_message(Message.user("stop"))
    assert roles(state) == [("user", "a")]
    state._end_think(Reply("answer"))
    assert roles(state) == [("user", "a"), ("assistant", "answer"), ("user", "stop")]


def test_held_message_waits_for_the_results_when_the_reply_has_calls() -> None:
    state = State(messages=[Message.user("a")])
    call = ToolCall("search", {})
    state._begin_think(1, ["search"])
    state.add_message(Message.user("held"))
    state._end_think(Reply("", (call,)))
    assert roles(state)[-1] == ("assistant", "")
    result(state, call, "r")
    assert roles(state)[-2:] == [("tool", "r"), ("user", "held")]


def test_held_message_goes_in_after_a_failed_think() -> None:
    state = State(messages=[Message.user("a")])
    state._begin_think(1, [])
    state.add_message(Message.user("held"))
    state._fail_think("timeout")
    assert roles(state) == [("user", "a"), ("user", "held")]


def test_add_message_refuses_what_is_not_a_message() -> None:
    with pytest.raises(TypeError, match="add_message\\(\\) takes a Message, got str"):
        State().add_message("hi")  # type: ignore[arg-type]


@pytest.mark.parametrize("message", [Message.assistant("x"), Message.system("x"),
                                     Message.tool(ToolCall("t", {}), "x")])
def test_add_message_refuses_a_message_that_is_not_from_the_user(message: Message) -> None:
    with pytest.raises(ValueError, match="takes a user message or a notice"):
        State().add_message(message)


def test_add_message_refuses_blocks_other_than_text_and_images() -> None:
    message = Message(role="user", content="x", tool_calls=(ToolCall("t", {}),))
    with pytest.raises(ValueError, match="text and images only"):
        State().add_message(message)


def test_add_message_refuses_a_message_with_no_text_and_no_image() -> None:
    with pytest.raises(ValueError, match="no text and no image"):
        State().add_message(Message.user(""))
    state = State()
    state.add_message(Message.user("", Image("https://example.com/a.png")))
    assert state.messages[0].images == (Image("https://example.com/a.png"),)


# --- finish ------------------------------------------------------------------------------------


def test_finish_may_be_called_by_a_tool_while_other_calls_are_pending() -> None:
    state = State(messages=[Message.user("a")])
    submit, other = ToolCall("submit", {}), ToolCall("search", {})
    think(state, submit, other)
    state.finish("b.py")
    result(state, submit, "submitted")
    result(state, other, "late")
    assert state.finished and state.answer == "b.py"
    assert state.stopped == StoppedByFinish("b.py")


def test_finish_again_the_last_answer_wins() -> None:
    state = State()
    state.finish("first")
    state.finish("second")
    assert state.answer == "second" and state.stopped == StoppedByFinish("second")


def test_finish_with_none_keeps_an_earlier_answer() -> None:
    state = State()
    state.finish("kept")
    state.finish()
    assert state.answer == "kept"


def test_finish_without_an_answer_keeps_the_reply_text() -> None:
    state = State(messages=[Message.user("a")])
    think(state, text="the bug is in b.py")
    state.finish()
    assert state.answer == "the bug is in b.py"


class Color(Enum):
    RED = 1


@pytest.mark.parametrize(
    ("answer", "match"),
    [({1, 2}, "is a set"), (pathlib.Path("a.py"), "is a path"),
     (datetime(2024, 1, 1, tzinfo=UTC), "is a datetime"), (Color.RED, "enum member"),
     (b"x", "is bytes"), ({"score": float("nan")}, r'answer\["score"\] is nan')],
)
def test_finish_answer_that_is_not_json_is_a_type_error(answer: object, match: str) -> None:
    state = State()
    with pytest.raises(TypeError, match=match):
        state.finish(answer)
    assert not state.finished


def test_after_finish_think_and_run_raise() -> None:
    state = State(messages=[Message.user("a")])
    state.finish()
    with pytest.raises(ValueError, match="finished"):
        state._check_can_run()
    with pytest.raises(ValueError, match="finished"):
        state._begin_think(1, [])
    with pytest.raises(ValueError, match="finished"):
        state._begin_request("ask", 1)
    with pytest.raises(ValueError, match="cannot run again"):
        state._start_run()


def test_restore_to_a_snapshot_before_finish_takes_it_back() -> None:
    state = State(messages=[Message.user("a")])
    before = state.snapshot()
    state.finish("x")
    state.restore(before)
    assert not state.finished and state.answer is None and state.stopped is None
    state._check_can_run()


# --- compact -----------------------------------------------------------------------------------


def test_compact_keeps_the_first_user_message_and_the_summary() -> None:
    state = State(messages=[Message.user("Find the bug")])
    call = ToolCall("search", {})
    think(state, call)
    result(state, call, "lots of output")
    before = state.history
    state.compact("The bug is in b.py, line 3")
    first, summary = state.messages
    assert first == Message.user("Find the bug")
    assert summary.role == "user" and "The bug is in b.py, line 3" in summary.content
    assert state.history[: len(before)] == before
    entry = state.history[-1]
    assert entry.kind == "context_change" and entry.change == "compact"


def test_compact_refuses_a_summary_that_is_not_a_string() -> None:
    with pytest.raises(TypeError, match="summary as a str"):
        State().compact(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("summary", ["", "  \n"])
def test_compact_refuses_an_empty_summary(summary: str) -> None:
    with pytest.raises(ValueError, match="empty summary"):
        State().compact(summary)


def test_compact_refuses_while_calls_are_pending() -> None:
    state = State(messages=[Message.user("a")])
    think(state, ToolCall("search", {}))
    with pytest.raises(ValueError, match="cannot compact: tool calls are pending"):
        state.compact("summary")


# --- clear_tool_results ------------------------------------------------------------------------


def _with_results(count: int) -> State:
    state = State(messages=[Message.user("a")])
    for index in range(count):
        call = ToolCall("read", {"i": index})
        think(state, call)
        result(state, call, f"result {index}")
    return state


def tool_texts(state: State) -> list[str]:
    return [m.content for m in state.messages if m.role == "tool"]


def test_clear_tool_results_blanks_all_but_the_last_keep_last() -> None:
    state = _with_results(4)
    state.clear_tool_results(keep_last=1)
    cleared = "(cleared: kept in history)"
    assert tool_texts(state) == [cleared, cleared, cleared, "result 3"]
    assert next(e.content for e in state.history if e.kind == "tool_result") == "result 0"


def test_clear_tool_results_keeps_five_by_default() -> None:
    state = _with_results(7)
    state.clear_tool_results()
    assert tool_texts(state)[:2] == ["(cleared: kept in history)"] * 2
    assert tool_texts(state)[2:] == [f"result {i}" for i in range(2, 7)]


def test_clear_tool_results_clears_images_with_the_text() -> None:
    state = State(messages=[Message.user("a")])
    call = ToolCall("screenshot", {})
    think(state, call)
    result(state, call, "shot", images=[Image("data:image/png;base64,AAAA")])
    assert state.messages[-1].images
    state.clear_tool_results(keep_last=0)
    assert state.messages[-1].images == () and state.messages[-1].content.startswith("(cleared")


def test_already_cleared_results_count_toward_keep_last() -> None:
    state = _with_results(3)
    state.clear_tool_results(keep_last=1)
    entries = len(state.history)
    state.clear_tool_results(keep_last=2)
    assert tool_texts(state)[1] == "(cleared: kept in history)"
    assert len(state.history) == entries


def test_clear_tool_results_records_nothing_when_nothing_changes() -> None:
    state = _with_results(2)
    entries = len(state.history)
    state.clear_tool_results(keep_last=5)
    assert len(state.history) == entries


@pytest.mark.parametrize("keep_last", [-1, 1.5, "2", True])
def test_clear_tool_results_refuses_keep_last_that_is_not_an_integer_from_0(
        keep_last: Any) -> None:
    with pytest.raises(ValueError, match="keep_last must be an integer >= 0"):
        State().clear_tool_results(keep_last)


def test_clear_tool_results_refuses_while_calls_are_pending() -> None:
    state = State(messages=[Message.user("a")])
    think(state, ToolCall("search", {}))
    with pytest.raises(ValueError, match="tool calls are pending"):
        state.clear_tool_results()


# --- edit_extra_data ---------------------------------------------------------------------------


def test_edit_extra_data_records_the_changes_as_one_entry() -> None:
    state = State(extra_data={"draft": 1})
    entries = len(state.history)
    with state.edit_extra_data() as data:
        data.setdefault("notes", {})["bug"] = "b.py"
        data.pop("draft", None)
    assert state.extra_data == {"notes": {"bug": "b.py"}}
    assert len(state.history) == entries + 1 and state.history[-1].kind == "extra_data"


def test_edit_extra_data_gives_an_editable_plain_copy() -> None:
    state = State(extra_data={"list": [1]})
    with state.edit_extra_data() as data:
        assert type(data) is dict and type(data["list"]) is list
        data["list"].append(2)
        assert state.extra_data == {"list": [1]}
    assert state.extra_data == {"list": [1, 2]}


def test_edit_extra_data_that_raises_changes_nothing() -> None:
    state = State(extra_data={"x": 1})
    entries = len(state.history)

    def edit_then_raise() -> None:
        with state.edit_extra_data() as data:
            data["x"] = 2
            raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        edit_then_raise()
    assert state.extra_data == {"x": 1} and len(state.history) == entries


def test_edit_extra_data_records_nothing_when_nothing_changed() -> None:
    state = State(extra_data={"x": 1})
    entries = len(state.history)
    with state.edit_extra_data() as data:
        data["x"] = 1
    assert len(state.history) == entries


def test_edit_extra_data_tells_true_from_one() -> None:
    state = State(extra_data={"x": 1})
    with state.edit_extra_data() as data:
        data["x"] = True
    assert state.extra_data["x"] is True


@pytest.mark.parametrize(
    ("value", "match"),
    [({"a"}, r'extra_data\["notes"\]\["bad"\] is a set'),
     (object(), r'extra_data\["notes"\]\["bad"\] is a object'),
     ({1: "x"}, r'extra_data\["notes"\]\["bad"\] has the key 1'),
     (float("nan"), r'extra_data\["notes"\]\["bad"\] is nan')],
)
def test_edit_extra_data_non_json_at_the_end_names_the_key(value: object, match: str) -> None:
    state = State(extra_data={"notes": {}})
    with pytest.raises(TypeError, match=match), state.edit_extra_data() as data:
        data["notes"]["bad"] = value
    assert state.extra_data == {"notes": {}}


def test_edit_extra_data_blocks_take_turns() -> None:
    state = State()
    inside, release = threading.Event(), threading.Event()
    order: list[str] = []

    def first() -> None:
        with state.edit_extra_data() as data:
            inside.set()
            release.wait(5)
            data["n"] = data.get("n", 0) + 1
            order.append("first")

    def second() -> None:
        inside.wait(5)
        with state.edit_extra_data() as data:
            data["n"] = data.get("n", 0) + 1
            order.append("second")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    inside.wait(5)
    release.set()
    for thread in threads:
        thread.join(5)
    assert order == ["first", "second"] and state.extra_data == {"n": 2}


def test_edit_extra_data_blocks_cannot_nest() -> None:
    state = State()
    with state.edit_extra_data(), pytest.raises(RuntimeError, match="cannot nest"), \
            state.edit_extra_data():
        pass
