"""Runtime events -> AG-UI 1.0 events (`ag_ui.core`), one case per runtime event.

A client that declares no `protocolVersion` >= 1.0 (the 0.0.x one CopilotKit bundles) gets the
same stream without the 1.0-only fields, which its strict schemas refuse (`declares_1_0`).

`translate` keeps what it opened (text, reasoning, tool calls, steps, subagents), so that every
stream has exactly one terminal event with nothing open before it, even when the run is cut short.
It also keeps this run's messages, with the ids it streamed, for the `MESSAGES_SNAPSHOT` that
precedes `RUN_FINISHED`: the client merges that snapshot by id, so its ids are the streamed ones.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any, NamedTuple

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    Interrupt,
    Message,
    MessagesSnapshotEvent,
    ReasoningMessageContentEvent,
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
    TextMessageContentEvent,
    TokenUsage,
    ToolCallArgsEvent,
)
from pydantic import TypeAdapter
from pydantic_core import PydanticSerializationError

from pyox_agents.adapters.ag_ui._messages import as_json, reasoning_id
from pyox_agents.adapters.ag_ui._open import OpenParts, now_ms
from pyox_agents.adapters.ag_ui._tool_events import ToolEvents
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
from pyox_agents.state._run_parts import INTERNAL_ERROR_MESSAGE
from pyox_agents.state.frozen import thaw
from pyox_agents.state.run import AgentError, ApprovalRequest

__all__ = [
    "APPROVAL_SCHEMA",
    "STATE_VERSION",
    "StreamInput",
    "Translation",
    "declares_1_0",
    "interrupt_reason",
    "step_name",
    "stream_input",
]

STATE_VERSION = "stateVersion"
"""The key of a state event's `metadata` that holds the number of the version it brings (a
server that keeps its threads' state numbers them; an edit names the one it was made on)."""

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


def step_name(index: int, owner: str | None = None) -> str:
    """The `stepName` of step `index` of the stream's run, or of subagent run `owner`'s (a
    name of its own: a step name is open once in a stream, whoever opened it)."""
    return f"step-{index}" if owner is None else f"step-{index}-of-{owner[:12]}"


class StreamInput(NamedTuple):
    """What a stream keeps of its request: the ids its events name, the protocol the client
    reads, and the client's messages for the final `MESSAGES_SNAPSHOT` (`stream_input`)."""

    thread_id: str
    run_id: str
    parent_run_id: str | None
    resume: bool
    v1: bool
    """The client reads AG-UI 1.0: it gets the 1.0-only fields (`declares_1_0`)."""
    messages: bytes | list[Message]
    """The client's messages as JSON, read again at the run's end (`client_messages`): a model
    a message held by every open stream was 0.7 KiB a message, 33 KiB for a CopilotKit client's
    50 messages of history; their JSON is 12. The models themselves only where their JSON
    cannot be written (a lone surrogate in a text)."""
    held: int | None = None
    """A resume whose client missed some of `messages`, the first after `messages[:held]`: it
    opens with those first, so the client, which keeps the messages it holds in its own order,
    drops the ones it holds out of the thread's place before the whole snapshot puts them back
    in it."""


_MESSAGES = TypeAdapter(list[Message])


def stream_input(run_input: RunAgentInput) -> StreamInput:
    """What a stream of `run_input` keeps of it. A server takes it before the run's first wait,
    so that the rest of the request (its state, tools, context) goes at once."""
    return StreamInput(run_input.thread_id, run_input.run_id, run_input.parent_run_id,
                       bool(run_input.resume), declares_1_0(run_input),
                       kept_messages(run_input.messages))


def kept_messages(messages: Sequence[Message]) -> bytes | list[Message]:
    """`messages` as a stream keeps them (`StreamInput.messages`): their JSON, or the models
    where the JSON cannot be written (a lone surrogate in a text)."""
    try:
        return _MESSAGES.dump_json(list(messages), by_alias=True)
    except PydanticSerializationError:
        return list(messages)


def client_messages(kept: StreamInput) -> list[Message]:
    """The client's messages a stream kept (`StreamInput.messages`), as models again."""
    if isinstance(kept.messages, bytes):
        return _MESSAGES.validate_json(kept.messages)
    return list(kept.messages)


class Translation(OpenParts):
    """The state of one stream's translation: what is open, and this run's messages."""

    __slots__ = ("_id_json", "_kept", "_open_text", "ended", "numbered", "request", "restore",
                 "run_id", "started", "thread_id", "tool_events")

    def __init__(self, run_input: RunAgentInput | StreamInput, *,
                 restore: bool = False) -> None:
        super().__init__()
        # what the events name of the request, not the request: an open stream would otherwise
        # hold the client's whole state, tools and context until the run ends
        kept = run_input if isinstance(run_input, StreamInput) else stream_input(run_input)
        self.thread_id = kept.thread_id
        self.run_id = kept.run_id
        self._kept = kept
        self.restore = restore
        """A connect: the stream restores the client's messages (the input's) after RUN_STARTED."""
        self.started = False
        self.ended = False
        self.numbered = False  # the run's versions carry the thread's numbers
        self.request: ApprovalRequested | None = None
        self.tool_events = ToolEvents()
        self._open_text: str | None = None
        """The message whose deltas `text_json` writes (checked open, its id's JSON in
        `_id_json`), until the next event that may change what is open."""
        self._id_json = ""

    def text_json(self, message_id: str, delta: str) -> str | None:
        """The JSON of the `TEXT_MESSAGE_CONTENT` of a text delta of this stream's own run into
        a message already open, written directly (a slow stream's every token: no event model
        made); None when `on` must translate it (a message not open, an empty delta)."""
        if message_id is not self._open_text:  # a message's deltas come together: check once
            if self.ended or not self.started or message_id not in self.parts[None].texts:
                return None
            self._open_text, self._id_json = message_id, encode_basestring(message_id)
        if not delta:
            return None
        return (f'{{"type":"TEXT_MESSAGE_CONTENT","timestamp":{now_ms()},"messageId":'
                f'{self._id_json},"delta":{encode_basestring(delta)}}}')

    def _snapshot(self) -> list[Message]:
        """The client's messages (their ids kept), then this run's, with the streamed ids."""
        mine = {ident: draft.to_message() for ident, draft in self.drafts.items()}
        messages = [mine.pop(m.id, m) for m in client_messages(self._kept)]
        return [*messages, *mine.values()]

    # -- one case per runtime event ------------------------------------------------------------

    def on(self, event: RuntimeEvent) -> Iterator[BaseEvent]:
        """The AG-UI events for one runtime event."""
        self._open_text = None
        if self.ended:
            return
        if not self.started:
            yield from self._start(event if isinstance(event, RunStarted) else None)
            if isinstance(event, RunStarted):
                return
        match event:  # the deltas first: they are most of a stream
            case TextDelta(message_id=message_id, delta=delta, run_id=owner):
                if message_id not in self._parts(owner).texts:
                    yield from self._text_started(message_id, owner)
                if delta:  # the draft takes the whole text from `TextEnded`: no copy of it
                    yield TextMessageContentEvent(message_id=message_id, delta=delta,
                                                  **self._attributed(owner))
            case ToolCallArgsDelta(call_id=call_id, delta=delta, run_id=owner):
                if call_id in self._parts(owner).calls and delta:
                    self._arguments(call_id).add(delta)
                    yield ToolCallArgsEvent(tool_call_id=call_id, delta=delta,
                                            **self._attributed(owner))
            case RunStarted():
                return  # only the stream's own run starts with RunStarted; a repeat means nothing
            case StepStarted(index=index, run_id=owner):
                yield from self._step_started(step_name(index, owner), owner)
            case StepFinished(index=index, run_id=owner):
                name = step_name(index, owner)
                if name in self._parts(owner).steps:
                    self._parts(owner).steps.remove(name)
                    yield StepFinishedEvent(step_name=name, **self._attributed(owner))
            case TextStarted(message_id=message_id, run_id=owner):
                yield from self._text_started(message_id, owner)
            case TextEnded(message_id=message_id, text=text, run_id=owner):
                draft = self.drafts.get(message_id)
                if draft is not None and text and message_id in self._parts(owner).texts:
                    draft.text.adopt(text)  # all its deltas: the reply's own string
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
            case StateChanged(delta=delta, run_id=owner, version=version):
                yield StateDeltaEvent.model_validate(
                    {"delta": [thaw(op) for op in delta], **self._attributed(owner),
                     **self._numbered(version)})
            case CustomEvent() | Progress() | SourceCited() | FileAttached() | PreliminaryResult():
                yield from self.tool_events.on(event, self._attributed(event.run_id))
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
        self._open_text = None
        yield from self._failed(AgentError("incomplete", "the run's event stream ended before "
                                                         "the run did; run it again"))

    def broken(self) -> Iterator[BaseEvent]:
        """Reading the runtime's stream raised: end the AG-UI stream with a public error."""
        self._open_text = None
        yield from self._failed(AgentError("internal_error", INTERNAL_ERROR_MESSAGE))

    # -- the start -----------------------------------------------------------------------------

    def _numbered(self, version: int) -> dict[str, Any]:
        """The version's number as the event's `metadata` (`{"stateVersion": n}`), where a
        server numbers its threads' versions (a client's edit names the one it was made on)."""
        return {"metadata": {STATE_VERSION: version}} if self.numbered else {}

    def _start(self, event: RunStarted | None) -> Iterator[BaseEvent]:
        """The stream's start; with no `RunStarted` (a run that failed first), no state."""
        self.started = True
        yield RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id,
                              parent_run_id=self._kept.parent_run_id,
                              protocol_version=PROTOCOL_VERSION if self._kept.v1 else None)
        if self.restore or self._kept.resume:  # a resume answers calls an earlier run made:
            messages = client_messages(self._kept)  # name them first
            if self._kept.held is not None:
                yield MessagesSnapshotEvent(messages=messages[:self._kept.held])
            yield MessagesSnapshotEvent(messages=messages)
        if event is not None:
            self.numbered = event.version > 0
            yield StateSnapshotEvent(snapshot=event.state, **self._numbered(event.version))

    # -- the end -------------------------------------------------------------------------------

    def _finished(self, event: RunFinished) -> Iterator[BaseEvent]:
        if event.outcome == "interrupt" and self.request is None:
            yield from self._failed(AgentError("internal_error", INTERNAL_ERROR_MESSAGE))
            return
        if event.outcome == "cancelled" and self.cut_mid_arguments():
            yield from self._failed(AgentError(
                "cancelled", "the run was stopped while the model was writing a tool call's "
                             "arguments; that call did not run"))
            return
        yield from self._close_all()
        if self.drafts or not self.restore:  # a connect that streamed nothing said it all
            yield MessagesSnapshotEvent(messages=self._snapshot())
        extra: dict[str, Any] = {}
        if event.outcome == "interrupt":
            assert self.request is not None
            extra["outcome"] = RunFinishedInterruptOutcome(interrupts=[
                self._interrupt(self.request)])
        elif event.outcome == "cancelled":
            if self._kept.v1:  # a 0.0.x client knows no cancelled outcome: a bare RUN_FINISHED
                extra["outcome"] = RunFinishedCancelledOutcome()
        else:
            pending = list(event.pending_call_ids) if self._kept.v1 else []
            extra["outcome"] = RunFinishedSuccessOutcome(pending_tool_call_ids=pending or None)
            if event.answer is not None:
                extra["result"] = as_json(event.answer)
        usage = event.usage
        if usage.requests:
            extra["usage"] = [TokenUsage(input_tokens=usage.input_tokens,
                                         output_tokens=usage.output_tokens,
                                         total_tokens=usage.input_tokens + usage.output_tokens)]
        self.ended = True
        yield RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id, **extra)

    def _failed(self, error: AgentError) -> Iterator[BaseEvent]:
        if not self.started:
            yield from self._start(None)
        yield from self._close_all()
        self.ended = True
        yield RunErrorEvent(message=error.public_message, code=error.code)

    @staticmethod
    def _interrupt(asked: ApprovalRequested) -> Interrupt:
        request, owner = asked.request, asked.run_id
        reason = interrupt_reason(request)
        schema = APPROVAL_SCHEMA if reason == "approval" else request.schema
        assert schema is not None
        extra: dict[str, Any] = {"subagent_run_id": owner} if owner is not None else {}
        return Interrupt(id=request.id, reason=reason, message=request.prompt,
                         tool_call_id=request.call_id, response_schema=as_json(schema),
                         metadata={"tool": request.tool, "arguments": as_json(request.arguments)},
                         **extra)
