"""Runtime events -> AI SDK UI message stream chunks (`ai` 5, 6 and 7).

One `ChunkWriter` per stream; `write(event)` gives the chunks an event means. The output is a
function of the chat and the events only (no clock, no random ids), so a run replayed from its
first event (a reloaded page resuming the stream) gives the same chunks again. What each major
is sent: _versions.py; the shared state's parts: _state_parts.py; a tool's live parts and the
message metadata: _live_parts.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from json.encoder import encode_basestring
from typing import Any, TypeAlias

from pyox_agents.adapters.ai_sdk._live_parts import finish_metadata, live_part, start_metadata
from pyox_agents.adapters.ai_sdk._request import Chat, assistant_message_id, check_sdk_version
from pyox_agents.adapters.ai_sdk._state_parts import StateParts
from pyox_agents.adapters.ai_sdk._versions import STOPPED, approval_request_part, finish_reason
from pyox_agents.events import (
    ApprovalRequested,
    CustomEvent,
    FileAttached,
    PreliminaryResult,
    Progress,
    ReasoningDelta,
    ReasoningEnded,
    ReasoningStarted,
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    SourceCited,
    StateChanged,
    StateSnapshots,
    StepFinished,
    StepStarted,
    SubagentStarted,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
)

__all__ = ["Chunk", "ChunkWriter"]

Chunk: TypeAlias = dict[str, Any]
"""One UI message stream chunk: a JSON object with a `type`."""


class ChunkWriter:
    """Translates one run's events, in order, to chunks for one chat and `ai` major.

    It keeps what is open (step, text, reasoning, tool inputs, calls without output) so that a
    run that fails or is stopped still closes every part before its `finish`.
    """

    def __init__(self, chat: Chat, sdk_version: int,
                 state_snapshots: StateSnapshots = "step") -> None:
        self.chat = chat
        self.version = check_sdk_version(sdk_version)
        self.started = False
        self.ended = False
        self._step_open = False
        self._texts: set[str] = set()
        self._reasonings: set[str] = set()
        self._inputs: dict[str, tuple[str, list[str]]] = {}  # call id -> (tool, argument text)
        self._awaiting: dict[str, bool] = {}  # call id -> nested; input given, no output yet
        self._invalid: set[str] = set()  # calls answered with tool-input-error
        self._call_runs: dict[str, str] = {}  # a subagent's call id -> its subagent's run id
        self._subagent_calls: dict[str, str] = {}  # a subagent's run id -> the call it runs in
        self._states = StateParts(state_snapshots, chat.state_seen)

    # -- one event -------------------------------------------------------------------------------

    def write(self, event: RuntimeEvent) -> list[Chunk]:
        """The chunks `event` means (often one, sometimes none)."""
        if self.ended:
            return []
        out: list[Chunk] = []
        if not self.started and not isinstance(event, RunStarted):
            out += self._start(None)  # a run that failed before it started still opens a message
        match event:
            case RunStarted(run_id=run_id, state=state, version=version):
                if not self.started:
                    out += self._start(run_id, start_metadata(event))
                out += self._states.opening(state, version)
            case StepStarted(run_id=None) if not self._step_open:
                self._step_open = True
                out.append({"type": "start-step"})
            case StepFinished(run_id=None) if self._step_open:
                self._step_open = False
                out += self._states.step_end()
                out.append({"type": "finish-step"})
            case TextStarted(message_id=mid, run_id=None):
                self._texts.add(mid)
                out.append({"type": "text-start", "id": mid})
            case TextDelta(message_id=mid, delta=delta, run_id=None) if mid in self._texts:
                out.append({"type": "text-delta", "id": mid, "delta": delta})
            case TextEnded(message_id=mid, run_id=None) if mid in self._texts:
                self._texts.discard(mid)
                out.append({"type": "text-end", "id": mid})
            case ReasoningStarted(message_id=mid, run_id=None):
                self._reasonings.add(mid)
                out.append({"type": "reasoning-start", "id": mid})
            case ReasoningDelta(message_id=mid, delta=delta, run_id=None) if (
                mid in self._reasonings
            ):
                out.append({"type": "reasoning-delta", "id": mid, "delta": delta})
            case ReasoningEnded(message_id=mid, run_id=None) if mid in self._reasonings:
                self._reasonings.discard(mid)
                out.append({"type": "reasoning-end", "id": mid})
            case ToolCallStarted(call_id=call_id, name=name, run_id=run_id):
                if run_id is not None:
                    self._call_runs[call_id] = run_id
                self._inputs[call_id] = (name, [])
                out.append({"type": "tool-input-start", "toolCallId": call_id, "toolName": name,
                            **_nested(run_id)})
            case ToolCallArgsDelta(call_id=call_id, delta=delta) if call_id in self._inputs:
                self._inputs[call_id][1].append(delta)
                out.append({"type": "tool-input-delta", "toolCallId": call_id,
                            "inputTextDelta": delta})
            case ToolCallEnded(call_id=call_id, name=name, arguments=arguments, run_id=run_id):
                out.append(self._input_done(call_id, name, arguments, run_id))
            case ToolResult():
                out += self._result(event)
            case StateChanged(delta=delta, state=state, version=version):
                out += self._states.changed(delta, state, version if self._states.version else 0)
            case CustomEvent() | Progress() | SourceCited() | FileAttached():
                out.append(live_part(event))
            case PreliminaryResult(call_id=call_id, result=result) if call_id in self._awaiting:
                out.append({"type": "tool-output-available", "toolCallId": call_id,
                            "output": result, "preliminary": True,
                            **_nested("nested" if self._awaiting[call_id] else None)})
            case ApprovalRequested(run_id=None):
                out += self._approval(event)
            case RunFinished():
                out += self._finish(event)
            case RunFailed():
                out += self._fail(event)
            case SubagentStarted(run_id=run_id, call_id=call_id):
                self._subagent_calls[run_id] = call_id  # its own calls are nested parts
            case _:  # a subagent's text, reasoning, steps and end: it is its parent's tool
                pass  # call, whose output is its answer
        return out

    def delta_json(self, event: RuntimeEvent) -> str | None:
        """The JSON of the one chunk `write` gives for `event` when it is a text or reasoning
        delta of the stream's own run into a part already open (`text-delta`,
        `reasoning-delta`) or a piece of an open call's arguments (`tool-input-delta`, kept as
        `write` keeps it), written directly; None for any other event, which `write` takes.
        Most of a stream: a reasoning model's thinking, arguments streamed as they come."""
        if type(event) is TextDelta:
            return None if event.run_id is not None else self.text_json(event.message_id,
                                                                        event.delta)
        if type(event) is ReasoningDelta and event.run_id is None \
                and event.message_id in self._reasonings:  # (open: started, not ended)
            return (f'{{"type":"reasoning-delta","id":{encode_basestring(event.message_id)},'
                    f'"delta":{encode_basestring(event.delta)}}}')
        if type(event) is ToolCallArgsDelta:  # a subagent's call's too, as `write` does
            call = self._inputs.get(event.call_id)
            if call is not None:
                call[1].append(event.delta)
                return (f'{{"type":"tool-input-delta","toolCallId":'
                        f'{encode_basestring(event.call_id)},'
                        f'"inputTextDelta":{encode_basestring(event.delta)}}}')
        return None

    def text_json(self, message_id: str, delta: str) -> str | None:
        """The JSON of the `text-delta` chunk that `write` gives for `TextDelta(message_id,
        delta)` of the stream's own run, written directly (no event, no chunk dict), when that
        is its one chunk: the text is open (so the stream has started, and not ended: its end
        closes every text). None otherwise (`write` then takes the event)."""
        if message_id not in self._texts:
            return None
        return (f'{{"type":"text-delta","id":{encode_basestring(message_id)},'
                f'"delta":{encode_basestring(delta)}}}')

    # -- parts -----------------------------------------------------------------------------------

    def _start(self, run_id: str | None, metadata: Mapping[str, Any] | None = None
               ) -> list[Chunk]:
        self.started = True
        message_id = self.chat.message_id
        if message_id is None and run_id is not None:  # from the run: a replay gives the same
            message_id = assistant_message_id(run_id, self.chat.answers)
        chunk: Chunk = {"type": "start"}
        if message_id:
            chunk["messageId"] = message_id
        if metadata:
            chunk["messageMetadata"] = dict(metadata)
        return [chunk]

    def _input_done(self, call_id: str, name: str, arguments: Mapping[str, Any],
                    run_id: str | None) -> Chunk:
        _, pieces = self._inputs.pop(call_id, (name, []))
        text = "".join(pieces)
        if text and not _is_json_object(text):
            self._invalid.add(call_id)
            return {"type": "tool-input-error", "toolCallId": call_id, "toolName": name,
                    "input": text, **_nested(run_id),
                    "errorText": f"the arguments of {name!r} are not a JSON object: {text!r}"}
        self._awaiting[call_id] = run_id is not None
        return {"type": "tool-input-available", "toolCallId": call_id, "toolName": name,
                "input": dict(arguments), **_nested(run_id)}

    def _result(self, event: ToolResult) -> list[Chunk]:
        call_id = event.call_id
        if call_id not in self._awaiting and self.chat.message_id is None:
            return []  # a call of an earlier message (declined when a message was typed over
            # its approval): this new message has no part for it, and the client would fail
        nested = self._awaiting.pop(call_id, event.run_id is not None)
        if call_id in self._invalid:
            self._invalid.discard(call_id)
            return []  # the part already shows the error (tool-input-error)
        extra = _nested("nested" if nested else None)
        if event.error is None:
            return [{"type": "tool-output-available", "toolCallId": call_id,
                     "output": event.result, **extra}]
        if call_id in self.chat.denied_calls and self.version >= 6:
            return [{"type": "tool-output-denied", "toolCallId": call_id}]
        return [{"type": "tool-output-error", "toolCallId": call_id, "errorText": event.error,
                 **extra}]

    def _waiting_on(self, call_id: str) -> list[str]:
        """`call_id`, then the calls of the subagents it runs in, innermost first: a subagent's
        request is theirs too, so the client sees each of them answered and continues."""
        chain = [call_id]
        while (run_id := self._call_runs.get(chain[-1])) in self._subagent_calls:
            chain.append(self._subagent_calls[run_id])
        return chain

    def _approval(self, event: ApprovalRequested) -> list[Chunk]:
        request = event.request
        waiting = self._waiting_on(request.call_id)
        # a new message asks about a call an earlier one streamed (a crash cut it, and the
        # person typed a message): the call's part comes first, the request names it
        elsewhere = self.chat.message_id is None and request.call_id not in self._awaiting
        for call_id in waiting:
            self._awaiting.pop(call_id, None)
        if self.version >= 6:
            extra = {"reason": request.prompt} if self.version >= 7 and request.prompt else {}
            part: list[Chunk] = []
            if elsewhere and waiting == [request.call_id]:
                part.append({"type": "tool-input-available", "toolCallId": request.call_id,
                             "toolName": request.tool, "input": dict(request.arguments)})
            return [*part, *({"type": "tool-approval-request", "approvalId": request.id,
                              "toolCallId": call_id, **extra} for call_id in waiting)]
        return [approval_request_part(request)]

    # -- the end ---------------------------------------------------------------------------------

    def _close(self, reason: str, *, calls: bool) -> list[Chunk]:
        """End every open part (and the step); with `calls`, calls without output get `reason`."""
        out: list[Chunk] = [{"type": "text-end", "id": i} for i in sorted(self._texts)]
        out += [{"type": "reasoning-end", "id": i} for i in sorted(self._reasonings)]
        self._texts.clear()
        self._reasonings.clear()
        for call_id, (name, pieces) in self._inputs.items():
            out.append({"type": "tool-input-error", "toolCallId": call_id, "toolName": name,
                        "input": "".join(pieces), "errorText": reason})
        self._inputs.clear()
        if calls:
            out += [{"type": "tool-output-error", "toolCallId": call_id, "errorText": reason}
                    for call_id in self._awaiting]
            self._awaiting.clear()
        if self._step_open:
            self._step_open = False
            out.append({"type": "finish-step"})
        return out

    def _finish(self, event: RunFinished) -> list[Chunk]:
        self.ended = True
        cancelled = event.outcome == "cancelled"
        out = self._close(f"cancelled: {STOPPED}", calls=cancelled)
        out += self._states.final(event.state)
        if cancelled:
            out.append({"type": "abort", "reason": STOPPED} if self.version >= 6
                       else {"type": "abort"})
        out.append({"type": "finish", "finishReason": finish_reason(event, self.version),
                    "messageMetadata": finish_metadata(event.usage)})
        return out

    def _fail(self, event: RunFailed) -> list[Chunk]:
        self.ended = True
        message = event.error.public_message
        out = self._close(f"the run failed: {message}", calls=True)
        out += self._states.final(self._states.state)
        out.append({"type": "data-run-error", "transient": True,
                    "data": {"code": event.error.code, "message": message}})
        out.append({"type": "error", "errorText": message})
        out.append({"type": "finish", "finishReason": "error"})
        return out


def _nested(run_id: str | None) -> dict[str, bool]:
    """Marks of a subagent's call: run by the backend, not a tool the client knows."""
    return {"providerExecuted": True, "dynamic": True} if run_id is not None else {}


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False
