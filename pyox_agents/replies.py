"""Assembling a model's streamed chunks into runtime events and one `Reply`.

Text and reasoning open when their first delta arrives and close when something else starts;
tool calls open with their name and close when the next call starts or the reply ends, so each
call is one START/ARGS.../END run, never interleaved with another.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable

from pyox_agents.events import (
    ReasoningDelta,
    ReasoningEnded,
    ReasoningStarted,
    RuntimeEvent,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
)
from pyox_agents.models.base import (
    ModelChunk,
    ModelError,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    UsageChunk,
)
from pyox_agents.state.messages import Reply, ToolCall, Usage

__all__ = ["ReplyStream", "new_message_id"]


def new_message_id() -> str:
    """A fresh id for an assistant message."""
    return "msg_" + secrets.token_hex(8)


class ReplyStream:
    """One model reply as it arrives: `add` each chunk, then `finish` for the `Reply`."""

    def __init__(self, send: Callable[[RuntimeEvent], None]) -> None:
        self._send = send
        self.message_id = new_message_id()
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._names: dict[int, str] = {}
        self._ids: dict[int, str] = {}
        self._arguments: dict[int, list[str]] = {}
        self._usage = Usage()
        self._text_open = False
        self._reasoning_open = False
        self._open_call: int | None = None

    def add(self, chunk: ModelChunk) -> None:
        """Take the next chunk, emitting the events it means."""
        if isinstance(chunk, TextChunk):
            self._close_reasoning()
            if not self._text_open:
                self._text_open = True
                self._send(TextStarted(self.message_id))
            self._text.append(chunk.delta)
            self._send(TextDelta(self.message_id, chunk.delta))
        elif isinstance(chunk, ReasoningChunk):
            if not self._reasoning_open:
                self._reasoning_open = True
                self._send(ReasoningStarted(self.message_id))
            self._reasoning.append(chunk.delta)
            self._send(ReasoningDelta(self.message_id, chunk.delta))
        elif isinstance(chunk, ToolCallChunk):
            self._add_call(chunk)
        elif isinstance(chunk, UsageChunk):
            self._usage = self._usage + chunk.usage

    def _add_call(self, chunk: ToolCallChunk) -> None:
        index = chunk.index
        if index not in self._names:
            if chunk.name is None:
                raise ModelError(
                    f"the model streamed arguments for tool call {index} before its name"
                )
            self._close_reasoning()
            self._close_text()
            self._close_call()
            self._names[index] = chunk.name
            self._ids[index] = chunk.id or "call_" + secrets.token_hex(12)
            self._arguments[index] = []
            self._open_call = index
            self._send(ToolCallStarted(self._ids[index], chunk.name, self.message_id))
        if chunk.arguments:
            self._arguments[index].append(chunk.arguments)
            self._send(ToolCallArgsDelta(self._ids[index], chunk.arguments))

    def finish(self) -> Reply:
        """Close what is open and return the whole reply."""
        self.close()
        return Reply(
            text="".join(self._text),
            reasoning="".join(self._reasoning),
            tool_calls=tuple(self._call(index) for index in sorted(self._names)),
            usage=self._usage,
        )

    def close(self) -> None:
        """Close the open reasoning, text and tool call (sending their end events)."""
        self._close_reasoning()
        self._close_text()
        self._close_call()

    def _call(self, index: int) -> ToolCall:
        text = "".join(self._arguments[index]) or "{}"
        name, call_id = self._names[index], self._ids[index]
        try:
            arguments = json.loads(text)
        except ValueError:
            return ToolCall(name, {}, id=call_id, raw_arguments=text)
        if not isinstance(arguments, dict):
            return ToolCall(name, {}, id=call_id, raw_arguments=text)
        return ToolCall(name, arguments, id=call_id)

    def _close_call(self) -> None:
        if self._open_call is not None:
            call = self._call(self._open_call)
            self._open_call = None
            self._send(ToolCallEnded(call.id, call.name, call.arguments))

    def _close_text(self) -> None:
        if self._text_open:
            self._text_open = False
            self._send(TextEnded(self.message_id, "".join(self._text)))

    def _close_reasoning(self) -> None:
        if self._reasoning_open:
            self._reasoning_open = False
            self._send(ReasoningEnded(self.message_id, "".join(self._reasoning)))
