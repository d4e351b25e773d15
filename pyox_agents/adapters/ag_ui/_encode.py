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

import functools
import math
from collections.abc import AsyncIterable, AsyncIterator, Sequence
from enum import Enum
from json.encoder import encode_basestring
from typing import Any, get_args

import orjson
from ag_ui._generated.models import GeneratedBaseModel
from ag_ui.core import (
    BaseEvent,
    MessagesSnapshotEvent,
    RunAgentInput,
    TextMessageContentEvent,
    ToolCallArgsEvent,
)

from pyox_agents.adapters.ag_ui._events import StreamInput
from pyox_agents.adapters.ag_ui._kept_messages import KeptMessage, as_models, fields_of
from pyox_agents.adapters.ag_ui._translated import Translated, translated
from pyox_agents.events import RuntimeEvent

__all__ = ["MEDIA_TYPE", "encode", "encode_event", "frame_batches"]

MEDIA_TYPE = "text/event-stream"
"""The content type of an AG-UI stream as `encode` writes it."""


def encode_event(event: BaseEvent) -> str:
    """One event as compact JSON: camelCase keys, optional fields left out rather than null.

    Most events of a stream are flat (strings and numbers); those are written directly, to the
    same JSON pydantic gives (property tests hold them equal). ag_ui's serializer runs a Python
    wrapper per event to drop unset fields, which made it the largest cost per event left.
    """
    if type(event) is TextMessageContentEvent:  # the deltas are most of a stream
        fast = _delta_json(event, "messageId", event.message_id)
    elif type(event) is ToolCallArgsEvent:
        fast = _delta_json(event, "toolCallId", event.tool_call_id)
    else:
        try:  # every model and value in one C call; what orjson refuses goes the long way
            return orjson.dumps(event, default=_model_fields, option=_PASSTHROUGH).decode()
        except orjson.JSONEncodeError:
            fast = _flat_json(event)
    if fast is not None:
        return fast
    if type(event) is MessagesSnapshotEvent:  # kept messages: models again, for pydantic
        event = event.model_copy(update={"messages": as_models(event.messages)})
    return event.model_dump_json(by_alias=True, exclude_none=False)


_PASSTHROUGH = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
"""Values orjson writes its own way (dataclasses, dates) go to `_model_fields`, which refuses
them: pydantic writes those."""


def _model_fields(value: object) -> dict[str, object]:
    """An ag_ui model as the dict of its JSON (`orjson.dumps`' `default`): keys as written, the
    optional fields without a value left out. Any other value raises: only pydantic writes it
    (orjson already refuses a lone surrogate, an integer past 64 bits, a key not a string), and
    so does a field that is an infinite float or NaN (written null in a list, left out here)."""
    if not isinstance(value, GeneratedBaseModel) or value.__pydantic_extra__:
        raise TypeError
    values = value.__dict__
    fields, loose = _plan(type(value))
    for name in loose:  # ag_ui drops a field that is inf or NaN; orjson would write null
        item = values[name]
        if type(item) is float and not math.isfinite(item):
            raise TypeError
    return {key: item for name, key, omittable in fields
            if (item := values[name]) is not None or not omittable}


@functools.cache
def _plan(kind: type[GeneratedBaseModel]) -> tuple[tuple[tuple[str, str, bool], ...],
                                                   tuple[str, ...]]:
    """`fields_of(kind)`, and the fields that may hold a float (typed `Any` or `float`)."""
    loose = tuple(name for name, info in kind.model_fields.items()
                  if _may_be_float(info.annotation))
    return fields_of(kind), loose


def _may_be_float(annotation: object) -> bool:
    if annotation is Any or annotation is float:
        return True
    return any(_may_be_float(arg) for arg in get_args(annotation))


def _delta_json(event: TextMessageContentEvent | ToolCallArgsEvent, key: str, ident: str
                ) -> str | None:
    if event.timestamp is None or event.raw_event is not None or event.metadata is not None \
            or event.subagent_run_id is not None or event.__pydantic_extra__:
        return _flat_json(event)
    return (f'{{"type":"{event.type._value_}","timestamp":{event.timestamp},"{key}":'
            f'{encode_basestring(ident)},"delta":{encode_basestring(event.delta)}}}')


def _flat_json(event: BaseEvent) -> str | None:
    """`event` as pydantic's JSON, written directly; None where only pydantic can say (a float
    in exponent form, an extra field, a value of another type): the caller then asks pydantic.

    Most events are flat (strings and numbers). The run's final events (MESSAGES_SNAPSHOT,
    RUN_FINISHED, STATE_SNAPSHOT, STATE_DELTA) nest ag_ui models and JSON values: ag_ui's
    serializer runs a Python wrapper per nested model, which made them the largest encoding cost
    of a short run (property tests hold the two equal)."""
    parts: list[str] = []
    return "".join(parts) if _write_model(event, parts) else None


def _write_model(model: GeneratedBaseModel, parts: list[str]) -> bool:
    """Append `model`'s JSON to `parts`: ag_ui leaves out the optional fields without a value."""
    if model.__pydantic_extra__:  # (`model_extra` is a property around it)
        return False
    sep = "{"
    for name, key, omittable in _fields(type(model)):
        value = getattr(model, name)
        kind = type(value)  # the flat cases inline: most fields of most events
        if value is None:
            if not omittable:
                parts.append(f"{sep}{key}null")
                sep = ","
            continue
        if kind is str:
            parts.append(f"{sep}{key}{encode_basestring(value)}")
        elif kind is int:
            parts.append(f"{sep}{key}{value}")
        elif isinstance(value, Enum) and type(value._value_) is str:  # .value: a slow descriptor
            parts.append(f"{sep}{key}{encode_basestring(value._value_)}")
        else:
            parts.append(sep + key)
            if not _write_value(value, parts):
                return False
        sep = ","
    parts.append("}" if sep == "," else "{}")
    return True


def _write_value(value: object, parts: list[str]) -> bool:
    """Append `value`'s JSON as pydantic writes it (False: a value pydantic writes its own way)."""
    kind = type(value)
    if kind is KeptMessage:  # plain JSON: the same text, written in C
        try:
            parts.append(orjson.dumps(value).decode())
        except orjson.JSONEncodeError:  # a lone surrogate, an integer past 64 bits: below
            pass
        else:
            return True
    if kind is str:
        parts.append(encode_basestring(value))  # type: ignore[arg-type]
    elif value is None:
        parts.append("null")
    elif kind is bool:
        parts.append("true" if value else "false")
    elif kind is int:
        parts.append(str(value))
    elif kind is float:
        text = repr(value)
        if "e" in text or "n" in text:  # 1e+16, inf, nan: pydantic writes these differently
            return False
        parts.append(text)
    elif isinstance(value, GeneratedBaseModel):
        return _write_model(value, parts)
    elif isinstance(value, Enum):
        return _write_value(value._value_, parts)  # .value is a descriptor: slow
    elif isinstance(value, (list, tuple)):
        parts.append("[")
        for index, item in enumerate(value):
            if index:
                parts.append(",")
            if not _write_value(item, parts):
                return False
        parts.append("]")
    elif isinstance(value, dict):
        parts.append("{")
        for index, (key, item) in enumerate(value.items()):
            if type(key) is not str:
                return False
            parts.append(f"{',' if index else ''}{encode_basestring(key)}:")
            if not _write_value(item, parts):
                return False
        parts.append("}")
    else:
        return False
    return True


@functools.cache
def _fields(kind: type[GeneratedBaseModel]) -> tuple[tuple[str, str, bool], ...]:
    """`fields_of(kind)`, each key as written: `"JSON key":`."""
    return tuple((name, f"{encode_basestring(key)}:", omittable)
                 for name, key, omittable in fields_of(kind))


async def encode(events: AsyncIterable[BaseEvent]) -> AsyncIterator[bytes]:
    """Events as SSE frames, `data: <json>\\n\\n` each (no keep-alive: the server adds those)."""
    async for event in events:
        yield f"data: {encode_event(event)}\n\n".encode()


def frame_batches(run_input: RunAgentInput | StreamInput,
                  batches: AsyncIterable[Sequence[RuntimeEvent]], *,
                  restore: bool = False) -> Translated[str, bytes]:
    """`translate_batches` as a server writes it: each batch's AG-UI events as SSE frames, in
    one chunk. The same bytes as encoding `translate_batches`' events, with less per event: a
    text delta (most of a stream) goes from the runtime event to its JSON, no event object.
    The client's messages are kept as the JSON of the final snapshot (`stream_input`; a
    server takes it before the run starts)."""
    return translated(run_input, batches, encode_event, _frames, restore=restore,
                      delta=str,  # a delta's JSON is its frame's text as it is (no Python call)
                      plain_messages=True, one=_frame)


def _frames(texts: list[str]) -> bytes:
    return ("data: " + "\n\ndata: ".join(texts) + "\n\n").encode()


def _frame(text: str) -> bytes:
    return ("data: " + text + "\n\n").encode()

