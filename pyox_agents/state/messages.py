"""What the model sees: messages, tool calls, replies and usage.

These are plain frozen values, shared by the agent loop, the models and (later) the conversation
record. A `Message` is what a model is given; a `Reply` is what one model request produced.
"""

from __future__ import annotations

import base64
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
class File:
    """A file given to the model: a document (PDF, text), audio, video or any other media type.

    `url` is where the bytes are: an https: URL, or a `data:<media type>;base64,<data>` URL
    carrying them; `media_type` says what they are ("application/pdf", "audio/wav", ...);
    `filename` is the name the person gave it, when known. Whether a model can take a file
    depends on its media type and source: `Model.accepts` says (`pyox_agents.models`), and a run
    is refused before it starts when its model cannot take one of its messages' files.
    """

    url: str
    media_type: str
    filename: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url:
            raise TypeError(f"File.url must be a non-empty str (an https: or data: URL), got "
                            f"{self.url!r}")
        if not isinstance(self.media_type, str) or "/" not in self.media_type:
            raise TypeError(f"File.media_type must be a media type such as 'application/pdf', "
                            f"got {self.media_type!r}")
        if self.filename is not None and not isinstance(self.filename, str):
            raise TypeError(f"File.filename must be a str or None, got "
                            f"{type(self.filename).__name__}")

    @classmethod
    def from_bytes(cls, data: bytes, media_type: str, filename: str | None = None) -> File:
        """A file carrying `data` itself (as a base64 data: URL)."""
        encoded = base64.b64encode(data).decode("ascii")
        return cls(f"data:{media_type};base64,{encoded}", media_type, filename)


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
        return Usage(input_tokens=self.input_tokens + other.input_tokens,
                     output_tokens=self.output_tokens + other.output_tokens,
                     requests=self.requests + other.requests, cost=self.cost + other.cost)


NO_USAGE = Usage()
"""Nothing spent: one instance for every count that starts at zero (a `Usage` is immutable)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """What one model request produced: text, reasoning, tool calls and what it cost."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str = ""
    usage: Usage = NO_USAGE


@dataclass(frozen=True, slots=True)
class Message:
    """One message of the conversation, as the model sees it.

    `role` is "system", "user", "assistant" or "tool"; `content` is its text. A user message
    may carry `images` and `files` (documents, audio, video). An assistant message may carry
    `tool_calls`; a tool message answers the call `call_id` (`is_error` when the tool failed).
    Build user messages with `Message.user` and notices with `Message.notice`.

    `id` is the id a client gave the message (an AG-UI message id, an AI SDK `UIMessage.id`),
    kept with it so that the client's next request is matched to the thread by id; None for a
    message no client named. The model never sees it, and `==` does not compare it.
    """

    role: Role
    content: str = ""
    images: tuple[Image, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    call_id: str | None = None
    name: str | None = None
    is_error: bool = False
    files: tuple[File, ...] = ()
    id: str | None = field(default=None, compare=False)

    @classmethod
    def system(cls, text: str) -> Message:
        """Instructions for the model."""
        return cls(role="system", content=text)

    @classmethod
    def user(cls, text: str, *images: Image | File) -> Message:
        """A message from the person using the agent, with optional images and files.

        `Image` values go to `images`, `File` values (a PDF, audio, ...) to `files`, each in
        the order given.
        """
        if not isinstance(text, str):
            raise TypeError(f"Message.user() takes the text as a str, got {type(text).__name__}")
        for part in images:
            if not isinstance(part, Image | File):
                raise TypeError(f"Message.user() images and files must be Image or File, got "
                                f"{type(part).__name__}: write Image(url=...) or "
                                f"File(url=..., media_type=...)")
        return cls(role="user", content=text,
                   images=tuple(p for p in images if isinstance(p, Image)),
                   files=tuple(p for p in images if isinstance(p, File)))

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
