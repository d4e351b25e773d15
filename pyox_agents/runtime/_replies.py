"""Assembling a model's streamed chunks into runtime events and one `Reply`.

Text and reasoning open when their first delta arrives and close when something else starts;
tool calls open with their name and close when the next call starts or the reply ends, so each
call is one START/ARGS.../END run, never interleaved with another.

A model's text, reasoning and tool arguments are text: lone surrogates in them (a provider that
escapes half a pair, a broken decoder) become U+FFFD here, before any event, store or client sees
them. Arguments nested past `MAX_DEPTH` are kept as their text only, so the call gets an error
result the model reads (`arguments_problem`) and the run goes on.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Callable, Mapping, Sequence

from pyox_agents.events import (
    CustomEvent,
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
from pyox_agents.state._depth import deeper_than
from pyox_agents.state._pieces import Pieces
from pyox_agents.state.frozen import MAX_DEPTH, freeze, lone_surrogate
from pyox_agents.state.history import HistoryEntry, ImportEntry, ModelReplyEntry, ToolResultEntry
from pyox_agents.state.messages import NO_USAGE, Reply, ToolCall, new_call_id

__all__ = [
    "PREDICT_STATE", "ReplyIds", "ReplyStream", "arguments_problem", "new_message_id",
    "reply_message_id", "used_call_ids", "valid_json", "valid_text",
]

PREDICT_STATE = "PredictState"
"""The name of the `CustomEvent` sent before the call of a tool with `predict_state`."""


def valid_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (pairs written as two halves join)."""
    if lone_surrogate(text) is None:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def arguments_problem(call: ToolCall) -> str:
    """What is wrong with the arguments of a call that kept only their text, for the model."""
    raw = call.raw_arguments or ""
    try:
        parsed = json.loads(raw)
    except RecursionError:
        parsed = None
    except ValueError:
        parsed = {}
    if parsed is None or (isinstance(parsed, dict) and deeper_than(parsed, MAX_DEPTH)):
        return (f"the arguments of {call.name!r} nest deeper than {MAX_DEPTH} levels, the "
                f"limit; send them as a flatter JSON object")
    return (f"the arguments of {call.name!r} are not a JSON object: {raw!r}; send them as a "
            f"JSON object")


def valid_json(value: object) -> object:
    """A parsed JSON value with lone surrogates in its strings and keys replaced by U+FFFD
    (`json.loads` gives one for an escaped half, `"\\ud800"`, which no UTF-8 stream carries)."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        return [valid_json(item) for item in value]
    if isinstance(value, dict):
        return {valid_text(key): valid_json(item) for key, item in value.items()}
    return value


def new_message_id() -> str:
    """A fresh id for an assistant message."""
    return "msg_" + secrets.token_hex(8)


def reply_message_id(scope: str, request: int) -> str:
    """The id of the assistant message answering the model request at index `request` of its
    thread's history, `scope` being the run that request belongs to (`ReplyIds`).

    Derived from what the thread keeps (the run, else the thread, and the request's place in
    the append-only history), so the id streamed while the reply arrives is the one the
    thread's messages give back later, on any process.
    """
    digest = hashlib.sha256(f"{scope}\n{request}".encode()).hexdigest()
    return "msg_" + digest[:16]


class ReplyIds:
    """The reply ids of one thread's history as it grows (`reply_message_id`): the scope of a
    request is the id of the latest run started before it (a `run_start` entry's content),
    else the thread's. Each entry is looked at once, going forward, not again for every reply
    (a run of thousands of steps, a transcript of a long thread)."""

    __slots__ = ("_history", "_scope", "_seen", "_thread_id")

    def __init__(self, thread_id: str) -> None:
        self._thread_id = thread_id
        self._history: Sequence[HistoryEntry] | None = None
        self._scope = thread_id
        self._seen = 0
        """The entries looked at: `_scope` is that of a request at this index."""

    def of(self, history: Sequence[HistoryEntry], request: int) -> str:
        """The id of the reply to the model request `history[request]`."""
        if history is not self._history or request < self._seen:  # (another, or earlier)
            self._history, self._scope, self._seen = history, self._thread_id, 0
        for index in range(self._seen, request):
            entry = history[index]
            if entry.kind == "run_start":
                self._scope = entry.content or self._thread_id
        self._seen = request
        return reply_message_id(self._scope, request)


def used_call_ids(history: Sequence[HistoryEntry]) -> set[str]:
    """The ids of every tool call `history` holds (asked for by a model, imported, answered)."""
    used: set[str] = set()
    for entry in history:
        if isinstance(entry, ModelReplyEntry):
            used.update(call.id for call in entry.content.tool_calls)
        elif isinstance(entry, ImportEntry):
            for message in entry.content:
                used.update(call.id for call in message.tool_calls)
                if message.call_id is not None:
                    used.add(message.call_id)
        elif isinstance(entry, ToolResultEntry):
            used.add(entry.call.id)
    return used


class ReplyStream:
    """One model reply as it arrives: `add` each chunk, then `finish` for the `Reply`.

    `predictions` maps a tool's name to its `predict_state` (state key -> argument name): a call
    of such a tool is preceded by `CustomEvent(PREDICT_STATE, [{state_key, tool,
    tool_argument}, ...])`, so a client can show the argument in its state as it streams.

    `taken` gives the call ids the conversation has used (`used_call_ids`; asked for at the
    reply's first call). A call whose id is one of them (a model that numbers each reply's
    calls from `call_0`, or gives two calls one id), or that has none, gets a fresh id before
    it is streamed: every record, result and client keys a call by its id. The reply adds its
    calls' ids to that set.
    """

    __slots__ = ("_calls", "_emit", "_open_calls", "_predictions", "_reasoning", "_reasoning_open",
                 "_taken", "_text", "_text_open", "_usage", "message_id")

    def __init__(self, emit: Callable[[list[RuntimeEvent]], None],
                 predictions: Mapping[str, Mapping[str, str]] | None = None,
                 message_id: str | None = None, *,
                 taken: Callable[[], set[str]]) -> None:
        self._emit = emit
        """Takes each event, in a list of its own (the run's emit: no call between per token)."""
        self._taken = taken
        self._predictions = predictions or {}
        self.message_id = message_id or new_message_id()
        self._text = Pieces()
        self._reasoning = Pieces()
        self._calls: dict[int, tuple[str, str, Pieces]] = {}
        """The reply's tool calls by index: name, id, and their arguments' text."""
        self._usage = NO_USAGE
        self._text_open = False
        self._reasoning_open = False
        self._open_calls: list[int] = []
        """The calls started and not ended, in order: each ends with the reply (a model may
        stream two calls' arguments in turns, by their index)."""

    def add(self, chunk: ModelChunk) -> None:
        """Take the next chunk, emitting the events it means."""
        if isinstance(chunk, TextChunk):  # most chunks: the checks inline, no call for them
            if self._reasoning_open:
                self._close_reasoning()
            if not self._text_open:
                self._text_open = True
                self._send(TextStarted(self.message_id))
            delta = chunk.delta
            if not delta.isascii():
                delta = valid_text(delta)
            self._text.add(delta)
            self._emit([TextDelta(self.message_id, delta)])
        elif isinstance(chunk, ReasoningChunk):
            if not self._reasoning_open:
                self._reasoning_open = True
                self._send(ReasoningStarted(self.message_id))
            delta = valid_text(chunk.delta)
            self._reasoning.add(delta)
            self._emit([ReasoningDelta(self.message_id, delta)])
        elif isinstance(chunk, ToolCallChunk):
            self._add_call(chunk)
        elif isinstance(chunk, UsageChunk):
            self._usage = self._usage + chunk.usage

    def _add_call(self, chunk: ToolCallChunk) -> None:
        index = chunk.index
        call = self._calls.get(index)
        if call is None:
            if chunk.name is None:
                raise ModelError(f"the model streamed arguments for tool call {index} before "
                                 "its name")
            self._close_reasoning()  # (its text stays open: a model may write more of it)
            taken = self._taken()
            call_id = valid_text(chunk.id) if chunk.id else chunk.id  # (stored, sent back)
            if not call_id or call_id in taken:
                call_id = new_call_id()
            taken.add(call_id)
            call = (valid_text(chunk.name), call_id, Pieces())
            self._calls[index] = call
            self._open_calls.append(index)
            self._predict(call[0])
            self._send(ToolCallStarted(call[1], call[0], self.message_id))
        if chunk.arguments:
            delta = valid_text(chunk.arguments)
            call[2].add(delta)
            self._emit([ToolCallArgsDelta(call[1], delta)])

    def _predict(self, name: str) -> None:
        predicted = self._predictions.get(name)
        if predicted:
            self._send(CustomEvent(PREDICT_STATE, freeze([
                {"state_key": key, "tool": name, "tool_argument": argument}
                for key, argument in predicted.items()]), transient=True))

    def finish(self) -> Reply:
        """Close what is open and return the whole reply."""
        self._close(cut=False)
        return Reply(text=self._text.text(), reasoning=self._reasoning.text(),
                     tool_calls=tuple(self._call(index) for index in sorted(self._calls)),
                     usage=self._usage)

    def cut(self) -> None:
        """Close what is open of a reply cut short (the run fails): a tool call whose arguments
        were cut off mid-JSON is not ended (nothing claims arguments that do not parse)."""
        self._close(cut=True)

    def _close(self, cut: bool) -> None:
        """Close the open reasoning, text and tool calls (sending their end events)."""
        self._close_reasoning()
        self._close_text()
        for index in self._open_calls:
            if not cut or self._call(index).raw_arguments is None:
                self._end_call(index)
        self._open_calls = []

    def text_so_far(self) -> Callable[[], str]:
        """A function giving the reply's text so far, and all of it once the reply ended: the
        one copy the reply keeps, for a reader that would otherwise keep its deltas."""
        return self._text.text

    def _call(self, index: int) -> ToolCall:
        name, call_id, arguments_text = self._calls[index]
        text = arguments_text.text() or "{}"
        try:
            arguments = json.loads(text)
        except (ValueError, RecursionError):
            arguments = None
        if not isinstance(arguments, dict) or deeper_than(arguments, MAX_DEPTH):
            return ToolCall(name, {}, id=call_id, raw_arguments=text)
        return ToolCall(name, valid_json(arguments), id=call_id)  # type: ignore[arg-type]

    def _send(self, event: RuntimeEvent) -> None:
        self._emit([event])

    def _end_call(self, index: int) -> None:
        call = self._call(index)
        self._send(ToolCallEnded(call.id, call.name, call.arguments))

    def _close_text(self) -> None:
        if self._text_open:
            self._text_open = False
            self._send(TextEnded(self.message_id, self._text.text()))

    def _close_reasoning(self) -> None:
        if self._reasoning_open:
            self._reasoning_open = False
            self._send(ReasoningEnded(self.message_id, self._reasoning.text()))
