"""The `Model` protocol: what the agent loop asks of an LLM.

A model is given a `ModelRequest` (the messages, the tools' schemas, settings) and streams
chunks: text deltas, reasoning deltas, tool-call deltas and usage. The loop assembles them into a
`Reply` and into runtime events; a model never sees the runtime's events or the shared state.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, runtime_checkable

from pyox_agents._errors import PyoxError
from pyox_agents.state.messages import Message, Usage


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as a model sees it: name, description and the JSON schema of its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One request to a model: the conversation so far and the tools it may call."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, init=False)
class TextChunk:
    """The next piece of the reply's text."""

    delta: str

    def __init__(self, delta: str) -> None:
        # one per token: the slot's own setter (a frozen dataclass's `object.__setattr__`
        # made it 2.5x the cost; the chunk is as frozen either way)
        _set_text_chunk(self, delta)


_set_text_chunk = TextChunk.__dict__["delta"].__set__


@dataclass(frozen=True, slots=True)
class ReasoningChunk:
    """The next piece of the model's reasoning."""

    delta: str


@dataclass(frozen=True, slots=True)
class ToolCallChunk:
    """A piece of tool call number `index` of this reply.

    The first chunk of a call carries its `name` (and `id`, if the provider gives one); later
    chunks carry more of the JSON `arguments` text. Calls of one reply have distinct indexes.
    """

    index: int
    arguments: str = ""
    name: str | None = None
    id: str | None = None


@dataclass(frozen=True, slots=True)
class UsageChunk:
    """What this request cost. A model sends it once, usually last."""

    usage: Usage


ModelChunk: TypeAlias = TextChunk | ReasoningChunk | ToolCallChunk | UsageChunk


class ModelError(PyoxError):
    """The model or its provider failed; the run ends with `RunFailed` carrying this message.

    `code` is the `AgentError.code` the run reports. A client reads `public_message`: this
    message itself, unless a subclass says otherwise (`ProviderError` names no URL and quotes
    no provider's words); the run's record and the server's log keep the message.
    """

    code = "model_error"

    @property
    def public_message(self) -> str:
        """What a client is shown of this error."""
        return str(self)


@runtime_checkable
class Model(Protocol):
    """An LLM the agent can ask. Implementations stream chunks for one request at a time.

    A model may also say which images and files it takes: a method `accepts(media_type,
    source) -> bool` (source "data" or "url") and an `input_kinds` (`InputKinds`) for error
    messages. A run whose messages hold a part its model does not accept is refused before it
    starts; a model without `accepts` is given every part as it is.
    """

    @property
    def name(self) -> str:
        """A short name for logs and usage reports, such as "openai:gpt-5-mini"."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream the reply to `request` as chunks."""
        ...
