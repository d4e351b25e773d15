"""The public names of the conversation modules, pinned, and the internal API stores rely on."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import pyox_agents
from pyox_agents import models
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
        "FinishEntry", "HistoryEntry", "ImportEntry", "ModelReplyEntry", "ModelRequestEntry",
        "NoticeEntry", "RequestSummary", "Restored", "RunStartEntry", "StateChangeEntry",
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


def test_one_class_is_named_model_request() -> None:
    """The request a model is sent is `ModelRequest`; the history keeps a `RequestSummary`."""
    package = Path(pyox_agents.__file__).parent
    defined = sorted(
        str(path.relative_to(package)) for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef) and node.name == "ModelRequest"
    )
    assert defined == ["models/base.py"]


def test_the_old_name_of_the_request_summary_still_imports_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"ModelRequest is now RequestSummary"):
        from pyox_agents.state.history import ModelRequest  # type: ignore[attr-defined]
    assert ModelRequest is history.RequestSummary
    assert models.ModelRequest is not history.RequestSummary
