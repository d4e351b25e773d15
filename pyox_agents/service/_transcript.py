"""A thread's messages as people saw them, each with the id its client was streamed.

Built from the thread's append-only history, not from `State.messages` (what the model reads
next): compaction and cleared results do not hide what was said, and notices (the loop's words
to the model) are not shown. A restore takes back what came after the point it returns to.

Ids: an assistant message has the id its reply streamed with (`ReplyIds`), a tool
result `result-<call id>`, a user message the id its client gave it (`Message.id`), else
`user_<digest>` of its place in the history. A user message sent while calls waited for their
results comes after those results, as the model read it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pyox_agents.runtime._replies import ReplyIds
from pyox_agents.state._shown_ids import user_message_id
from pyox_agents.state.conversation import State
from pyox_agents.state.history import (
    ContextChangeEntry,
    HistoryEntry,
    ImportEntry,
    ModelReplyEntry,
    Restored,
    RunStartEntry,
    ToolResultEntry,
    UserMessageEntry,
)
from pyox_agents.state.jsonvalue import file_to_json
from pyox_agents.state.messages import NOTICE_PREFIX, Message

__all__ = ["result_message_id", "run_messages", "transcript"]


def result_message_id(call_id: str) -> str:
    """The id of the message of a tool call's result (AG-UI's `TOOL_CALL_RESULT.messageId`)."""
    return f"result-{call_id}"


def transcript(conversation: State, *, before_run: str | None = None) -> list[dict[str, Any]]:
    """The messages of `conversation` as JSON records, oldest first.

    Each record: `{id, role, content, tool_calls: [{id, name, arguments}], call_id}`; a tool
    result also has `is_error` and `result` (its JSON value when it succeeded). `before_run`:
    stop at the last start of that run (a run still going, whose messages its events give).
    """
    history = conversation.history
    end = _last_start(history, before_run) if before_run is not None else None
    return _upto(conversation, history, len(history) if end is None else end)


def run_messages(conversation: State, run_id: str) -> list[dict[str, Any]]:
    """The messages of run `run_id`'s turn, as `transcript` gives them: those its request
    added (the user messages right before its start) and its own."""
    history = conversation.history
    cut = _last_start(history, run_id)
    if cut is None:
        return []
    while cut > 0 and isinstance(history[cut - 1], UserMessageEntry):
        cut -= 1
    before = {record["id"] for record in _upto(conversation, history, cut)}
    return [r for r in _upto(conversation, history, len(history)) if r["id"] not in before]


def _last_start(history: Sequence[HistoryEntry], run_id: str) -> int | None:
    """The index of run `run_id`'s last start in `history`, or None."""
    starts = [i for i, e in enumerate(history)
              if isinstance(e, RunStartEntry) and e.content == run_id]
    return starts[-1] if starts else None


def _upto(conversation: State, history: Sequence[HistoryEntry], end: int
          ) -> list[dict[str, Any]]:
    """The transcript of the first `end` entries of `history`."""
    thread_id = conversation.id
    kept: list[tuple[int, dict[str, Any]]] = []
    waiting: set[str] = set()  # calls asked for that have no result yet
    held: list[tuple[int, dict[str, Any]]] = []  # user messages sent meanwhile: after them
    replies = ReplyIds(thread_id)
    request = 0
    for index in range(end):
        entry = history[index]
        if entry.kind == "model_request":
            request = index
            continue
        if isinstance(entry, ContextChangeEntry) and isinstance(entry.content, Restored):
            length = entry.content.history_length
            kept = [(at, record) for at, record in kept if at < length]
            held = [(at, record) for at, record in held if at < length]
            continue
        records = [(index, r) for r in _records(thread_id, history, index, entry,
                                                replies, request)]
        if isinstance(entry, UserMessageEntry) and waiting:
            held.extend(records)
            continue
        kept.extend(records)
        if isinstance(entry, ModelReplyEntry) and entry.purpose == "think":
            waiting.update(call.id for call in entry.content.tool_calls)
        elif isinstance(entry, ToolResultEntry):
            waiting.discard(entry.call.id)
            if not waiting:
                kept.extend(held)
                held.clear()
    return [record for _, record in [*kept, *held]]


def _records(thread_id: str, history: Sequence[HistoryEntry], index: int, entry: HistoryEntry,
             replies: ReplyIds, request: int) -> list[dict[str, Any]]:
    match entry:
        case ImportEntry(content=messages):
            return [_record(user_message_id(thread_id, m, index, n, "import"), m)
                    for n, m in enumerate(messages) if _shown(m)]
        case UserMessageEntry(content=message):
            return [_record(user_message_id(thread_id, message, index, 0, "user"), message)]
        case ModelReplyEntry(purpose="think", content=reply):
            message = Message.assistant(reply.text, reply.tool_calls)
            return [_record(replies.of(history, request), message)]
        case ToolResultEntry():
            record = _record(result_message_id(entry.call.id), entry.message)
            record["is_error"] = entry.is_error or entry.outcome != "ok"
            record["result"] = entry.content if entry.outcome == "ok" else None
            return [record]
    return []


def _shown(message: Message) -> bool:
    return not (message.role == "user" and message.content.startswith(NOTICE_PREFIX))


def _record(message_id: str, message: Message) -> dict[str, Any]:
    if message.role == "tool" and message.call_id is not None:
        message_id = result_message_id(message.call_id)
    return {
        "id": message_id,
        "role": message.role,
        "content": message.content,
        "tool_calls": [{"id": c.id, "name": c.name,
                        "arguments": json.loads(json.dumps(dict(c.arguments)))}
                       for c in message.tool_calls],
        "call_id": message.call_id,
        "images": [{"url": i.url, "media_type": i.media_type} for i in message.images],
        "files": [file_to_json(f) for f in message.files],
    }
