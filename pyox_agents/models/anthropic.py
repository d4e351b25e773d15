"""`AnthropicModel`: Claude through Anthropic's Messages API, streamed.

Needs the official SDK: `pip install "pyox-agents[anthropic]"`.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from pyox_agents.models._inputs import InputKinds, Source
from pyox_agents.models._part_blocks import ANTHROPIC_INPUTS, anthropic_blocks
from pyox_agents.models._provider import (
    Endpoint,
    ErrorKinds,
    LoopClient,
    ProviderError,
    describe_failure,
    missing_extra,
    plain,
)
from pyox_agents.models.base import (
    ModelChunk,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    ToolSpec,
    UsageChunk,
)
from pyox_agents.models.prices import priced_usage
from pyox_agents.state.messages import Message

try:
    import anthropic
    from anthropic.types import (
        InputJSONDelta,
        RawContentBlockDeltaEvent,
        RawContentBlockStartEvent,
        RawContentBlockStopEvent,
        RawMessageDeltaEvent,
        RawMessageStartEvent,
        RawMessageStopEvent,
        RedactedThinkingBlock,
        SignatureDelta,
        TextBlock,
        TextDelta,
        ThinkingBlock,
        ThinkingDelta,
        ToolUseBlock,
    )
except ImportError as exc:  # pragma: no cover - exercised in a subprocess
    raise missing_extra("anthropic", "anthropic") from exc

if TYPE_CHECKING:
    from anthropic.types import RawMessageStreamEvent

__all__ = ["AnthropicModel", "to_anthropic_messages", "to_anthropic_tools"]

DEFAULT_MAX_TOKENS = 8192
"""The reply's token limit when `settings` has no "max_tokens" (the Messages API needs one)."""

_KINDS = ErrorKinds(status=anthropic.APIStatusError, timeout=anthropic.APITimeoutError,
                    connection=anthropic.APIConnectionError)
_REMEMBERED_THINKING = 64


class AnthropicModel:
    """A Claude model behind the Anthropic Messages API, streamed.

    Args:
        model: the model name, such as "claude-sonnet-4-5".
        base_url: default `ANTHROPIC_BASE_URL`, else Anthropic's.
        api_key: default `ANTHROPIC_API_KEY` (or `ANTHROPIC_AUTH_TOKEN`).
        settings: request fields sent with every request, such as `{"max_tokens": 4000,
            "thinking": {"type": "enabled", "budget_tokens": 2000}}`; a request's own settings
            win. "max_tokens" defaults to 8192; the others go into the JSON body as given.
        timeout: seconds to wait for the server (connecting, and between streamed bytes).
        max_retries: how many times the SDK retries a request that failed with 408, 409, 429,
            5xx (529 overloaded too) or a connection error, with exponential backoff.
        client: an `anthropic.AsyncAnthropic` to use as it is (base_url, api_key, timeout and
            max_retries are then ignored).
        inputs: the images and files the server takes (`accepts`); default the Messages API's:
            JPEG/PNG/GIF/WebP images, PDFs and plain text, as data or by URL.

    With extended thinking, the thinking blocks of a reply that called tools are sent back
    with the tool results, signatures included, as the API requires. A missing key is reported
    when the model is first asked (code "no_api_key"), not at construction.
    """

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 settings: Mapping[str, Any] | None = None, timeout: float | None = 300.0,
                 max_retries: int = 2, client: anthropic.AsyncAnthropic | None = None,
                 inputs: InputKinds | None = None) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError(f"AnthropicModel needs a model name such as 'claude-sonnet-4-5', "
                             f"got {model!r}")
        if max_retries < 0:
            raise ValueError(f"AnthropicModel(max_retries={max_retries}): use 0 or more")
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.settings: dict[str, Any] = dict(settings or {})
        self.timeout = timeout
        self.max_retries = max_retries
        self.input_kinds = ANTHROPIC_INPUTS if inputs is None else inputs
        self._clients: LoopClient[anthropic.AsyncAnthropic] = LoopClient(self._make_client, client)
        self._thinking: dict[str, list[dict[str, Any]]] = {}  # first tool call id -> blocks

    @property
    def name(self) -> str:
        """`"anthropic:<model>"`."""
        return f"anthropic:{self.model}"

    def accepts(self, media_type: str, source: Source = "data") -> bool:
        """Whether this model takes an image or file of `media_type` from `source`."""
        return self.input_kinds.accepts(media_type, source)

    def __repr__(self) -> str:
        return f"AnthropicModel({self.model!r})"

    async def aclose(self) -> None:
        """Close the HTTP connections this model opened (a later request opens new ones)."""
        await self._clients.aclose()

    # -- one request -----------------------------------------------------------------------

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Send `request` and stream the reply: text, thinking, tool calls, then usage.

        Raises:
            ProviderError: no key is configured, or the server failed (see its `code`).
        """
        client = self._clients.get()
        settings = {**self.settings, **request.settings}
        max_tokens = int(settings.pop("max_tokens", DEFAULT_MAX_TOKENS))
        system, messages = to_anthropic_messages(request.messages, self._thinking)
        kwargs: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens,
                                  "messages": messages, "stream": True}
        if system:
            kwargs["system"] = system
        if request.tools:
            kwargs["tools"] = to_anthropic_tools(request.tools)
        if settings:
            kwargs["extra_body"] = plain(settings)
        reader = _EventReader(self.model)
        try:
            response = cast("anthropic.AsyncStream[RawMessageStreamEvent]",
                            await client.messages.create(**kwargs))
            async with response:
                async for event in response:
                    for piece in reader.read(event):
                        yield piece
        except anthropic.APIError as exc:
            raise describe_failure(exc, _KINDS, self._endpoint(client)) from exc
        for piece in reader.finish():
            yield piece
        self._remember_thinking(reader)

    # -- helpers ---------------------------------------------------------------------------

    def _make_client(self) -> anthropic.AsyncAnthropic:
        env_key = os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
        if not self.api_key and not env_key:
            raise ProviderError(
                f"no Anthropic API key for model {self.name!r}: set the ANTHROPIC_API_KEY "
                "environment variable, or pass AnthropicModel(..., api_key=...)",
                code="no_api_key")
        return anthropic.AsyncAnthropic(
            api_key=self.api_key or None,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
            # a plain client: the SDK's default one closes itself from __del__ on whatever
            # event loop runs then, which fails once the loop that opened it is closed
            http_client=anthropic.DefaultAsyncHttpxClient(),
        )

    def _endpoint(self, client: anthropic.AsyncAnthropic) -> Endpoint:
        return Endpoint(label="Anthropic", model=self.model,
                        base_url=str(client.base_url).rstrip("/"),
                        key_hint="check the ANTHROPIC_API_KEY environment variable or the "
                                 "api_key you passed",
                        max_retries=client.max_retries, timeout=self.timeout)

    def _remember_thinking(self, reader: _EventReader) -> None:
        if reader.thinking and reader.first_call_id is not None:
            self._thinking[reader.first_call_id] = reader.thinking
            while len(self._thinking) > _REMEMBERED_THINKING:
                del self._thinking[next(iter(self._thinking))]


class _EventReader:
    """Turns Messages API stream events into model chunks and keeps the usage and thinking."""

    def __init__(self, model: str) -> None:
        self._model = model
        self._tool_index: dict[int, int] = {}  # content block index -> our tool call index
        self._tool_input: dict[int, dict[str, Any]] = {}  # input given whole at block start
        self._thinking_block: dict[int, dict[str, Any]] = {}
        self.thinking: list[dict[str, Any]] = []
        self.first_call_id: str | None = None
        self._input_tokens = 0
        self._output_tokens = 0
        self._open_blocks: set[int] = set()  # content blocks started and not stopped
        self._stopped = False  # the message's end came (`message_stop`)

    def read(self, event: RawMessageStreamEvent) -> list[ModelChunk]:
        if isinstance(event, RawMessageStartEvent):
            self._input_tokens = _input_tokens(event.message.usage)
            self._output_tokens = event.message.usage.output_tokens
        elif isinstance(event, RawContentBlockStartEvent):
            self._open_blocks.add(event.index)
            return self._start(event)
        elif isinstance(event, RawContentBlockDeltaEvent):
            return self._delta(event)
        elif isinstance(event, RawContentBlockStopEvent):
            self._open_blocks.discard(event.index)
            return self._stop(event.index)
        elif isinstance(event, RawMessageStopEvent):
            self._stopped = True
        elif isinstance(event, RawMessageDeltaEvent):
            self._output_tokens = event.usage.output_tokens
            if event.usage.input_tokens is not None:  # cumulative when given
                self._input_tokens = _input_tokens(event.usage)
        return []

    def _start(self, event: RawContentBlockStartEvent) -> list[ModelChunk]:
        block = event.content_block
        if isinstance(block, TextBlock):
            return [TextChunk(block.text)] if block.text else []
        if isinstance(block, ToolUseBlock):
            index = len(self._tool_index)
            self._tool_index[event.index] = index
            if block.input:
                self._tool_input[event.index] = dict(block.input)
            if self.first_call_id is None:
                self.first_call_id = block.id
            return [ToolCallChunk(index, name=block.name, id=block.id)]
        if isinstance(block, ThinkingBlock):
            self._thinking_block[event.index] = {"type": "thinking", "thinking": block.thinking,
                                                 "signature": block.signature}
            return [ReasoningChunk(block.thinking)] if block.thinking else []
        if isinstance(block, RedactedThinkingBlock):
            self.thinking.append({"type": "redacted_thinking", "data": block.data})
        return []

    def _delta(self, event: RawContentBlockDeltaEvent) -> list[ModelChunk]:
        delta = event.delta
        if isinstance(delta, TextDelta):
            return [TextChunk(delta.text)] if delta.text else []
        if isinstance(delta, InputJSONDelta):
            index = self._tool_index.get(event.index)
            if index is None or not delta.partial_json:
                return []
            self._tool_input.pop(event.index, None)  # streamed: not sent again whole
            return [ToolCallChunk(index, arguments=delta.partial_json)]
        if isinstance(delta, ThinkingDelta):
            block = self._thinking_block.get(event.index)
            if block is not None:
                block["thinking"] += delta.thinking
            return [ReasoningChunk(delta.thinking)] if delta.thinking else []
        if isinstance(delta, SignatureDelta):
            block = self._thinking_block.get(event.index)
            if block is not None:
                block["signature"] += delta.signature
        return []

    def _stop(self, block_index: int) -> list[ModelChunk]:
        thinking = self._thinking_block.pop(block_index, None)
        if thinking is not None:
            self.thinking.append(thinking)
        given = self._tool_input.pop(block_index, None)
        if given:  # a server that sent the whole input at the block's start and no deltas
            return [ToolCallChunk(self._tool_index[block_index],
                                  arguments=json.dumps(given, ensure_ascii=False))]
        return []

    def finish(self) -> list[ModelChunk]:
        """The usage, once the stream ended. A stream that ended in the middle of a content
        block, with no `message_stop`, was cut: a connection a proxy closed cleanly."""
        if self._open_blocks and not self._stopped:
            raise ProviderError(f"the stream of model {self._model!r} ended in the middle of "
                                "its reply (no message_stop): the connection was cut; try again",
                                code="connection")
        return [UsageChunk(priced_usage(self._model, self._input_tokens, self._output_tokens))]


def _input_tokens(usage: Any) -> int:
    """The input tokens of a message's usage, those read from or written to the cache too."""
    return int(usage.input_tokens + (usage.cache_creation_input_tokens or 0)
               + (usage.cache_read_input_tokens or 0))


def to_anthropic_messages(
    messages: Sequence[Message], thinking: Mapping[str, list[dict[str, Any]]] | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """(system, messages) in the Messages API format.

    System messages join into the `system` parameter. Tool results become `tool_result` blocks
    (with `is_error`) in a user message; consecutive user turns merge into one message, as the
    API wants parallel results together. Images become `image` blocks, files `document` blocks
    (data: URLs as base64; plain text as a text source).
    `thinking` maps an assistant reply's first tool call id to the thinking blocks to send
    back before it.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        if message.role == "system":
            if message.content:
                system.append(message.content)
        elif message.role == "user":
            add("user", anthropic_blocks(message))
        elif message.role == "assistant":
            blocks: list[dict[str, Any]] = []
            if message.tool_calls and thinking:
                blocks.extend(thinking.get(message.tool_calls[0].id, ()))
            if message.content:
                blocks.append({"type": "text", "text": message.content})
            blocks.extend({"type": "tool_use", "id": call.id, "name": call.name,
                           "input": plain(call.arguments)} for call in message.tool_calls)
            add("assistant", blocks)
        else:
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.call_id}
            if message.content:
                result["content"] = message.content
            if message.is_error:
                result["is_error"] = True
            add("user", [result])
    return "\n\n".join(system), out


def to_anthropic_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """`tools` as Messages API tool definitions."""
    return [
        {"name": spec.name, "description": spec.description, "input_schema": plain(spec.parameters)}
        for spec in tools
    ]
