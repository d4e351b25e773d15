"""Runtime events -> AG-UI 1.0 events (`ag_ui.core`), one case per runtime event.

A client that declares no `protocolVersion` >= 1.0 (the 0.0.x one CopilotKit bundles) gets the
same stream without the 1.0-only fields, which its strict schemas refuse (`declares_1_0`).

`translate` keeps what it opened (text, reasoning, tool calls, steps, subagents), so that every
stream has exactly one terminal event with nothing open before it, even when the run is cut short.
It also keeps this run's messages, with the ids it streamed, for the `MESSAGES_SNAPSHOT` that
precedes `RUN_FINISHED`: the client merges that snapshot by id, so its ids are the streamed ones.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    Interrupt,
    Message,
    MessagesSnapshotEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentFinishedSuccessOutcome,
    SubagentStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from pyox_agents.adapters._batches import flattened, one_each
from pyox_agents.adapters._run_errors import INTERNAL_ERROR_MESSAGE, public_message
from pyox_agents.adapters.ag_ui._messages import (
    MessageDraft,
    as_json,
    reasoning_id,
    result_id,
    result_text,
)
from pyox_agents.events import (
    ApprovalRequested,
    ReasoningDelta,
    ReasoningEnded,
    ReasoningStarted,
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    StepFinished,
    StepStarted,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
)
from pyox_agents.state.frozen import thaw
from pyox_agents.state.run import AgentError, ApprovalRequest

__all__ = [
    "APPROVAL_SCHEMA",
    "INTERNAL_ERROR_MESSAGE",
    "declares_1_0",
    "interrupt_reason",
    "reasoning_id",
    "result_id",
    "step_name",
    "translate",
]

_log = logging.getLogger(__name__)

APPROVAL_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "arguments": {"type": "object"}},
    "required": ["approved"],
}
"""The `responseSchema` of an approval interrupt: yes/no, and optionally edited arguments."""

def interrupt_reason(request: ApprovalRequest) -> str:
    """"input" for a question a tool asked (`ctx.ask_person` with a schema), else "approval".

    An `ApprovalRequest` does not say which of the two it is; a schema is the only sign, so an
    `ask_person` without a schema is presented as a yes/no approval.
    """
    return "input" if request.schema is not None else "approval"


def declares_1_0(run_input: RunAgentInput) -> bool:
    """Whether the client declared AG-UI 1.0 or later (`protocolVersion` in its `RunAgentInput`).

    A 1.0 client sends `protocolVersion`; a 0.0.x one (`@ag-ui/client` 0.0.59, which CopilotKit
    1.74 bundles) sends none and parses every event with strict schemas that refuse the 1.0-only
    fields: such a client gets no `protocolVersion` on `RUN_STARTED`, a plain success outcome for
    a run that ends on its own tools (it finds the calls without results itself), and a bare
    `RUN_FINISHED` for a cancelled run.
    """
    major = (run_input.protocol_version or "").strip().split(".")[0]
    return major.isdigit() and int(major) >= 1


def step_name(index: int) -> str:
    """The `stepName` of step `index`."""
    return f"step-{index}"


def _now() -> int:
    return time.time_ns() // 1_000_000


@dataclass
class _Parts:
    """What one run (the stream's own, or a subagent's) has open."""

    texts: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)


class _Translation:
    """The state of one stream's translation: what is open, and this run's messages."""

    def __init__(self, run_input: RunAgentInput) -> None:
        self.input = run_input
        self.v1 = declares_1_0(run_input)
        """The client reads AG-UI 1.0: it gets the 1.0-only fields."""
        self.started = False
        self.ended = False
        self.parts: dict[str | None, _Parts] = {None: _Parts()}
        self.subagents: dict[str, str | None] = {}
        """The active subagent runs, in start order, each with its parent (None: this run)."""
        self.drafts: dict[str, MessageDraft] = {}
        self.call_message: dict[str, str] = {}
        self.call_owner: dict[str, str | None] = {}
        self.request: ApprovalRequested | None = None

    # -- one case per runtime event ------------------------------------------------------------

    def on(self, event: RuntimeEvent) -> Iterator[BaseEvent]:
        """The AG-UI events for one runtime event."""
        if self.ended:
            return
        if not self.started:
            yield from self._start(event.state if isinstance(event, RunStarted) else None,
                                   announce=isinstance(event, RunStarted))
            if isinstance(event, RunStarted):
                return
        match event:  # the deltas first: they are most of a stream
            case TextDelta(message_id=message_id, delta=delta, run_id=owner):
                if message_id not in self._parts(owner).texts:
                    yield from self._text_started(message_id, owner)
                if delta:
                    self._draft(message_id, "assistant", owner).text.append(delta)
                    yield TextMessageContentEvent(message_id=message_id, delta=delta,
                                                  **self._attributed(owner))
            case ToolCallArgsDelta(call_id=call_id, delta=delta, run_id=owner):
                if call_id in self._parts(owner).calls and delta:
                    self.drafts[self.call_message[call_id]].calls[call_id].append(delta)
                    yield ToolCallArgsEvent(tool_call_id=call_id, delta=delta,
                                            **self._attributed(owner))
            case RunStarted():
                return  # only the stream's own run starts with RunStarted; a repeat means nothing
            case StepStarted(index=index, run_id=owner):
                yield from self._step_started(step_name(index), owner)
            case StepFinished(index=index, run_id=owner):
                name = step_name(index)
                if name in self._parts(owner).steps:
                    self._parts(owner).steps.remove(name)
                    yield StepFinishedEvent(step_name=name, **self._attributed(owner))
            case TextStarted(message_id=message_id, run_id=owner):
                yield from self._text_started(message_id, owner)
            case TextEnded(message_id=message_id, run_id=owner):
                yield from self._text_ended(message_id, owner)
            case ReasoningStarted(message_id=message_id, run_id=owner):
                yield from self._reasoning_started(reasoning_id(message_id), owner)
            case ReasoningDelta(message_id=message_id, delta=delta, run_id=owner):
                rid = reasoning_id(message_id)
                yield from self._reasoning_started(rid, owner)
                if delta:
                    yield ReasoningMessageContentEvent(message_id=rid, delta=delta,
                                                       **self._attributed(owner))
            case ReasoningEnded(message_id=message_id, run_id=owner):
                yield from self._reasoning_ended(reasoning_id(message_id), owner)
            case ToolCallStarted(call_id=call_id, name=name, message_id=message_id, run_id=owner):
                yield from self._call_started(call_id, name, message_id, owner)
            case ToolCallEnded(call_id=call_id, arguments=arguments, run_id=owner):
                yield from self._call_ended(call_id, arguments, owner)
            case ToolResult(call_id=call_id, result=result, error=error, run_id=owner):
                yield from self._result(call_id, result, error, owner)
            case StateChanged(delta=delta, run_id=owner):
                yield StateDeltaEvent.model_validate(
                    {"delta": [thaw(op) for op in delta], **self._attributed(owner)})
            case ApprovalRequested():
                self.request = event
            case SubagentStarted(run_id=run_id, call_id=call_id, name=name):
                yield from self._subagent_started(run_id, call_id, name)
            case SubagentFinished(run_id=run_id, answer=answer, error=error):
                yield from self._subagent_finished(run_id, answer, error)
            case RunFinished():
                yield from self._finished(event)
            case RunFailed(error=error):
                yield from self._failed(error)

    def incomplete(self) -> Iterator[BaseEvent]:
        """The runtime's stream ended without a terminal event: end the AG-UI stream anyway."""
        yield from self._failed(AgentError("incomplete", "the run's event stream ended before "
                                                         "the run did; run it again"))

    def broken(self) -> Iterator[BaseEvent]:
        """Reading the runtime's stream raised: end the AG-UI stream with a public error."""
        yield from self._failed(AgentError("internal_error", INTERNAL_ERROR_MESSAGE))

    # -- opening -------------------------------------------------------------------------------

    def _start(self, state: Any, *, announce: bool) -> Iterator[BaseEvent]:
        self.started = True
        yield RunStartedEvent(thread_id=self.input.thread_id, run_id=self.input.run_id,
                              protocol_version=PROTOCOL_VERSION if self.v1 else None)
        if announce:
            yield StateSnapshotEvent(snapshot=thaw(state))

    def _step_started(self, name: str, owner: str | None) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        if name not in parts.steps:
            parts.steps.append(name)
            yield StepStartedEvent(step_name=name, **self._attributed(owner))

    def _text_started(self, message_id: str, owner: str | None) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        if message_id not in parts.texts:
            parts.texts.append(message_id)
            self._draft(message_id, "assistant", owner)
            yield TextMessageStartEvent(message_id=message_id, role="assistant",
                                        **self._attributed(owner))

    def _reasoning_started(self, rid: str, owner: str | None) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        if rid not in parts.reasoning:
            parts.reasoning.append(rid)
            yield ReasoningStartEvent(message_id=rid, **self._attributed(owner))
            yield ReasoningMessageStartEvent(message_id=rid, role="reasoning",
                                             **self._attributed(owner))

    def _call_started(self, call_id: str, name: str, message_id: str, owner: str | None
                      ) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        if call_id in parts.calls:
            return
        parts.calls.append(call_id)
        draft = self._draft(message_id, "assistant", owner)
        draft.calls[call_id] = []
        draft.names[call_id] = name
        self.call_message[call_id] = message_id
        self.call_owner[call_id] = owner
        yield ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name,
                                 parent_message_id=message_id, **self._attributed(owner))

    def _subagent_started(self, run_id: str, call_id: str, name: str) -> Iterator[BaseEvent]:
        if run_id in self.parts:
            return
        self.parts[run_id] = _Parts()
        parent_run = self.call_owner.get(call_id)
        if parent_run not in self.subagents:
            parent_run = None
        self.subagents[run_id] = parent_run
        parents: dict[str, Any] = {"parent_tool_call_id": call_id} if call_id else {}
        if call_id in self.call_message:
            parents["parent_message_id"] = self.call_message[call_id]
        if parent_run is not None:
            parents["parent_subagent_run_id"] = parent_run
        yield SubagentStartedEvent(subagent_run_id=run_id, name=name, **parents)

    # -- closing -------------------------------------------------------------------------------

    def _text_ended(self, message_id: str, owner: str | None) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        if message_id in parts.texts:
            parts.texts.remove(message_id)
            yield TextMessageEndEvent(message_id=message_id, **self._attributed(owner))

    def _reasoning_ended(self, rid: str, owner: str | None) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        if rid in parts.reasoning:
            parts.reasoning.remove(rid)
            yield ReasoningMessageEndEvent(message_id=rid, **self._attributed(owner))
            yield ReasoningEndEvent(message_id=rid, **self._attributed(owner))

    def _call_ended(self, call_id: str, arguments: Mapping[str, Any] | None, owner: str | None
                    ) -> Iterator[BaseEvent]:
        """End a tool call; `arguments` None when it is cut short (nothing more is sent)."""
        parts = self._parts(owner)
        if call_id not in parts.calls:
            return
        parts.calls.remove(call_id)
        streamed = self.drafts[self.call_message[call_id]].calls[call_id]
        if not streamed and arguments is not None:  # else the client keeps "" as the arguments
            text = json.dumps(as_json(arguments), separators=(",", ":"))
            streamed.append(text)
            yield ToolCallArgsEvent(tool_call_id=call_id, delta=text, **self._attributed(owner))
        yield ToolCallEndEvent(tool_call_id=call_id, **self._attributed(owner))

    def _result(self, call_id: str, result: Any, error: str | None, owner: str | None
                ) -> Iterator[BaseEvent]:
        if call_id in self._parts(owner).calls:
            yield from self._call_ended(call_id, None, owner)
        content = error if error is not None else result_text(result)
        message_id = result_id(call_id)
        draft = self._draft(message_id, "tool", owner)
        draft.call_id, draft.text, draft.error = call_id, [content], error
        yield ToolCallResultEvent(message_id=message_id, tool_call_id=call_id, content=content,
                                  role="tool", **self._attributed(owner))

    def _subagent_finished(self, run_id: str, answer: Any, error: str | None
                           ) -> Iterator[BaseEvent]:
        if run_id not in self.subagents:
            return
        yield from self._close_subagents(parent=run_id)
        yield from self._close_parts(run_id)
        del self.subagents[run_id]
        if error is not None:
            yield SubagentErrorEvent(subagent_run_id=run_id, message=error)
        else:
            result = {} if answer is None else {"result": as_json(answer)}
            yield SubagentFinishedEvent(subagent_run_id=run_id,
                                        outcome=SubagentFinishedSuccessOutcome(), **result)

    def _close_subagents(self, parent: str | None = None) -> Iterator[BaseEvent]:
        """Close the subagents still active under `parent` (all when None), newest first."""
        for run_id in reversed(list(self.subagents)):
            if run_id not in self.subagents or (parent is not None
                                                and not self._descends(run_id, parent)):
                continue
            del self.subagents[run_id]
            yield from self._close_parts(run_id)
            yield SubagentErrorEvent(subagent_run_id=run_id, code="cancelled",
                                     message="the run ended before this subagent finished")

    def _descends(self, run_id: str, ancestor: str) -> bool:
        parent = self.subagents.get(run_id)
        while parent is not None:
            if parent == ancestor:
                return True
            parent = self.subagents.get(parent)
        return False

    def _close_parts(self, owner: str | None) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        for rid in list(reversed(parts.reasoning)):
            yield from self._reasoning_ended(rid, owner)
        for message_id in list(reversed(parts.texts)):
            yield from self._text_ended(message_id, owner)
        for call_id in list(reversed(parts.calls)):
            yield from self._call_ended(call_id, None, owner)
        for name in list(reversed(parts.steps)):
            parts.steps.remove(name)
            yield StepFinishedEvent(step_name=name, **self._attributed(owner))

    def _close_all(self) -> Iterator[BaseEvent]:
        yield from self._close_subagents()
        yield from self._close_parts(None)

    # -- the end -------------------------------------------------------------------------------

    def _finished(self, event: RunFinished) -> Iterator[BaseEvent]:
        request = self.request.request if self.request is not None else None
        if event.outcome == "interrupt" and request is None:
            yield from self._failed(AgentError("internal_error", INTERNAL_ERROR_MESSAGE))
            return
        yield from self._close_all()
        yield MessagesSnapshotEvent(messages=self._snapshot())
        extra: dict[str, Any] = {}
        if event.outcome == "interrupt":
            assert request is not None and self.request is not None
            extra["outcome"] = RunFinishedInterruptOutcome(interrupts=[
                self._interrupt(request, self.request.run_id)])
        elif event.outcome == "cancelled":
            if self.v1:  # a 0.0.x client knows no cancelled outcome: a bare RUN_FINISHED
                extra["outcome"] = RunFinishedCancelledOutcome()
        else:
            pending = list(event.pending_call_ids) if self.v1 else []
            extra["outcome"] = RunFinishedSuccessOutcome(pending_tool_call_ids=pending or None)
            if event.answer is not None:
                extra["result"] = as_json(event.answer)
        usage = event.usage
        if usage.requests:
            extra["usage"] = [TokenUsage(input_tokens=usage.input_tokens,
                                         output_tokens=usage.output_tokens,
                                         total_tokens=usage.input_tokens + usage.output_tokens)]
        self.ended = True
        yield RunFinishedEvent(thread_id=self.input.thread_id, run_id=self.input.run_id, **extra)

    def _failed(self, error: AgentError) -> Iterator[BaseEvent]:
        if not self.started:
            yield from self._start(None, announce=False)
        yield from self._close_all()
        self.ended = True
        yield RunErrorEvent(message=public_message(error), code=error.code)

    @staticmethod
    def _interrupt(request: ApprovalRequest, owner: str | None) -> Interrupt:
        reason = interrupt_reason(request)
        schema = APPROVAL_SCHEMA if reason == "approval" else request.schema
        assert schema is not None
        extra: dict[str, Any] = {"subagent_run_id": owner} if owner is not None else {}
        return Interrupt(id=request.id, reason=reason, message=request.prompt,
                         tool_call_id=request.call_id, response_schema=as_json(schema),
                         metadata={"tool": request.tool, "arguments": as_json(request.arguments)},
                         **extra)

    def _snapshot(self) -> list[Message]:
        """The client's messages (their ids kept), then this run's, with the streamed ids."""
        mine = {message_id: draft.to_message() for message_id, draft in self.drafts.items()}
        messages = [mine.pop(m.id, m) for m in self.input.messages]
        return [*messages, *mine.values()]

    # -- helpers -------------------------------------------------------------------------------

    def _parts(self, owner: str | None) -> _Parts:
        parts = self.parts.get(owner)
        if parts is None:
            parts = self.parts[owner] = _Parts()
        return parts

    def _draft(self, message_id: str, role: str, owner: str | None) -> MessageDraft:
        draft = self.drafts.get(message_id)
        if draft is None:
            draft = self.drafts[message_id] = MessageDraft(message_id, role, owner)
        return draft

    @staticmethod
    def _attributed(owner: str | None) -> dict[str, Any]:
        """What every event of `owner`'s run carries: the time, and the subagent it is of."""
        if owner is None:
            return {"timestamp": _now()}
        return {"timestamp": _now(), "subagent_run_id": owner}


async def translate(
    run_input: RunAgentInput, events: AsyncIterable[RuntimeEvent]
) -> AsyncIterator[BaseEvent]:
    """The AG-UI events of one run, from its runtime events.

    The stream opens with `RUN_STARTED{threadId, runId (the client's), protocolVersion "1.0"}`
    and a `STATE_SNAPSHOT` of the state the run starts from, and ends with exactly one of
    `RUN_FINISHED` (after a `MESSAGES_SNAPSHOT`) and `RUN_ERROR`, with everything it opened
    closed before. Every event carries a `timestamp` in milliseconds. The 1.0-only fields
    (`protocolVersion`, `pendingToolCallIds`, the cancelled outcome) go only to a client whose
    `run_input` declares `protocolVersion` 1.0 or later (`declares_1_0`).
    """
    async for event in flattened(translate_batches(run_input, one_each(events))):
        yield event


async def translate_batches(
    run_input: RunAgentInput, batches: AsyncIterable[Sequence[RuntimeEvent]]
) -> AsyncIterator[list[BaseEvent]]:
    """`translate`, a batch at a time: the AG-UI events of each batch of runtime events.

    A server writes each batch in one go; the events and their order are `translate`'s.
    """
    translation = _Translation(run_input)
    try:
        async for batch in batches:
            out = [_stamped(e) for event in batch for e in translation.on(event)]
            if out:
                yield out
            if translation.ended:
                return
    except Exception:
        _log.exception("reading the events of run %s (thread %s) failed",
                       run_input.run_id, run_input.thread_id)
        yield [_stamped(e) for e in translation.broken()]
        return
    rest = [_stamped(e) for e in translation.incomplete()]
    if rest:
        yield rest


def _stamped(event: BaseEvent) -> BaseEvent:
    if event.timestamp is None:
        event.timestamp = _now()
    return event
