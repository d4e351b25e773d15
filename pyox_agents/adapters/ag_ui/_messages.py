"""The messages of a run as `@ag-ui/client` builds them from the stream, for MESSAGES_SNAPSHOT.

The client merges a snapshot into its messages by id, so every id here is one that was streamed:
an assistant message is the runtime's `message_id` (its text and its tool calls), a tool result is
`result-<toolCallId>` (the id TOOL_CALL_RESULT carried).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pydantic_core
from ag_ui.core import AssistantMessage, FunctionCall, Message, ToolCall, ToolMessage

from pyox_agents.state._pieces import Pieces
from pyox_agents.state.frozen import thaw

__all__ = ["MessageDraft", "as_json", "reasoning_id", "result_id", "result_text"]


def result_id(call_id: str) -> str:
    """The message id of a tool call's result: the same in TOOL_CALL_RESULT and the snapshot."""
    return f"result-{call_id}"


def reasoning_id(message_id: str) -> str:
    """The id of the reasoning of assistant message `message_id` (a message id of its own).

    The runtime gives a reply's reasoning and text one id; the client keeps messages by id, so
    the reasoning needs another or its text would be appended to the reasoning message.
    """
    return f"reasoning-{message_id}"


def result_text(value: Any) -> str:
    """A tool result as the text of a TOOL_CALL_RESULT."""
    if isinstance(value, str):
        return value
    return json.dumps(as_json(value), ensure_ascii=False, separators=(",", ":"))


def as_json(value: Any) -> Any:
    """`value` as plain JSON (frozen state versions thawed; anything else made JSON or str)."""
    try:
        return thaw(pydantic_core.to_jsonable_python(value, fallback=str))
    except (TypeError, ValueError):
        return str(value)


@dataclass(slots=True)
class MessageDraft:
    """A message of this run as the client builds it from the stream."""

    id: str
    role: str
    subagent: str | None
    text: Pieces = field(default_factory=Pieces)
    """An assistant message's whole text, taken from its `TextEnded` (every run ends its texts
    before its end; the deltas are not copied as they stream); a tool result's content."""
    calls: dict[str, Pieces] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    call_id: str | None = None
    error: str | None = None

    def to_message(self) -> Message:
        """The `ag_ui.core` message the client holds for this draft."""
        extra: dict[str, Any] = {}
        if self.subagent is not None:
            extra["subagent_run_id"] = self.subagent
        if self.role == "tool":
            assert self.call_id is not None
            if self.error is not None:
                extra["error"] = self.error
            return ToolMessage(id=self.id, content=self.text.text(), tool_call_id=self.call_id,
                               **extra)
        calls = [
            ToolCall(id=call_id, function=FunctionCall(name=self.names[call_id],
                                                        arguments=args.text()))
            for call_id, args in self.calls.items()
        ]
        if self.text:
            extra["content"] = self.text.text()
        if calls:
            extra["tool_calls"] = calls
        return AssistantMessage(id=self.id, **extra)
