"""`HistoryEntry`: the union of every history entry class, and `ENTRY_TYPES`, its classes."""

from __future__ import annotations

from typing import TypeAlias, get_args

from pyox_agents.state._change_entries import (
    ContextChangeEntry,
    ErrorEntry,
    FinishEntry,
    StateChangeEntry,
    StopEntry,
)
from pyox_agents.state._message_entries import (
    ExtraDataEntry,
    ImportEntry,
    ModelReplyEntry,
    ModelRequestEntry,
    NoticeEntry,
    RunStartEntry,
    ToolResultEntry,
    UserMessageEntry,
)

HistoryEntry: TypeAlias = (
    ImportEntry | ExtraDataEntry | RunStartEntry | UserMessageEntry | NoticeEntry
    | ModelRequestEntry | ModelReplyEntry | ToolResultEntry | StateChangeEntry
    | ContextChangeEntry | FinishEntry | StopEntry | ErrorEntry
)
"""One thing that happened to a State; `kind` tells which class it is."""


ENTRY_TYPES: tuple[type, ...] = get_args(HistoryEntry)
