"""State(...): keyword-only arguments, what is recorded, and every documented refusal."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from pyox_agents.state.conversation import State
from pyox_agents.state.history import (
    ExtraDataEntry,
    ImportEntry,
    ModelReplyEntry,
    ModelRequestEntry,
    RequestSummary,
    RunStartEntry,
    ToolResultEntry,
    utc_now,
)
from pyox_agents.state.messages import Message, Reply, ToolCall

NEW: Any = State  # calls that break the signature on purpose, without type-checker noise


def test_state_takes_no_positional_argument() -> None:
    with pytest.raises(TypeError, match="keyword arguments only"):
        NEW([Message.user("hi")])


@pytest.mark.parametrize(
    ("keyword", "replacement"),
    [("task", r"messages=\[Message.user"), ("context", r"messages=\[...\]"),
     ("data", "extra_data=")],
)
def test_04_keywords_name_their_replacement(keyword: str, replacement: str) -> None:
    with pytest.raises(TypeError, match=replacement):
        NEW(**{keyword: "x"})


def test_unknown_keyword_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'msgs'"):
        NEW(msgs=[])


def test_messages_as_a_plain_str_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"messages must be a list of Message, got a str"):
        NEW(messages="Find the bug")


def test_messages_item_that_is_not_a_message_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"messages\[1\] is a dict, not a Message"):
        NEW(messages=[Message.user("a"), {"role": "user", "content": "b"}])


def test_messages_may_be_any_iterable_of_messages() -> None:
    state = State(messages=(m for m in [Message.user("a"), Message.user("b")]))
    assert [m.content for m in state.messages] == ["a", "b"]


def test_extra_data_value_that_is_not_json_names_the_key() -> None:
    with pytest.raises(TypeError, match=r'extra_data\["tags"\] is a set'):
        State(extra_data={"tags": {"a"}})


def test_extra_data_non_string_key_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"key 1 \(int\)"):
        NEW(extra_data={1: "x"})


def test_history_with_messages_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="cannot be combined with messages or extra_data"):
        State(history=(), messages=[Message.user("a")])


def test_history_with_extra_data_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="cannot be combined with messages or extra_data"):
        State(history=(), extra_data={"a": 1})


def test_history_item_that_is_not_an_entry_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"history\[0\] is a Message, not a history entry"):
        NEW(history=[Message.user("a")])


def test_id_with_other_characters_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="letters, digits, '_' and '-'"):
        State(id="bug hunt/1")


def test_id_longer_than_128_is_a_value_error() -> None:
    State(id="a" * 128)
    with pytest.raises(ValueError, match="1 to 128 characters"):
        State(id="a" * 129)


def test_id_is_random_when_left_out() -> None:
    first, second = State(), State()
    assert first.id != second.id
    assert State(id="bug-hunt_1").id == "bug-hunt_1"


def test_messages_are_recorded_as_one_import_entry() -> None:
    state = State(messages=[Message.user("a"), Message.assistant("b")])
    (entry,) = state.history
    assert isinstance(entry, ImportEntry)
    assert entry.content == (Message.user("a"), Message.assistant("b"))


def test_extra_data_is_recorded_as_one_extra_data_entry() -> None:
    state = State(messages=[Message.user("a")], extra_data={"repo": "api"})
    assert [e.kind for e in state.history] == ["import", "extra_data"]
    assert isinstance(state.history[1], ExtraDataEntry)
    assert state.extra_data == {"repo": "api"}


def test_empty_state_has_no_history() -> None:
    state = State()
    assert state.history == () and state.messages == ()
    assert state.created_at is None and state.updated_at is None


def test_state_from_history_gives_an_equal_snapshot() -> None:
    state = State(messages=[Message.user("a")], extra_data={"k": [1]})
    assert State(history=state.history).snapshot() == state.snapshot()


def _at() -> datetime.datetime:
    return utc_now()


def test_inconsistent_history_gives_the_index_of_the_entry() -> None:
    call = ToolCall("search", {}, id="c1")
    history = [ImportEntry(at=_at(), content=(Message.user("a"),)),
               ToolResultEntry(at=_at(), content="x", call=call)]
    with pytest.raises(ValueError, match=r"history\[1\] \(tool_result\) cannot follow.*"
                                         r"no pending tool call has id 'c1'"):
        State(history=history)


def test_model_reply_without_a_model_request_is_inconsistent() -> None:
    with pytest.raises(ValueError, match=r"history\[0\] \(model_reply\).*model_request"):
        State(history=[ModelReplyEntry(at=_at(), content=Reply("hi"))])


def test_a_second_run_start_with_another_parent_is_inconsistent() -> None:
    history = [RunStartEntry(at=_at(), parent_id="p", parent_call_id="c"),
               RunStartEntry(at=_at())]
    with pytest.raises(ValueError, match=r"history\[1\] \(run_start\).*parent link"):
        State(history=history)


def test_a_second_model_request_while_one_waits_is_inconsistent() -> None:
    request = ModelRequestEntry(at=_at(), content=RequestSummary(0))
    with pytest.raises(ValueError, match=r"history\[1\].*already waiting on the model"):
        State(history=[request, request])


def test_import_after_other_entries_is_inconsistent() -> None:
    history = [RunStartEntry(at=_at()), ImportEntry(at=_at(), content=())]
    with pytest.raises(ValueError, match=r"history\[1\] \(import\).*first entry"):
        State(history=history)
