"""Models that stand in for an LLM: `ScriptedModel` (a fixed script) and `FunctionModel`.

Both stream their replies the way a real provider does: text in word-sized deltas, each tool
call's JSON arguments in a few pieces, then usage. Use them in tests and offline examples.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TypeAlias

from pyox_agents.models._inputs import ANY_INPUT, InputKinds, Source
from pyox_agents.models._streaming import stream_reply
from pyox_agents.models.base import ModelChunk, ModelError, ModelRequest, ToolSpec
from pyox_agents.state.messages import Message, Reply, ToolCall

ReplySpec: TypeAlias = str | ToolCall | Reply | Sequence[str | ToolCall]
"""One scripted reply: text, a tool call, several of those (parallel calls), or a whole Reply."""

class ScriptExhausted(ModelError):
    """A `ScriptedModel` was asked for more replies than its script has."""

    code = "script_exhausted"


def to_reply(spec: ReplySpec) -> Reply:
    """The `Reply` a script element stands for."""
    if isinstance(spec, Reply):
        return spec
    if isinstance(spec, str):
        return Reply(text=spec)
    if isinstance(spec, ToolCall):
        return Reply(tool_calls=(spec,))
    if isinstance(spec, Sequence):
        texts: list[str] = []
        calls: list[ToolCall] = []
        for item in spec:
            if isinstance(item, str):
                texts.append(item)
            elif isinstance(item, ToolCall):
                calls.append(item)
            else:
                raise TypeError(f"a scripted reply holds str and ToolCall, got {item!r}")
        return Reply(text="".join(texts), tool_calls=tuple(calls))
    raise TypeError(
        f"a scripted reply is a str, a ToolCall, a list of those or a Reply, got {spec!r}")


class ScriptedModel:
    """A model that replies from a script, one element per request, in order.

    Each element is a `str` (text), a `ToolCall(name, arguments)`, a list of those (text and
    parallel tool calls in one reply) or a `Reply`. A request past the end of the script fails the
    run with a `ScriptExhausted` error that says how many replies the script had.

    It takes every image and file (`inputs=ANY_INPUT`); give it the `InputKinds` of a real
    model to stand in for one that takes fewer.

    Example:
        ScriptedModel([ToolCall("add_todo", {"text": "Book the flight"}), "Done."])
    """

    def __init__(self, script: Sequence[ReplySpec], *, inputs: InputKinds = ANY_INPUT) -> None:
        self.input_kinds = inputs
        if isinstance(script, str | ToolCall | Reply):
            raise TypeError("ScriptedModel takes a list of replies, e.g. ScriptedModel(['Hi'])")
        self._replies = [to_reply(spec) for spec in script]
        self._next = 0
        self.requests: list[ModelRequest] = []
        """Every request this model received, in order: what the model saw."""

    @property
    def name(self) -> str:
        """Always "scripted"."""
        return "scripted"

    def accepts(self, media_type: str, source: Source = "data") -> bool:
        """Whether this model takes an image or file of `media_type` (per `input_kinds`)."""
        return self.input_kinds.accepts(media_type, source)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream the next scripted reply."""
        self.requests.append(request)
        if self._next >= len(self._replies):
            raise ScriptExhausted(
                f"ScriptedModel ran out of replies: the script has {len(self._replies)} and the "
                f"model was asked for reply {self._next + 1}; add replies to the script")
        reply = self._replies[self._next]
        self._next += 1
        async for chunk in stream_reply(reply, request):
            yield chunk


ReplyFunction: TypeAlias = Callable[
    [list[Message], list[ToolSpec]], ReplySpec | Awaitable[ReplySpec]
]


class FunctionModel:
    """A model whose replies come from `fn(messages, tools)`, sync or async.

    `messages` is the list the model would see (each a `Message` with `.role` and `.content`);
    `tools` the tools it may call. `fn` returns what a `ScriptedModel` script element holds.
    It takes the images and files `inputs` says: every one by default.
    """

    def __init__(self, fn: ReplyFunction, *, name: str = "function",
                 inputs: InputKinds = ANY_INPUT) -> None:
        self.input_kinds = inputs
        self._fn = fn
        self._name = name

    @property
    def name(self) -> str:
        """The name given at construction, "function" by default."""
        return self._name

    def accepts(self, media_type: str, source: Source = "data") -> bool:
        """Whether this model takes an image or file of `media_type` (per `input_kinds`)."""
        return self.input_kinds.accepts(media_type, source)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Call the function and stream its reply."""
        spec = self._fn(list(request.messages), list(request.tools))
        if inspect.isawaitable(spec):
            spec = await spec
        async for chunk in stream_reply(to_reply(spec), request):
            yield chunk
