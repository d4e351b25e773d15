"""The runtime's events: one ordered stream per run.

Events a subagent's run produces are forwarded into its parent's stream between
`SubagentStarted` and `SubagentFinished`, with `run_id` set to the subagent's run id (it is None
on the events of the stream's own run).

`agent.stream(...)` yields these; the protocol adapters translate each one to AG-UI events or AI
SDK chunks. A run starts with `RunStarted`, ends with exactly one `RunFinished` or `RunFailed`,
and closes everything it opened (text, reasoning, tool calls, steps) before that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pyox_agents.state.messages import Usage
from pyox_agents.state.run import AgentError, ApprovalRequest

__all__ = [
    "NOT_KEPT",
    "ApprovalRequested",
    "CustomEvent",
    "FileAttached",
    "PreliminaryResult",
    "Progress",
    "ReasoningDelta",
    "ReasoningEnded",
    "ReasoningStarted",
    "RunFailed",
    "RunFinished",
    "RunStarted",
    "RuntimeEvent",
    "SourceCited",
    "StateChanged",
    "StepFinished",
    "StepStarted",
    "SubagentFinished",
    "SubagentStarted",
    "TextDelta",
    "TextEnded",
    "TextStarted",
    "ToolCallArgsDelta",
    "ToolCallEnded",
    "ToolCallStarted",
    "ToolResult",
]


class _NotKept:
    """The type of `NOT_KEPT`: one value, which is no JSON value (the state may be null)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_KEPT"


NOT_KEPT: Any = _NotKept()
"""The `state` of a `StateChanged` a served run's log kept as its delta alone (a later change
superseded it): the state is the version before it with `delta` applied."""

StateSnapshots: TypeAlias = Literal["change", "step", "finish"]
"""How often a frontend gets the whole shared state besides its patches (`Agent(state_snapshots=)`):
after every change, at most once per step end, or only at the end of the run."""


@dataclass(frozen=True, slots=True)
class RunStarted:
    """A run began on thread `thread_id` with the (validated, read-only) shared `state`.

    `model` names the model that answers (`Model.name`, None for a planner) and `started_at`
    is when the run began, in milliseconds since the epoch (a frontend shows them as the
    message's metadata; they travel with the event, so a replay shows the same).
    `version` is the number of `state`: 0 in a run; a server that keeps its threads' state
    numbers it (and each `StateChanged`) as the thread's version, which its clients see.
    """

    run_id: str
    thread_id: str
    state: Any
    model: str | None = None
    started_at: int | None = None
    version: int = 0


@dataclass(frozen=True, slots=True)
class StepStarted:
    """Step `index` began: one model decision and the tool calls it asks for."""

    index: int
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class StepFinished:
    """Step `index` ended: its reply was streamed and all its tool calls have results."""

    index: int
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class TextStarted:
    """The model began an assistant message `message_id`."""

    message_id: str
    run_id: str | None = None


@dataclass(frozen=True, slots=True, init=False)
class TextDelta:
    """The next piece of the text of `message_id`."""

    message_id: str
    delta: str
    run_id: str | None = None

    def __init__(self, message_id: str, delta: str, run_id: str | None = None) -> None:
        # one per token: the slots' own setters (a frozen dataclass's `object.__setattr__`
        # made it 2x the cost; the event is as frozen either way)
        _set_message_id(self, message_id)
        _set_delta(self, delta)
        _set_run_id(self, run_id)


_set_message_id = TextDelta.__dict__["message_id"].__set__
_set_delta = TextDelta.__dict__["delta"].__set__
_set_run_id = TextDelta.__dict__["run_id"].__set__


@dataclass(frozen=True, slots=True)
class TextEnded:
    """The text of `message_id` is complete; `text` is all of it."""

    message_id: str
    text: str
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class ReasoningStarted:
    """The model began reasoning (shown to people, never sent back as text)."""

    message_id: str
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """The next piece of the reasoning of `message_id`."""

    message_id: str
    delta: str
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class ReasoningEnded:
    """The reasoning of `message_id` is complete."""

    message_id: str
    text: str
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The model began the tool call `call_id` of tool `name`, in assistant message `message_id`."""

    call_id: str
    name: str
    message_id: str
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallArgsDelta:
    """The next piece of the JSON arguments of `call_id`, as the model streams them."""

    call_id: str
    delta: str
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallEnded:
    """The model finished asking for `call_id`; `arguments` is the parsed JSON object. A reply's
    calls end together, with the reply: a model may stream their arguments in turns."""

    call_id: str
    name: str
    arguments: Mapping[str, Any]
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The tool call `call_id` finished: `result` (JSON) when it succeeded, `error` when not.

    `error` is the message the model reads: an exception from the tool, invalid arguments, a
    refused state change. A tool's `StateChanged`, if any, comes right after this event.
    """

    call_id: str
    name: str
    result: Any = None
    error: str | None = None
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class StateChanged:
    """A tool's changes to the shared state were applied.

    `delta` is an RFC 6902 JSON Patch (a list of plain dicts) that turns the previous version into
    `state`, the whole new version (read-only). `call_id` is the tool call that made the change
    ("" for a person's edit made while the run went on, `RunHandle.edit_state`); `version`
    counts the changes of this run (the state given to the run is version 0; a server that keeps
    its threads' state shows the thread's number instead, see `RunStarted`). A served run's log,
    which its readers replay, keeps the state of its latest change only (the log a shared store
    keeps for other processes, of none): a change read from it may have `state` `NOT_KEPT`, and
    is then the version before it with `delta` applied.
    """

    delta: Sequence[Mapping[str, Any]]
    state: Any
    call_id: str
    version: int
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class CustomEvent:
    """A tool's live event (`ctx.emit`): a value for the page, not part of the shared state.

    AG-UI sends it as `CUSTOM{name, value}`, the AI SDK as a `data-<name>` part: with an `id`,
    a later part of the same id replaces it in the message; a `transient` part is not kept in
    the message. `call_id` is the tool call that emitted it (None: the runtime's own, such as
    `PredictState`). It stays emitted if the tool then fails: it was a live view.
    """

    name: str
    value: Any
    id: str | None = None
    transient: bool = False
    call_id: str | None = None
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class Progress:
    """A live view of a tool's long work (`ctx.progress`), apart from the shared state.

    `id` names the view and `kind` says what it shows; `content` is the whole view now. The
    first event of an id has `delta` None; each later one also carries `delta`, the RFC 6902
    patch from the previous content. AG-UI: `ACTIVITY_SNAPSHOT` / `ACTIVITY_DELTA`; AI SDK: a
    `data-<kind>` part with the id, updated in place.
    """

    id: str
    kind: str
    content: Any
    delta: Sequence[Mapping[str, Any]] | None = None
    call_id: str | None = None
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class SourceCited:
    """A tool cited a source (`ctx.cite`): a web page (`url`) or a document (`media_type`,
    `filename`). AI SDK: a `source-url` / `source-document` part."""

    source_id: str
    url: str | None = None
    title: str | None = None
    media_type: str | None = None
    filename: str | None = None
    call_id: str | None = None
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class FileAttached:
    """A tool produced a file for the page (`ctx.attach_file`): `url` (often a `data:` URL) of
    type `media_type`. AI SDK: a `file` part."""

    url: str
    media_type: str
    filename: str | None = None
    call_id: str | None = None
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class PreliminaryResult:
    """A partial result of the tool call `call_id`: an async generator tool yielded `result`.

    The last value it yields is its result (`ToolResult`). AI SDK: a
    `tool-output-available{preliminary: true}` part.
    """

    call_id: str
    name: str
    result: Any
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class ApprovalRequested:
    """The run waits for a person to answer `request`; `RunFinished(outcome="interrupt")` follows.

    Answer it with `agent.resume(run_id, approve=..., answer=...)`.
    """

    request: ApprovalRequest
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class SubagentStarted:
    """The tool call `call_id` started a subagent `name`, whose run is `run_id`."""

    run_id: str
    call_id: str
    name: str
    thread_id: str


@dataclass(frozen=True, slots=True)
class SubagentFinished:
    """The subagent run `run_id` ended: its `answer`, or the `error` that ended it."""

    run_id: str
    call_id: str
    answer: Any = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class RunFinished:
    """The run ended normally: the `answer`, the final shared `state` and what it cost.

    `outcome` is "interrupt" when the run waits for a person (an `ApprovalRequested` came just
    before), "cancelled" when it was stopped (by a server's stop); `pending_call_ids` names
    calls of client tools the client should now run.
    `stopped` is the conversation's stop reason, if something stopped the run.
    """

    answer: Any
    state: Any
    usage: Usage = field(default_factory=Usage)
    stopped: Any = None
    outcome: Literal["success", "interrupt", "cancelled"] = "success"
    pending_call_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RunFailed:
    """The run ended because of an error: the model failed, or a bug. Nothing else follows."""

    error: AgentError


RuntimeEvent: TypeAlias = (
    RunStarted
    | StepStarted
    | StepFinished
    | TextStarted
    | TextDelta
    | TextEnded
    | ReasoningStarted
    | ReasoningDelta
    | ReasoningEnded
    | ToolCallStarted
    | ToolCallArgsDelta
    | ToolCallEnded
    | ToolResult
    | StateChanged
    | CustomEvent
    | Progress
    | SourceCited
    | FileAttached
    | PreliminaryResult
    | ApprovalRequested
    | SubagentStarted
    | SubagentFinished
    | RunFinished
    | RunFailed
)
