"""`OpenAIModel`: OpenAI and every OpenAI-compatible server, through the Chat Completions API.

One provider serves OpenAI itself, Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter and
the like: they all speak `POST /chat/completions` with server-sent events. Needs the official SDK:
`pip install "pyox-agents[openai]"`.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from pyox_agents.models._inputs import InputKinds, Source
from pyox_agents.models._part_blocks import OPENAI_INPUTS, openai_parts
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
from pyox_agents.state.messages import Message, Usage

try:
    import openai
except ImportError as exc:  # pragma: no cover - exercised in a subprocess
    raise missing_extra("openai", "openai") from exc

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionChunk

__all__ = ["OLLAMA_BASE_URL", "OpenAIModel", "to_openai_messages", "to_openai_tools"]

OLLAMA_BASE_URL = "http://127.0.0.1:11434/v1"
"""Where `"ollama:<model>"` finds Ollama's OpenAI-compatible API."""

_OPENAI_URL = "https://api.openai.com/v1"
_KINDS = ErrorKinds(status=openai.APIStatusError, timeout=openai.APITimeoutError,
                    connection=openai.APIConnectionError)


class OpenAIModel:
    """A model behind the OpenAI Chat Completions API, streamed.

    Args:
        model: the model name the server knows, such as "gpt-5-mini" or "llama3.2".
        base_url: the API's base URL; default `OPENAI_BASE_URL`, else OpenAI's. For Ollama,
            "http://127.0.0.1:11434/v1"; for vLLM, "http://<host>:8000/v1".
        api_key: default `OPENAI_API_KEY`. Only OpenAI itself needs one: a server at another
            base URL is sent a placeholder when no key is configured.
        settings: request fields sent with every request (e.g. `{"temperature": 0,
            "reasoning_effort": "low", "max_completion_tokens": 2000}`); a request's own
            settings win. They go into the JSON body as given, so server-specific fields work.
        timeout: seconds to wait for the server (connecting, and between streamed bytes).
        max_retries: how many times the SDK retries a request that failed with 408, 409, 429,
            5xx or a connection error, with exponential backoff (and the server's Retry-After).
        provider: a short name for the server, used in `name` and in error messages.
        client: an `openai.AsyncOpenAI` to use as it is (base_url, api_key, timeout and
            max_retries are then ignored).
        inputs: the images and files the server takes (`accepts`); default what the Chat
            Completions API takes: images (data or URL), WAV/MP3 audio and PDFs (data). Pass
            `InputKinds({"image/*": ("data", "url")})` for a server that takes images only.

    A missing key is reported when the model is first asked (the run fails with code
    "no_api_key", naming the environment variable), not at construction.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        settings: Mapping[str, Any] | None = None,
        timeout: float | None = 300.0,
        max_retries: int = 2,
        provider: str = "openai",
        client: openai.AsyncOpenAI | None = None,
        inputs: InputKinds | None = None,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError(f"OpenAIModel needs a model name such as 'gpt-5-mini', got {model!r}")
        if max_retries < 0:
            raise ValueError(f"OpenAIModel(max_retries={max_retries}): use 0 or more")
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.settings: dict[str, Any] = dict(settings or {})
        self.timeout = timeout
        self.max_retries = max_retries
        self.provider = provider
        self.input_kinds = OPENAI_INPUTS if inputs is None else inputs
        self._clients: LoopClient[openai.AsyncOpenAI] = LoopClient(self._make_client, client)

    @property
    def name(self) -> str:
        """`"<provider>:<model>"`, such as "openai:gpt-5-mini" or "ollama:llama3.2"."""
        return f"{self.provider}:{self.model}"

    def accepts(self, media_type: str, source: Source = "data") -> bool:
        """Whether this model takes an image or file of `media_type` from `source` ("data" or
        "url"), per `input_kinds`."""
        return self.input_kinds.accepts(media_type, source)

    def __repr__(self) -> str:
        return f"OpenAIModel({self.model!r}, provider={self.provider!r})"

    async def aclose(self) -> None:
        """Close the HTTP connections this model opened (a later request opens new ones)."""
        await self._clients.aclose()

    # -- one request -----------------------------------------------------------------------

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Send `request` and stream the reply: text, reasoning, tool calls, then usage.

        Raises:
            ProviderError: no key is configured, or the server failed (see its `code`).
        """
        client = self._clients.get()
        kwargs: dict[str, Any] = {"model": self.model,
                                  "messages": to_openai_messages(request.messages), "stream": True,
                                  "stream_options": {"include_usage": True}}
        if request.tools:
            kwargs["tools"] = to_openai_tools(request.tools)
        settings = {**self.settings, **request.settings}
        if settings:
            kwargs["extra_body"] = plain(settings)
        try:
            response = cast("openai.AsyncStream[ChatCompletionChunk]",
                            await client.chat.completions.create(**kwargs))
            async with response:
                reader = _ChunkReader(self.model)
                async for chunk in response:
                    for piece in reader.read(chunk):
                        yield piece
                for piece in reader.finish():
                    yield piece
        except openai.APIError as exc:
            raise describe_failure(exc, _KINDS, self._endpoint(client)) from exc

    # -- helpers ---------------------------------------------------------------------------

    def _make_client(self) -> openai.AsyncOpenAI:
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = self.api_key or os.environ.get("OPENAI_API_KEY") or None
        if api_key is None:
            if base_url is None or base_url.rstrip("/") == _OPENAI_URL:
                raise ProviderError(
                    f"no OpenAI API key for model {self.name!r}: set the OPENAI_API_KEY "
                    "environment variable, or pass OpenAIModel(..., api_key=...)",
                    code="no_api_key")
            api_key = "not-needed"  # local servers (Ollama, vLLM, llama.cpp) ignore it
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
            # a plain client: the SDK's default one closes itself from __del__ on whatever
            # event loop runs then, which fails once the loop that opened it is closed
            http_client=openai.DefaultAsyncHttpxClient(),
        )

    def _endpoint(self, client: openai.AsyncOpenAI) -> Endpoint:
        base_url = str(client.base_url).rstrip("/")
        if self.provider == "ollama":
            label, hint = "Ollama", "Ollama needs no key: check the base URL"
        else:
            label = ("OpenAI" if self.provider == "openai" and base_url == _OPENAI_URL
                     else f"the OpenAI-compatible server ({self.provider})")
            hint = "check the OPENAI_API_KEY environment variable or the api_key you passed"
        return Endpoint(label=label, model=self.model, base_url=base_url, key_hint=hint,
                        max_retries=client.max_retries, timeout=self.timeout)


class _ChunkReader:
    """Turns Chat Completions chunks into model chunks, remembering which calls have started."""

    def __init__(self, model: str) -> None:
        self._model = model
        self._started: set[int] = set()
        self._next_index = 0
        self._usage: Usage | None = None
        self._arguments: dict[int, list[str]] = {}  # each call's arguments so far
        self._finished = False  # a choice said why it finished (`finish_reason`)

    def read(self, chunk: ChatCompletionChunk) -> list[ModelChunk]:
        pieces: list[ModelChunk] = []
        if chunk.usage is not None:
            self._usage = priced_usage(self._model, chunk.usage.prompt_tokens or 0,
                                       chunk.usage.completion_tokens or 0)
        for choice in chunk.choices[:1]:
            if choice.finish_reason is not None:
                self._finished = True
            delta = choice.delta
            # OpenAI-compatible servers put reasoning in `reasoning_content` (DeepSeek, vLLM,
            # llama.cpp) or `reasoning` (Ollama, OpenRouter); OpenAI itself does not stream it.
            reasoning = (getattr(delta, "reasoning_content", None)
                         or getattr(delta, "reasoning", None))
            if isinstance(reasoning, str) and reasoning:
                pieces.append(ReasoningChunk(reasoning))
            if delta.content:
                pieces.append(TextChunk(delta.content))
            if delta.refusal:
                pieces.append(TextChunk(delta.refusal))
            for call in delta.tool_calls or ():
                pieces.extend(self._call_pieces(call))
        return pieces

    def _call_pieces(self, call: Any) -> list[ModelChunk]:
        index = call.index if isinstance(call.index, int) else self._next_index
        self._next_index = max(self._next_index, index + 1)
        function = call.function
        name = function.name if function is not None else None
        arguments = (function.arguments if function is not None else None) or ""
        self._arguments.setdefault(index, []).append(arguments)
        if index in self._started:
            return [ToolCallChunk(index, arguments=arguments)] if arguments else []
        if not name:  # a name that comes later: its arguments wait in `_arguments` until then
            return []
        self._started.add(index)
        return [ToolCallChunk(index, arguments="".join(self._arguments[index]), name=name,
                              id=call.id or None)]

    def finish(self) -> list[ModelChunk]:
        """The usage, once the stream ended. A stream that ended with no `finish_reason` in the
        middle of a call's arguments (JSON that does not parse) was cut: a connection a proxy
        closed cleanly. (Only then: some compatible servers send no `finish_reason`.)"""
        if not self._finished and any(_cut(pieces) for pieces in self._arguments.values()):
            raise ProviderError(f"the stream of model {self._model!r} ended in the middle of a "
                                "tool call's arguments, before the model finished (no "
                                "finish_reason): the connection was cut; try again",
                                code="connection")
        # A server that ignores stream_options sends no usage: still count the request.
        return [UsageChunk(self._usage or Usage(requests=1))]


def _cut(pieces: list[str]) -> bool:
    """Whether a call's arguments so far are JSON cut short (nothing, or an object, is not)."""
    text = "".join(pieces).strip()
    if not text:
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return True
    return False


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """`messages` in the Chat Completions format.

    System messages stay system messages; images become `image_url` parts, files `input_audio`
    (WAV, MP3) or `file` parts (PDF, as data); an assistant's tool
    calls become `tool_calls` (arguments that were not a JSON object are sent as `{}`); a tool
    result becomes a `tool` message answering its `tool_call_id` (an error starts "Error: ").
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            out.append({"role": "system", "content": message.content})
        elif message.role == "user":
            content = openai_parts(message) if message.images or message.files else message.content
            out.append({"role": "user", "content": content})
        elif message.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": message.content or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {"id": call.id, "type": "function", "function": {
                        "name": call.name,
                        "arguments": json.dumps(plain(call.arguments), ensure_ascii=False)}}
                    for call in message.tool_calls
                ]
            out.append(entry)
        else:
            content = f"Error: {message.content}" if message.is_error else message.content
            out.append({"role": "tool", "tool_call_id": message.call_id, "content": content})
    return out


def to_openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """`tools` as Chat Completions function tools."""
    return [{"type": "function", "function": {"name": spec.name, "description": spec.description,
                                              "parameters": plain(spec.parameters)}}
            for spec in tools]
