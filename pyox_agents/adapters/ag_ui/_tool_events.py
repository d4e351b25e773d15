"""The events a tool sends while it runs -> AG-UI `CUSTOM` and `ACTIVITY_*` events.

- `CustomEvent(name, value)` (`ctx.emit`, and the runtime's `PredictState`) -> `CUSTOM{name,
  value}`.
- `Progress(id, kind, content, delta)` (`ctx.progress`) -> `ACTIVITY_SNAPSHOT{messageId: id,
  activityType: kind, content}` the first time this stream shows the view, then
  `ACTIVITY_DELTA{messageId, activityType, patch: delta}`. An activity's content is a JSON
  object in both client versions' schemas: other content is sent as `{"value": content}` (its
  patches under `/value`).
- `SourceCited` -> `CUSTOM{name: "source", value: {sourceId, url?, title?, mediaType?,
  filename?, toolCallId?}}`; `FileAttached` -> `CUSTOM{name: "file", value: {url, mediaType,
  filename?, toolCallId?}}`.
- `PreliminaryResult` (an async generator tool's yields) -> `CUSTOM{name: "preliminary_result",
  value: {toolCallId, toolName, result}}`: AG-UI has no partial tool result, and a page may
  render it; the client's messages keep only the final `TOOL_CALL_RESULT`.

A subagent's events carry `subagentRunId`, like its other events. The activity messages are not
in the run's `MESSAGES_SNAPSHOT`: both client versions then keep the ones they built.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ag_ui.core import ActivityDeltaEvent, ActivitySnapshotEvent, BaseEvent
from ag_ui.core import CustomEvent as CustomAgUiEvent

from pyox_agents.adapters.ag_ui._messages import as_json
from pyox_agents.events import CustomEvent, FileAttached, PreliminaryResult, Progress, SourceCited

__all__ = ["ToolEvent", "ToolEvents"]

ToolEvent = CustomEvent | Progress | SourceCited | FileAttached | PreliminaryResult
"""The runtime events this module translates."""


class ToolEvents:
    """The translation of one stream's tool events: it knows which activities it has shown."""

    __slots__ = ("shown",)

    def __init__(self) -> None:
        self.shown: dict[str, bool] = {}
        """The activity ids this stream sent a snapshot of, each with whether its content was
        wrapped as `{"value": content}`."""

    def on(self, event: ToolEvent, attributed: Mapping[str, Any]) -> Iterator[BaseEvent]:
        """The AG-UI event of one tool event; `attributed` the fields of its run's events."""
        match event:
            case CustomEvent(name=name, value=value):
                yield CustomAgUiEvent(name=name, value=as_json(value), **attributed)
            case Progress():
                yield self._activity(event, attributed)
            case SourceCited():
                yield _custom("source", attributed, sourceId=event.source_id, url=event.url,
                              title=event.title, mediaType=event.media_type,
                              filename=event.filename, toolCallId=event.call_id)
            case FileAttached():
                yield _custom("file", attributed, url=event.url, mediaType=event.media_type,
                              filename=event.filename, toolCallId=event.call_id)
            case PreliminaryResult():
                yield _custom("preliminary_result", attributed, toolCallId=event.call_id,
                              toolName=event.name, result=as_json(event.result))

    def _activity(self, event: Progress, attributed: Mapping[str, Any]) -> BaseEvent:
        content = as_json(event.content)
        wrapped = not isinstance(content, dict)
        if event.delta is None or self.shown.get(event.id) is not wrapped \
                or any(op.get("path") == "" for op in event.delta):
            # first seen here (also by a client that joined late), or its whole content changed
            self.shown[event.id] = wrapped
            return ActivitySnapshotEvent(message_id=event.id, activity_type=event.kind,
                                         content={"value": content} if wrapped else content,
                                         **attributed)
        ops = [dict(as_json(op)) for op in event.delta]
        patch = [_under_value(op) for op in ops] if wrapped else ops
        return ActivityDeltaEvent.model_validate({
            "message_id": event.id, "activity_type": event.kind, "patch": patch, **attributed})


def _custom(name: str, attributed: Mapping[str, Any], **fields: Any) -> BaseEvent:
    value = {key: field for key, field in fields.items() if field is not None}
    return CustomAgUiEvent(name=name, value=value, **attributed)


def _under_value(op: dict[str, Any]) -> dict[str, Any]:
    """A patch operation on a non-object content, moved under the `/value` it is sent as."""
    moved = dict(op)
    for key in ("path", "from"):
        if key in moved:
            moved[key] = "/value" + moved[key]
    return moved
