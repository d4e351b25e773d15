"""The public names, pinned: adding or removing one is a decision, not an accident."""

from __future__ import annotations

import pyox_agents
from pyox_agents import models, stores, tracing


def test_the_top_level_names_are_exactly_these() -> None:
    assert set(pyox_agents.__all__) == {
        "SCHEMA_VERSION",
        "Agent",
        "AgentError",
        "Allow",
        "Answer",
        "ApprovalRequested",
        "CallTool",
        "CustomEvent",
        "FileAttached",
        "PreliminaryResult",
        "Progress",
        "SourceCited",
        "Limits",
        "ApprovalRequest",
        "Ask",
        "AuditError",
        "PyoxError",
        "ClearedToolResults",
        "Compacted",
        "ContextChangeEntry",
        "Deny",
        "ErrorEntry",
        "ExtraDataEntry",
        "File",
        "FinishEntry",
        "FrozenDict",
        "FrozenList",
        "HistoryEntry",
        "Image",
        "ImportEntry",
        "Message",
        "ModelReplyEntry",
        "ModelRequestEntry",
        "NoticeEntry",
        "ReasoningDelta",
        "ReasoningEnded",
        "ReasoningStarted",
        "RemoteAgent",
        "Reply",
        "Restored",
        "RunContext",
        "RunFailed",
        "RunFailedError",
        "RunFinished",
        "RunResult",
        "RunStartEntry",
        "RunStarted",
        "RunState",
        "RunStatus",
        "RuntimeEvent",
        "Spent",
        "State",
        "StateChangeEntry",
        "StateChanged",
        "StateError",
        "StateSnapshot",
        "Step",
        "StepFinished",
        "StepStarted",
        "StopEntry",
        "StopReason",
        "Stopped",
        "StoppedByFinish",
        "StoppedByLimit",
        "StoppedByPermission",
        "StoppedByUntil",
        "SubagentFinished",
        "SubagentStarted",
        "TextDelta",
        "TextEnded",
        "TextStarted",
        "Tool",
        "ToolCall",
        "Toolset",
        "ToolCallArgsDelta",
        "ToolCallEnded",
        "ToolCallStarted",
        "ToolError",
        "ToolResult",
        "ToolResultEntry",
        "Usage",
        "UserMessageEntry",
        "loop",
        "tool",
        "verify_audit",
    }


def test_the_tracing_names_are_exactly_these() -> None:
    assert set(tracing.__all__) == {"disable", "enable", "enabled"}


def test_every_public_name_exists_and_has_a_docstring() -> None:
    for module in (pyox_agents, models, stores, tracing):
        for name in module.__all__:
            value = getattr(module, name)
            if callable(value):
                assert getattr(value, "__doc__", None), f"{module.__name__}.{name} has no docstring"


def test_the_seed_004_imports_work() -> None:
    from pyox_agents import Agent, RunContext, StateChanged, tool  # noqa: F401


def test_every_error_the_library_raises_on_purpose_is_a_pyox_error() -> None:
    """One error tree, as httpx keeps one: `except PyoxError` catches any of the library's
    errors; each keeps the builtin class it had as a second base."""
    from pyox_agents import AuditError, PyoxError, RunFailedError, StateError, ToolError
    from pyox_agents.models import ModelError
    from pyox_agents.service import Busy, RequestError
    from pyox_agents.state.rebase import Conflict
    from pyox_agents.state.shared import Refused
    from pyox_agents.stores import StoreConflict, StoreUnavailable
    from pyox_agents.tools import ToolArgumentsError

    for error in (AuditError, RunFailedError, StateError, ToolError, ModelError, Busy,
                  RequestError, Conflict, Refused, StoreConflict, StoreUnavailable,
                  ToolArgumentsError):
        assert issubclass(error, PyoxError), error
    assert issubclass(StoreUnavailable, ConnectionError) and issubclass(RequestError, ValueError)
