"""History entries: everything that happened to a `State`, one frozen value per event.

Each entry class has a `kind` (a `Literal`, so `entry.kind == "model_reply"` narrows the type),
`at` (when it was recorded, a timezone-aware UTC datetime) and a typed `content`. Values are
read-only and in JSON form from the moment an entry is built, so a live State and one loaded
from a store hold equal entries: `entry_from_json(entry.to_json()) == entry`.
"""

from __future__ import annotations

import warnings
from typing import Any

from pyox_agents.state._change_entries import (
    ClearedToolResults,
    Compacted,
    ContextChangeEntry,
    ErrorEntry,
    FinishEntry,
    Restored,
    StateChangeEntry,
    StopEntry,
)
from pyox_agents.state._change_entries import ContextChange as ContextChange
from pyox_agents.state._entries import ENTRY_TYPES as ENTRY_TYPES
from pyox_agents.state._entries import HistoryEntry
from pyox_agents.state._entry_parts import Outcome as Outcome
from pyox_agents.state._entry_parts import Purpose as Purpose
from pyox_agents.state._entry_parts import utc_now
from pyox_agents.state._message_entries import (
    ExtraDataEntry,
    ImportEntry,
    ModelReplyEntry,
    ModelRequestEntry,
    NoticeEntry,
    RequestSummary,
    RunStartEntry,
    ToolResultEntry,
    UserMessageEntry,
)
from pyox_agents.state.history_json import entry_from_json, shared_state_from
from pyox_agents.state.stopped import (
    Stopped,
    StoppedByFinish,
    StoppedByLimit,
    StoppedByPermission,
    StoppedByUntil,
)

__all__ = [
    "ClearedToolResults", "Compacted", "ContextChangeEntry", "ErrorEntry", "ExtraDataEntry",
    "FinishEntry", "HistoryEntry", "ImportEntry", "ModelReplyEntry", "ModelRequestEntry",
    "NoticeEntry", "RequestSummary", "Restored", "RunStartEntry", "StateChangeEntry",
    "StopEntry", "Stopped", "StoppedByFinish", "StoppedByLimit", "StoppedByPermission",
    "StoppedByUntil", "ToolResultEntry", "UserMessageEntry", "entry_from_json",
    "shared_state_from", "utc_now",
]


def __getattr__(name: str) -> Any:
    """`ModelRequest`, the old name of `RequestSummary`, with a `DeprecationWarning`."""
    if name == "ModelRequest":
        warnings.warn(
            "pyox_agents.state.history.ModelRequest is now RequestSummary (ModelRequest is the "
            "request a model is sent, in pyox_agents.models): import RequestSummary",
            DeprecationWarning, stacklevel=2)
        return RequestSummary
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
