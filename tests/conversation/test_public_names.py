"""The public names of the conversation modules, pinned, and the internal API stores rely on."""

from __future__ import annotations

from pyox_agents.state import conversation, history
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message


def test_conversation_public_names() -> None:
    assert sorted(conversation.__all__) == [
        "State", "StateSnapshot", "Stopped", "StoppedByFinish", "StoppedByLimit",
        "StoppedByPermission", "StoppedByUntil",
    ]


def test_history_public_names() -> None:
    assert sorted(history.__all__) == [
        "ClearedToolResults", "Compacted", "ContextChangeEntry", "ErrorEntry", "ExtraDataEntry",
        "FinishEntry", "HistoryEntry", "ImportEntry", "ModelReplyEntry", "ModelRequest",
        "ModelRequestEntry", "NoticeEntry", "Restored", "RunStartEntry", "StateChangeEntry",
        "StopEntry", "Stopped", "StoppedByFinish", "StoppedByLimit", "StoppedByPermission",
        "StoppedByUntil", "ToolResultEntry", "UserMessageEntry", "entry_from_json",
        "shared_state_from", "utc_now",
    ]


def test_every_public_name_has_a_docstring() -> None:
    for module in (conversation, history):
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, type):
                assert value.__doc__, f"{module.__name__}.{name} has no docstring"


def test_entries_since_gives_only_the_new_entries() -> None:
    state = State(messages=[Message.user("a")])
    saved = len(state.history)
    state.add_message(Message.user("b"))
    state.add_message(Message.notice("c"))
    assert state._entries_since(saved) == state.history[saved:]
    assert [e.kind for e in state._entries_since(saved)] == ["user_message", "notice"]
