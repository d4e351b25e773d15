"""What the model sees: messages, tool calls, replies and usage.

These are plain frozen values, shared by the agent loop, the models and (later) the conversation
record. A `Message` is what a model is given; a `Reply` is what one model request produced.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]

NOTICE_PREFIX = "[notice] "


def new_call_id() -> str:
    """A fresh tool call id, unique enough to never collide within a conversation."""
    return "call_" + secrets.token_hex(12)


@dataclass(frozen=True, slots=True)
class Image:
    """An image given to the model: a URL (https: or data:) and its media type."""

    url: str
    media_type: str = "image/png"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model asked for.

    `arguments` is the parsed JSON object; `raw_arguments` keeps the text the model sent when it
    was not a JSON object, so the tool can answer with an error instead of the run failing.
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_call_id)
    raw_arguments: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens, requests and cost spent, summed over model requests."""

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    cost: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            requests=self.requests + other.requests,
            cost=self.cost + other.cost,
        )


@dataclass(frozen=True, slots=True)
class Reply:
    """What one model request produced: text, reasoning, tool calls and what it cost."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str = ""
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True, slots=True)
class Message:
    """One message of the conversation, as the model sees it.

    `role` is "system", "user", "assistant" or "tool"; `content` is its text. An assistant
    message may carry `tool_calls`; a tool message answers the call `call_id` (`is_error` when
    the tool failed). Build user messages with `Message.user` and notices with `Message.notice`.
    """

    role: Role
    content: str = ""
    images: tuple[Image, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    call_id: str | None = None
    name: str | None = None
    is_error: bool = False

    @classmethod
    def system(cls, text: str) -> Message:
        """Instructions for the model."""
        return cls(role="system", content=text)

    @classmethod
    def user(cls, text: str, *images: Image) -> Message:
        """A message from the person using the agent, with optional images."""
        if not isinstance(text, str):
            raise TypeError(f"Message.user() takes the text as a str, got {type(text).__name__}")
        for image in images:
            if not isinstance(image, Image):
                raise TypeError(f"Message.user() images must be Image, got {type(image).__name__}")
        return cls(role="user", content=text, images=images)

    @classmethod
    def notice(cls, text: str) -> Message:
        """Something your loop or a tool tells the model: a user message starting "[notice] "."""
        return cls.user(NOTICE_PREFIX + text)

    @classmethod
    def assistant(cls, text: str = "", tool_calls: tuple[ToolCall, ...] = ()) -> Message:
        """A model reply: its text and the tool calls it asked for."""
        return cls(role="assistant", content=text, tool_calls=tuple(tool_calls))

    @classmethod
    def tool(cls, call: ToolCall, content: str, *, is_error: bool = False) -> Message:
        """The result of `call`, as text the model reads."""
        return cls(role="tool", content=content, call_id=call.id, name=call.name, is_error=is_error)
