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
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Mapping
from json.encoder import encode_basestring
from typing import Any

import pydantic
from ag_ui.core import BaseEvent, RunAgentInput, TextMessageContentEvent, ToolCallArgsEvent

from pyox_agents.adapters.ag_ui_events import (
    APPROVAL_SCHEMA,
    interrupt_reason,
    result_id,
    translate,
    translate_batches,
)
from pyox_agents.adapters.ag_ui_request import parse_request, request_from_input
from pyox_agents.agent import Agent
from pyox_agents.serving import RequestError, RunService

__all__ = [
    "APPROVAL_SCHEMA",
    "MEDIA_TYPE",
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

    The two events that make up most of a stream (text and tool-argument deltas) are written
    directly, to the same JSON pydantic gives (a test holds them equal): that serialisation was
    the largest cost per event left on the hot path.
    """
    plain = event.timestamp is not None and event.raw_event is None and event.metadata is None \
        and getattr(event, "subagent_run_id", None) is None
    if not plain:  # any optional field set: pydantic writes it
        return event.model_dump_json(by_alias=True, exclude_none=False)
    if type(event) is TextMessageContentEvent:
        return (f'{{"type":"TEXT_MESSAGE_CONTENT","timestamp":{event.timestamp},'
                f'"messageId":{_string(event.message_id)},"delta":{_string(event.delta)}}}')
    if type(event) is ToolCallArgsEvent:
        return (f'{{"type":"TOOL_CALL_ARGS","timestamp":{event.timestamp},'
                f'"toolCallId":{_string(event.tool_call_id)},"delta":{_string(event.delta)}}}')
    return event.model_dump_json(by_alias=True, exclude_none=False)


def _string(text: str) -> str:
    return encode_basestring(text)  # json.dumps(text, ensure_ascii=False), without its set-up


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
    request continues the thread and can resume an interrupt. Pass one `service` to every call
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
