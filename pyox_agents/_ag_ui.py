"""How `pyox_agents.ag_ui` serves one request without the server: the adapter, the service
and the agent composed (see that module for the whole story)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import pydantic
from ag_ui.core import BaseEvent, RunAgentInput

from pyox_agents._run_request import RequestError, RunRequest
from pyox_agents.adapters.ag_ui import (
    StreamInput,
    connect_batches,
    continued,
    read_input,
    request_from_input,
    stream_input,
    thread_messages,
    translate,
    upgrade_binary_parts,
)
from pyox_agents.agent import Agent
from pyox_agents.service import LOOK_UP, RunService, rejoin, transcript
from pyox_agents.state._validation import validation_problems
from pyox_agents.state.run import RunState
from pyox_agents.stores.base import Store

__all__ = ["connect", "parse_request", "stream"]


def parse_request(body: bytes, agent: Agent) -> tuple[RunAgentInput, RunRequest]:
    """The `RunAgentInput` in `body` and the `RunRequest` it asks `agent` for (synchronous: a
    `resume` is checked against the interrupt the thread's paused run waits for, read from the
    agent's store; async code uses `RunService.paused` and `request_from_input`).

    Raises:
        RequestError: 400 when `body` is not JSON; 422, naming the field, when it is not a valid
            `RunAgentInput`, or asks for something the runtime cannot do (a message part it
            cannot pass on, a tool result for no known call, a resume that does not answer the
            open interrupt or answers it with an invalid payload).
    """
    run_input = read_input(body)
    paused = agent.paused_run(run_input.thread_id) if run_input.resume else None
    return run_input, request_from_input(run_input, paused.pending if paused else None)


async def stream(agent: Agent, run_input: RunAgentInput | Mapping[str, Any], *,
                 store: Store | None = None, service: RunService | None = None,
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
    run_input = _valid(run_input)
    if store is not None and agent.store is None:
        agent = agent.with_store(store)
    runs = service if service is not None else RunService(agent.store)
    paused = await runs.paused(agent, run_input.thread_id) if run_input.resume else LOOK_UP
    pending = paused.pending if isinstance(paused, RunState) else None
    request = request_from_input(run_input, pending)
    live = await runs.start(agent, request, name=agent.name or "", paused=paused)
    given: RunAgentInput | StreamInput = run_input
    if live.continues and live.conversation is not None:  # its results answer earlier calls
        given = continued(stream_input(run_input),
                          transcript(live.conversation, before_run=live.run_id))
    async for event in translate(given, live.follow()):
        yield event


async def connect(agent: Agent, run_input: RunAgentInput | Mapping[str, Any], *,
                  store: Store | None = None, service: RunService | None = None,
                  ) -> AsyncIterator[BaseEvent]:
    """The AG-UI events that bring a client back to the thread of `run_input` (a reload, or
    CopilotKit's `connectAgent`), without our server: `RUN_STARTED`, `MESSAGES_SNAPSHOT` (the
    thread's messages under the ids they were streamed with), `STATE_SNAPSHOT`, then the run
    still going on the thread (replayed from its start, then live), then `RUN_FINISHED`.

    The messages come from the agent's store (`store` when it has none); the running run and
    the kept state from `service` (the one your `stream` calls share). An unknown thread has
    no messages and no `STATE_SNAPSHOT` (the client keeps its state). Check that the caller
    may read the thread before you call this.

    Raises:
        RequestError: 422 naming the field, for input that is not a `RunAgentInput`.
    """
    run_input = _valid(run_input)
    if store is not None and agent.store is None:
        agent = agent.with_store(store)
    runs = service if service is not None else RunService(agent.store)
    back = await rejoin(runs, agent, run_input.thread_id)
    tail = None if back.tail is None else (batch async for _, batch in back.tail)  # no indices
    batches = connect_batches(run_input, thread_messages(back.messages, run_input.messages),
                              state=back.state, pending=back.pending,
                              paused_run_id=back.paused_run_id, tail=tail)
    async for batch in batches:
        for event in batch:
            yield event


def _valid(run_input: RunAgentInput | Mapping[str, Any]) -> RunAgentInput:
    if isinstance(run_input, RunAgentInput):
        return run_input
    try:
        return RunAgentInput.model_validate(upgrade_binary_parts(run_input))
    except pydantic.ValidationError as exc:
        where, what = validation_problems(exc, root="body")[0]
        raise RequestError(422, f"not a valid RunAgentInput: {where}: {what}", where) from None
