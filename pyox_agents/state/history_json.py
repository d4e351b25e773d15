"""History entries from their JSON rows, and the shared state rebuilt from history.

Stores save each entry as `entry.to_json()`; `entry_from_json` reads such a row back into an equal
entry. Re-exported by `pyox_agents.state.history`.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any, cast

from pyox_agents.state._change_entries import (
    ClearedToolResults,
    Compacted,
    ContextChange,
    ContextChangeEntry,
    ErrorEntry,
    FinishEntry,
    Restored,
    StateChangeEntry,
    StopEntry,
)
from pyox_agents.state._entries import HistoryEntry
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
from pyox_agents.state.frozen import JSON
from pyox_agents.state.jsonvalue import (
    call_from_json,
    message_from_json,
    reply_from_json,
    to_json_value,
    usage_from_json,
)
from pyox_agents.state.messages import Image
from pyox_agents.state.patch import apply_json
from pyox_agents.state.stopped import stopped_from_json

__all__ = ["entry_from_json", "shared_state_from"]


def _context_change(content: Any) -> ContextChange:
    change = content.get("change") if isinstance(content, dict) else None
    if change == "compact" and isinstance(content.get("summary"), str):
        return Compacted(content["summary"])
    if change == "clear" and type(content.get("keep_last")) is int:
        return ClearedToolResults(content["keep_last"])
    if change == "restore" and type(content.get("history_length")) is int:
        return Restored(content["history_length"])
    raise ValueError(f"content must be a compact, clear or restore change, got {content!r}")


def _tool_result(row: Mapping[str, Any], at: datetime.datetime) -> ToolResultEntry:
    images = tuple(Image(url=i["url"], media_type=i["media_type"]) for i in row["images"])
    return ToolResultEntry(at=at, content=row.get("content"), call=call_from_json(row.get("call")),
                           outcome=row["outcome"], is_error=row["is_error"], text=row["text"],
                           images=images, child_ids=tuple(row["child_ids"]),
                           usage=usage_from_json(row.get("usage")))


_PARSERS: dict[str, Any] = {
    "import": lambda r, at: ImportEntry(
        at=at, content=tuple(message_from_json(m) for m in r["content"])),
    "extra_data": lambda r, at: ExtraDataEntry(at=at, content=r["content"]),
    "run_start": lambda r, at: RunStartEntry(at=at, content=r.get("content"),
                                             parent_id=r.get("parent_id"),
                                             parent_call_id=r.get("parent_call_id")),
    "user_message": lambda r, at: UserMessageEntry(at=at, content=message_from_json(r["content"])),
    "notice": lambda r, at: NoticeEntry(at=at, content=message_from_json(r["content"])),
    "model_request": lambda r, at: ModelRequestEntry(
        at=at, purpose=r["purpose"],
        content=RequestSummary(r["content"]["message_count"], tuple(r["content"]["tool_names"]))),
    "model_reply": lambda r, at: ModelReplyEntry(at=at, purpose=r["purpose"],
                                                 content=reply_from_json(r["content"])),
    "tool_result": _tool_result,
    "state_change": lambda r, at: StateChangeEntry(at=at, content=r["content"],
                                                   call_id=r["call_id"], version=r["version"]),
    "context_change": lambda r, at: ContextChangeEntry(at=at, content=_context_change(
        r["content"])),
    "finish": lambda r, at: FinishEntry(at=at, content=r.get("content")),
    "stop": lambda r, at: StopEntry(at=at, content=stopped_from_json(r["content"])),
    "error": lambda r, at: ErrorEntry(at=at, content=r["content"], during=r["during"]),
}


def entry_from_json(row: Mapping[str, Any]) -> HistoryEntry:
    """The history entry of a JSON row made by `entry.to_json()` (a store's saved row).

    Raises:
        TypeError: `row` is not a dict.
        ValueError: an unknown `kind`, or a row that is not a valid entry of its kind.
    """
    if not isinstance(row, Mapping):
        raise TypeError(f"a history row must be a dict made by entry.to_json(), got "
                        f"{type(row).__name__}")
    kind = row.get("kind")
    parse = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parse is None:
        raise ValueError(f"unknown history entry kind {kind!r}: expected one of "
                         f"{', '.join(_PARSERS)}")
    try:
        at_text = row.get("at")
        if not isinstance(at_text, str):
            raise ValueError(f"'at' must be an ISO 8601 string, got {at_text!r}")
        at = datetime.datetime.fromisoformat(at_text)
        return cast(HistoryEntry, parse(row, at))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        detail = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ValueError(f"malformed {kind} history entry: {detail}") from exc


def shared_state_from(history: Iterable[HistoryEntry], initial: Any) -> JSON:
    """The shared state after the `state_change` entries of `history`, applied in order.

    Only histories saved by earlier versions of pyox-agents have such entries (runs no longer
    record the shared state). `initial` is the state before the first of them; it is not
    changed. Returns a read-only value.

    Raises:
        ValueError: a recorded change that does not apply to the state built so far.
    """
    ops = [op for entry in history if isinstance(entry, StateChangeEntry) for op in entry.delta]
    start = to_json_value(initial, "initial")
    return apply_json(start, cast(list[Mapping[str, Any]], ops))
