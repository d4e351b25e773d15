"""The messages of a model request and reply as the GenAI semantic conventions write them on a
span (`gen_ai.system_instructions`, `gen_ai.input.messages`, `gen_ai.output.messages`: JSON
text of role + parts), for tracing that captures content."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pyox_agents.state.messages import Message, Reply, ToolCall

__all__ = ["input_messages", "json_text", "output_messages"]


def input_messages(messages: Sequence[Message]) -> tuple[str | None, str]:
    """The system instructions (None without any) and the other messages of a request."""
    system = [{"type": "text", "content": m.content} for m in messages if m.role == "system"]
    others = [_message(m) for m in messages if m.role != "system"]
    return (json_text(system) if system else None), json_text(others)


def output_messages(reply: Reply, finish_reason: str) -> str:
    """What the model answered, as one assistant message."""
    parts: list[dict[str, Any]] = []
    if reply.reasoning:
        parts.append({"type": "reasoning", "content": reply.reasoning})
    if reply.text:
        parts.append({"type": "text", "content": reply.text})
    parts += [_call(call) for call in reply.tool_calls]
    return json_text([{"role": "assistant", "parts": parts, "finish_reason": finish_reason}])


def _message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": message.call_id,
                                           "response": message.content}]}
    parts: list[dict[str, Any]] = []
    if message.content:
        parts.append({"type": "text", "content": message.content})
    parts += [{"type": "uri", "modality": "image", "mime_type": image.media_type,
               "uri": image.url} for image in message.images]
    parts += [{"type": "uri", "modality": _modality(file.media_type), "mime_type":
               file.media_type, "uri": file.url} for file in message.files]
    parts += [_call(call) for call in message.tool_calls]
    return {"role": message.role, "parts": parts}


def _modality(media_type: str) -> str:
    kind = media_type.split("/")[0]
    return kind if kind in ("image", "audio", "video") else "document"


def _call(call: ToolCall) -> dict[str, Any]:
    arguments: Any = call.raw_arguments if call.raw_arguments is not None else call.arguments
    return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": arguments}


def json_text(value: Any) -> str:
    """`value` as a span attribute's text: a str as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
