"""What a server writes of a run's frequent events straight from the runtime events, as JSON
text (`Translation` keeps the same state and gives the same bytes through ag_ui's models: the
frames property tests hold them equal).

A short run's few structural events (its start, its steps, text messages and tool calls opened
and closed, its tool results, state changes and end) cost ~3-6 µs each through an ag_ui model
and `encode_event`, ~0.5-1.5 µs written here: 10% fewer instructions a concurrency run
(bench/run_instructions.py). Whatever only pydantic writes the same way (an integer past 64
bits), or what needs more than one event here (a call whose arguments were not streamed, a
connect, an interrupt), is left to `Translation.on`: each method returns None for it, before it
changes anything.
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any, cast

import orjson
from ag_ui.core import PROTOCOL_VERSION, Message

from pyox_agents.adapters.ag_ui._kept_messages import KeptMessage, message_id
from pyox_agents.adapters.ag_ui._messages import as_json, reasoning_id, result_text
from pyox_agents.adapters.ag_ui._open import OpenParts, now_ms
from pyox_agents.events import (
    ReasoningDelta,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
)
from pyox_agents.state.frozen import thaw

__all__ = ["DirectWrites", "step_name"]


def _json(value: Any) -> str:
    """`value` as orjson writes it (raises `orjson.JSONEncodeError` where pydantic must)."""
    return orjson.dumps(value).decode()


def step_name(index: int) -> str:
    """The `stepName` of step `index`."""
    return f"step-{index}"


class DirectWrites(OpenParts):
    """The JSON of a stream's frequent events, written from the runtime events; the state they
    read and keep is the translation's (`Translation` sets it)."""

    thread_id: str
    run_id: str
    parent_run_id: str | None
    resume: bool
    messages: list[Message | KeptMessage]
    v1: bool
    plain_messages: bool
    restore: bool
    started: bool
    ended: bool
    _open_text: str | None
    _id_json: str

    def delta_json(self, event: RuntimeEvent) -> str | None:
        """The JSON of the `TEXT_MESSAGE_CONTENT` (`REASONING_MESSAGE_CONTENT`, `TOOL_CALL_ARGS`)
        for `event` when it is a non-empty text (reasoning, arguments) delta of this stream's
        own run into a message (call) already open, written directly (the same JSON as `on`'s
        event, encoded, and kept as `on` keeps it); None for any other event, which `on`
        translates."""
        if type(event) is TextDelta:
            return None if event.run_id is not None else self.text_json(event.message_id,
                                                                        event.delta)
        if type(event) is ReasoningDelta:
            return self._reasoning_json(event)
        if type(event) is ToolCallArgsDelta:
            return self._arguments_json(event)
        return None

    def direct_json(self, event: RuntimeEvent) -> str | None:
        """`delta_json`, and the same for the other frequent events of this stream's own run
        (a step, text message or tool call opened or closed, a tool result, a state change),
        written directly and kept as `on` keeps it: "" when it writes nothing (a step already
        open). None for any other event (a subagent's, an id `encode_basestring` may not write
        as pydantic would, a value orjson refuses), which `on` translates."""
        kind = type(event)
        if kind is TextDelta:  # most events: checked first
            delta = cast("TextDelta", event)
            return None if delta.run_id is not None else self.text_json(delta.message_id,
                                                                        delta.delta)
        if kind is StepStarted or kind is StepFinished:
            return self._step_json(cast("StepStarted | StepFinished", event))
        if kind is TextStarted or kind is TextEnded:
            return self._text_part_json(cast("TextStarted | TextEnded", event))
        if kind is ToolCallStarted or kind is ToolCallEnded:
            return self._call_json(cast("ToolCallStarted | ToolCallEnded", event))
        if kind is ToolResult:
            return self._result_json(cast("ToolResult", event))
        if kind is StateChanged:
            return self._state_delta_json(cast("StateChanged", event))
        return self.delta_json(event)

    def ends_json(self, event: RunStarted | RunFinished) -> list[str] | None:
        """The JSON of what `on` writes for the run's start (`RUN_STARTED`, `STATE_SNAPSHOT`)
        or for its end on its own with nothing left open (`MESSAGES_SNAPSHOT` of plain kept
        messages, `RUN_FINISHED`), written directly and kept as `on` keeps it; None where `on`
        must say it (a connect or resume, something to close, an interrupt or cancel, a value
        orjson refuses)."""
        if self.ended or (type(event) is RunStarted and self.started):
            return []
        if type(event) is RunStarted:
            return self._start_json(event)
        return self._finished_json(cast("RunFinished", event))

    def _start_json(self, event: RunStarted) -> list[str] | None:
        if self.restore or self.resume:
            return None
        try:
            thread_id, run_id = _json(self.thread_id), _json(self.run_id)
            parent = None if self.parent_run_id is None else _json(self.parent_run_id)
            snapshot = _json(thaw(event.state))
        except orjson.JSONEncodeError:
            return None
        self.started = True
        self._open_text = None
        now = now_ms()
        start = f'{{"type":"RUN_STARTED","timestamp":{now},"threadId":{thread_id},"runId":{run_id}'
        if self.v1:
            start += f',"protocolVersion":"{PROTOCOL_VERSION}"'
        if parent is not None:
            start += f',"parentRunId":{parent}'
        return [start + "}", f'{{"type":"STATE_SNAPSHOT","timestamp":{now},"snapshot":{snapshot}}}']

    def _finished_json(self, event: RunFinished) -> list[str] | None:
        parts = self.parts[None]
        if not self.started or event.outcome != "success" or self.subagents or parts.texts \
                or parts.reasoning or parts.calls or parts.steps:
            return None
        try:
            written = []
            if self.drafts or not self.restore:
                messages = self._snapshot()
                if any(type(message) is not KeptMessage for message in messages):
                    return None  # a message only pydantic writes
                written.append(_json(messages))
            outcome = '{"type":"success"}'
            if self.v1 and event.pending_call_ids:
                outcome = ('{"type":"success","pendingToolCallIds":'
                           f'{_json(list(event.pending_call_ids))}}}')
            result = "" if event.answer is None else f',"result":{_json(as_json(event.answer))}'
            thread_id, run_id = _json(self.thread_id), _json(self.run_id)
        except orjson.JSONEncodeError:
            return None
        usage = event.usage
        spent = ""
        if usage.requests:
            spent = (f',"usage":[{{"inputTokens":{usage.input_tokens},"outputTokens":'
                     f'{usage.output_tokens},"totalTokens":'
                     f'{usage.input_tokens + usage.output_tokens}}}]')
        self.ended = True
        self._open_text = None
        now = now_ms()
        out = [f'{{"type":"MESSAGES_SNAPSHOT","timestamp":{now},"messages":{messages}}}'
               for messages in written]
        out.append(f'{{"type":"RUN_FINISHED","timestamp":{now},"threadId":{thread_id},"runId":'
                   f'{run_id}{result},"outcome":{outcome}{spent}}}')
        return out

    def _call_json(self, event: ToolCallStarted | ToolCallEnded) -> str | None:
        """A tool call of this stream's own run opened, or closed once its arguments were
        streamed (else `on` writes them first)."""
        call_id = event.call_id
        if event.run_id is not None or not self.started or self.ended or not call_id.isascii():
            return None
        calls = self.parts[None].calls
        if type(event) is ToolCallEnded:
            if call_id not in calls:
                return ""
            if not self.drafts[self.call_message[call_id]].calls[call_id]:
                return None  # nothing streamed: `on` writes the arguments before the end
            self._open_text = None
            calls.remove(call_id)
            return (f'{{"type":"TOOL_CALL_END","timestamp":{now_ms()},"toolCallId":'
                    f'{encode_basestring(call_id)}}}')
        started = cast("ToolCallStarted", event)
        name, message_id = started.name, started.message_id
        if not (name.isascii() and message_id.isascii()):
            return None
        self._open_text = None
        if call_id in calls:
            return ""
        self._open_call(self.parts[None], call_id, name, message_id, None)
        return (f'{{"type":"TOOL_CALL_START","timestamp":{now_ms()},"toolCallId":'
                f'{encode_basestring(call_id)},"toolCallName":{encode_basestring(name)},'
                f'"parentMessageId":{encode_basestring(message_id)}}}')

    def _result_json(self, event: ToolResult) -> str | None:
        """A tool result of this stream's own run, its call already closed (else `on` closes
        it first)."""
        call_id = event.call_id
        if event.run_id is not None or not self.started or self.ended or not call_id.isascii() \
                or call_id in self.parts[None].calls:
            return None
        error = event.error
        content = error if error is not None else result_text(event.result)
        try:
            written = orjson.dumps(content).decode()  # (a lone surrogate: `on`'s way)
        except orjson.JSONEncodeError:
            return None
        self._open_text = None
        message_id = self._result_draft(call_id, content, error, None)
        return (f'{{"type":"TOOL_CALL_RESULT","timestamp":{now_ms()},"messageId":'
                f'{encode_basestring(message_id)},"toolCallId":{encode_basestring(call_id)},'
                f'"content":{written},"role":"tool"}}')

    def _state_delta_json(self, event: StateChanged) -> str | None:
        """A state change of this stream's own run: its RFC 6902 operations as they are."""
        if event.run_id is not None or not self.started or self.ended:
            return None
        try:
            written = orjson.dumps([thaw(op) for op in event.delta]).decode()
        except orjson.JSONEncodeError:  # (an integer past 64 bits: `on`'s way)
            return None
        self._open_text = None
        return f'{{"type":"STATE_DELTA","timestamp":{now_ms()},"delta":{written}}}'

    def _step_json(self, event: StepStarted | StepFinished) -> str | None:
        if event.run_id is not None or not self.started or self.ended:
            return None
        self._open_text = None
        name = step_name(event.index)
        steps = self.parts[None].steps
        if type(event) is StepStarted:
            if name in steps:
                return ""
            steps.append(name)
            kind = "STEP_STARTED"
        else:
            if name not in steps:
                return ""
            steps.remove(name)
            kind = "STEP_FINISHED"
        return f'{{"type":"{kind}","timestamp":{now_ms()},"stepName":"{name}"}}'

    def _text_part_json(self, event: TextStarted | TextEnded) -> str | None:
        message_id = event.message_id
        if event.run_id is not None or not self.started or self.ended \
                or not message_id.isascii():
            return None
        self._open_text = None
        texts = self.parts[None].texts
        if type(event) is TextStarted:
            if message_id in texts:
                return ""
            texts.append(message_id)
            self._draft(message_id, "assistant", None)
            return (f'{{"type":"TEXT_MESSAGE_START","timestamp":{now_ms()},"messageId":'
                    f'{encode_basestring(message_id)},"role":"assistant"}}')
        if message_id not in texts:
            return ""
        text = cast("TextEnded", event).text
        draft = self.drafts.get(message_id)
        if draft is not None and text:
            draft.text.adopt(text)  # all its deltas: the reply's own string
        texts.remove(message_id)
        return (f'{{"type":"TEXT_MESSAGE_END","timestamp":{now_ms()},"messageId":'
                f'{encode_basestring(message_id)}}}')

    def _arguments_json(self, event: ToolCallArgsDelta) -> str | None:
        """`delta_json` of a piece of a tool call's arguments (a model streams them a few
        characters at a time: a `predict_state` argument shown as it comes), kept in the call's
        draft as `on` keeps it."""
        call_id, delta = event.call_id, event.delta
        if event.run_id is not None or not delta or call_id not in self.parts[None].calls:
            return None
        self.drafts[self.call_message[call_id]].calls[call_id].add(delta)
        return (f'{{"type":"TOOL_CALL_ARGS","timestamp":{now_ms()},"toolCallId":'
                f'{encode_basestring(call_id)},"delta":{encode_basestring(delta)}}}')

    def _reasoning_json(self, event: ReasoningDelta) -> str | None:
        """`delta_json` of a reasoning delta: a reasoning model streams many of these before
        its answer, each one event (no pydantic model or field walk for it)."""
        if event.run_id is not None or not event.delta:
            return None
        rid = reasoning_id(event.message_id)
        if rid not in self.parts[None].reasoning:  # `on` opens it first (a stream started,
            return None  # not ended: its end closes every part)
        return (f'{{"type":"REASONING_MESSAGE_CONTENT","timestamp":{now_ms()},"messageId":'
                f'{encode_basestring(rid)},"delta":{encode_basestring(event.delta)}}}')

    def text_json(self, message_id: str, delta: str) -> str | None:
        """`delta_json` of a text delta of this stream's own run, given as its message id
        and text (no event made for it)."""
        if message_id is not self._open_text:  # a message's deltas come together: check once
            if self.ended or not self.started or message_id not in self.parts[None].texts:
                return None
            self._open_text, self._id_json = message_id, encode_basestring(message_id)
        if not delta:
            return None
        return (f'{{"type":"TEXT_MESSAGE_CONTENT","timestamp":{now_ms()},"messageId":'
                f'{self._id_json},"delta":{encode_basestring(delta)}}}')

    def _snapshot(self) -> list[Message | KeptMessage]:
        """The client's messages (their ids kept), then this run's, with the streamed ids."""
        mine: dict[str, Message | KeptMessage] = {
            ident: draft.to_kept() if self.plain_messages else draft.to_message()
            for ident, draft in self.drafts.items()}
        messages = [mine.pop(message_id(m), m) for m in self.messages]
        return [*messages, *mine.values()]
