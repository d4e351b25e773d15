"""AG-UI events as the JSON of SSE `data:` lines (`encode_event`) and whole frames (`encode`).

The AG-UI adapter, in this package: `read_input` / `request_from_input` (_request.py) turn a body
into a `RunRequest`, `translate` (_events.py) turns runtime events into `ag_ui.core` events, and
this module writes them.

Mapping (DESIGN.md, "Protocol mapping"):

- RunStarted -> RUN_STARTED{threadId, runId: the client's, protocolVersion "1.0"} + STATE_SNAPSHOT
- StepStarted/Finished -> STEP_STARTED/FINISHED{stepName: "step-<index>"}
- Text* -> TEXT_MESSAGE_START/CONTENT/END; Reasoning* -> REASONING_START,
  REASONING_MESSAGE_START/CONTENT/END, REASONING_END (id "reasoning-<messageId>")
- ToolCall* -> TOOL_CALL_START{parentMessageId}/ARGS/END; ToolResult -> TOOL_CALL_RESULT
  {messageId: "result-<toolCallId>"}; StateChanged -> STATE_DELTA, right after its result
- CustomEvent -> CUSTOM{name, value} (the runtime's PredictState comes just before TOOL_CALL_START);
  Progress -> ACTIVITY_SNAPSHOT{messageId: id, activityType: kind, content}, then ACTIVITY_DELTA
  {patch}; SourceCited / FileAttached / PreliminaryResult -> CUSTOM "source" / "file" /
  "preliminary_result" (_tool_events.py)
- Subagent* -> SUBAGENT_STARTED/FINISHED (SUBAGENT_ERROR when it failed); its events carry
  `subagentRunId`
- RunFinished -> MESSAGES_SNAPSHOT, RUN_FINISHED{outcome: success (pendingToolCallIds for the
  client's tools) | interrupt (the ApprovalRequested before it) | cancelled}
- RunFailed -> close what is open, RUN_ERROR{message, code}

A 0.0.x client (no `protocolVersion` >= 1.0 in its input, e.g. the one CopilotKit 1.74 bundles)
gets no `protocolVersion`, no `pendingToolCallIds` (a plain success outcome) and a bare
RUN_FINISHED for a cancelled run: its strict schemas refuse those 1.0-only fields.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Sequence

import orjson
from ag_ui.core import BaseEvent, RunAgentInput, StateSnapshotEvent
from ag_ui.encoder import EventEncoder
from pydantic_core import PydanticSerializationError

from pyox_agents.adapters._translating import sse_frames
from pyox_agents.adapters.ag_ui._events import StreamInput
from pyox_agents.adapters.ag_ui._translated import Translated
from pyox_agents.events import RuntimeEvent

__all__ = ["MEDIA_TYPE", "encode", "encode_event", "frame_batches"]

MEDIA_TYPE = "text/event-stream"
"""The content type of an AG-UI stream as `encode` writes it."""

_ENCODER = EventEncoder()


def encode_event(event: BaseEvent) -> str:
    """One event as compact JSON, as `ag_ui`'s `EventEncoder` writes it: camelCase keys,
    optional fields without a value left out. A string no UTF-8 stream can carry as it is (a
    lone surrogate, from a tool's name for an event or its text) is written as its JSON escape
    (`\\ud800`), which every JSON reader takes back as the same string."""
    if type(event) is StateSnapshotEvent and (text := _snapshot_json(event)) is not None:
        return text
    try:
        return _ENCODER.encode(event)[6:-2]  # (`data: <json>\n\n`)
    except PydanticSerializationError:
        return json.dumps(event.model_dump(by_alias=True), separators=(",", ":"), default=str)


_NO_SNAPSHOT = '"snapshot":null}'


def _snapshot_json(event: StateSnapshotEvent) -> str | None:
    """A `STATE_SNAPSHOT` with its state written by orjson and its other fields by the
    library, as the library writes the whole (its models take the state apart into Python
    first: 150 ms for 100,000 todos against orjson's 5, most of a large state's intake,
    `bench/state_http.py`). None for a state orjson cannot write (an integer past 64 bits)."""
    try:
        state = orjson.dumps(event.snapshot).decode()
    except orjson.JSONEncodeError:
        return None
    try:
        envelope = _ENCODER.encode(event.model_copy(update={"snapshot": None}))[6:-2]
    except PydanticSerializationError:  # (a lone surrogate in a field: written escaped)
        return None
    if not envelope.endswith(_NO_SNAPSHOT):  # (the snapshot is the model's last field)
        return None
    return f'{envelope[:-len(_NO_SNAPSHOT)]}"snapshot":{state}}}'


async def encode(events: AsyncIterable[BaseEvent]) -> AsyncIterator[bytes]:
    """Events as SSE frames, `data: <json>\n\n` each (no keep-alive: the server adds those)."""
    async for event in events:
        yield f"data: {encode_event(event)}\n\n".encode()


def frame_batches(run_input: RunAgentInput | StreamInput,
                  batches: AsyncIterable[Sequence[RuntimeEvent]], *,
                  restore: bool = False) -> Translated[str, bytes]:
    """`translate_batches` as a server writes it: each batch's AG-UI events as SSE frames, in
    one chunk. The same bytes as encoding `translate_batches`' events; a text delta of the
    run's own reply (most of a stream) is written from the runtime event, with no event
    model made for it (`Translation.text_json`)."""
    return Translated(run_input, batches, encode_event, sse_frames, restore=restore, delta=str)
