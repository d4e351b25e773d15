"""The AG-UI 1.0 adapter: `RunAgentInput` -> a run, and the run's events -> AG-UI events.

Pure translation: `parse_request` turns a body into a `RunRequest` (ag_ui_request.py),
`translate` turns runtime events into `ag_ui.core` events (ag_ui_events.py), `encode_event`
writes one as the JSON of an SSE `data:` line. The server (`pyox_agents.server`) uses these three;
`stream` and `encode` run an agent for any other ASGI framework.

Mapping (DESIGN.md, "Protocol mapping"):

- RunStarted -> RUN_STARTED{threadId, runId: the client's, protocolVersion "1.0"} + STATE_SNAPSHOT
- StepStarted/Finished -> STEP_STARTED/FINISHED{stepName: "step-<index>"}
- Text* -> TEXT_MESSAGE_START/CONTENT/END; Reasoning* -> REASONING_START,
  REASONING_MESSAGE_START/CONTENT/END, REASONING_END (id "reasoning-<messageId>")
- ToolCall* -> TOOL_CALL_START{parentMessageId}/ARGS/END; ToolResult -> TOOL_CALL_RESULT
  {messageId: "result-<toolCallId>"}; StateChanged -> STATE_DELTA, right after its result
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
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from enum import Enum
from json.encoder import encode_basestring
from typing import Any

import pydantic
from ag_ui.core import BaseEvent, RunAgentInput, TextMessageContentEvent, ToolCallArgsEvent

from pyox_agents.adapters.ag_ui._events import (
    APPROVAL_SCHEMA,
    declares_1_0,
    interrupt_reason,
    result_id,
    translate,
    translate_batches,
)
from pyox_agents.adapters.ag_ui._request import parse_request, request_from_input
from pyox_agents.agent import Agent
from pyox_agents.service._runs import RequestError, RunService

__all__ = [
    "APPROVAL_SCHEMA",
    "MEDIA_TYPE",
    "declares_1_0",
    "encode",
    "encode_event",
    "interrupt_reason",
    "parse_request",
    "request_from_input",
    "result_id",
    "stream",
    "translate",
    "translate_batches",
]

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
        fast = _flat_json(event)
    return fast if fast is not None else event.model_dump_json(by_alias=True, exclude_none=False)


def _delta_json(event: TextMessageContentEvent | ToolCallArgsEvent, key: str, ident: str
                ) -> str | None:
    if event.timestamp is None or event.raw_event is not None or event.metadata is not None \
            or event.subagent_run_id is not None or event.model_extra:
        return _flat_json(event)
    return (f'{{"type":"{event.type._value_}","timestamp":{event.timestamp},"{key}":'
            f'{encode_basestring(ident)},"delta":{encode_basestring(event.delta)}}}')


def _flat_json(event: BaseEvent) -> str | None:
    """`event` as JSON when every field is a str, an int or None (unset), else None."""
    if event.model_extra:
        return None
    parts = []
    for name, alias, omittable in _fields(type(event)):
        value = getattr(event, name)
        if value is None:
            if not omittable:
                parts.append(f'"{alias}":null')
            continue  # an optional field without a value: left out
        if isinstance(value, Enum):
            value = value._value_  # .value is a descriptor: slow
        if type(value) is str:
            parts.append(f'"{alias}":{encode_basestring(value)}')
        elif type(value) is int:
            parts.append(f'"{alias}":{value}')
        else:
            return None
    return "{" + ",".join(parts) + "}"


@functools.cache
def _fields(kind: type[BaseEvent]) -> tuple[tuple[str, str, bool], ...]:
    """(attribute, JSON key, left out when None) of each field of an event type, in pydantic's
    order; ag_ui leaves out the optional fields whose default is None."""
    return tuple((name, info.alias or name, not info.is_required() and info.default is None)
                 for name, info in kind.model_fields.items())


async def encode(events: AsyncIterable[BaseEvent]) -> AsyncIterator[bytes]:
    """Events as SSE frames, `data: <json>\\n\\n` each (no keep-alive: the server adds those)."""
    async for event in events:
        yield f"data: {encode_event(event)}\n\n".encode()


async def stream(
    agent: Agent,
    run_input: RunAgentInput | Mapping[str, Any],
    *,
    store: Any = None,
    service: RunService | None = None,
) -> AsyncIterator[BaseEvent]:
    """Run `agent` for an AG-UI request and yield its AG-UI events, without our server.

    `store` saves threads and runs (an agent without a store of its own gets it), so a later
    request continues the thread and can resume an interrupt. The run starts from the client's
    state (or `{}`): nothing keeps the shared state between runs unless the `service` does
    (`RunService(store, keep_state=True)`, as the server). Pass one `service` to every call
    to allow only one active run per thread (the server does); each call makes its own
    otherwise. The run goes on if the consumer stops reading; what it commits stays.

    Example (Starlette):
        return StreamingResponse(ag_ui.encode(ag_ui.stream(agent, await request.json())),
                                 media_type=ag_ui.MEDIA_TYPE)

    Raises:
        RequestError: before the first event, for input the run cannot start from: `status`
            (409, 422) and a message naming the field.
    """
    if not isinstance(run_input, RunAgentInput):
        try:
            run_input = RunAgentInput.model_validate(run_input)
        except pydantic.ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"]) or "body"
            raise RequestError(422, f"not a valid RunAgentInput: {where}: {error['msg']}",
                               where) from None
    if store is not None and agent.store is None:
        agent = agent.with_store(store)
    runs = service if service is not None else RunService(store)
    request = request_from_input(run_input, agent)
    live = await runs.start(agent, request, name=agent.name or "")
    async for event in translate(run_input, live.follow()):
        yield event
