"""The AG-UI stream of a connect: a client that comes back to a thread (a page reloaded, or
CopilotKit's `connectAgent`) gets its history, its state and the live tail of a run still going.

    RUN_STARTED, MESSAGES_SNAPSHOT (the thread's messages with the ids they were streamed
    with), STATE_SNAPSHOT, then the events of the run still going (replayed from its start:
    none of them is in the snapshot), then MESSAGES_SNAPSHOT and RUN_FINISHED; a thread with
    nothing running: RUN_STARTED, MESSAGES_SNAPSHOT, STATE_SNAPSHOT (the kept state; none
    when the server keeps none for the thread, as for a page's new thread) and RUN_FINISHED,
    with the interrupt outcome when a paused run waits on a person.

A message the client still holds keeps the client's id (a user message by its id, else by its
place among the user messages, counted from the latest; a tool result by its tool call id, an
assistant message by one of its calls), so no message reaches a client under two ids.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import Any

from ag_ui.core import (
    AssistantMessage,
    BaseEvent,
    DeveloperMessage,
    FunctionCall,
    Message,
    RunAgentInput,
    StateSnapshotEvent,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

from pyox_agents.adapters._event_ids import Cursor
from pyox_agents.adapters._translating import sse_frames
from pyox_agents.adapters.ag_ui._encode import encode_event
from pyox_agents.adapters.ag_ui._events import StreamInput, client_messages, kept_messages
from pyox_agents.adapters.ag_ui._messages import result_text
from pyox_agents.adapters.ag_ui._numbered import Reads, frame_log
from pyox_agents.adapters.ag_ui._parts import content_parts
from pyox_agents.adapters.ag_ui._translated import translate_batches
from pyox_agents.events import ApprovalRequested, RunFinished, RunStarted, RuntimeEvent
from pyox_agents.state.frozen import freeze
from pyox_agents.state.jsonvalue import file_from_json
from pyox_agents.state.messages import Image
from pyox_agents.state.messages import Message as PlainMessage
from pyox_agents.state.run import ApprovalRequest

__all__ = ["caught_up", "connect_batches", "connect_frames", "continued", "thread_messages"]


def thread_messages(records: Sequence[Mapping[str, Any]], client: Sequence[Message]
                    ) -> list[Message]:
    """The thread's messages (transcript records) as AG-UI messages, each one the client
    holds under the client's id."""
    known = _client_ids(client)
    renamed = _user_ids(records, [m.id for m in client if m.role == "user"])
    out: list[Message] = []
    for at, record in enumerate(records):
        role = record["role"]
        message_id = str(record["id"])
        if role == "user":
            message_id = renamed.get(at, message_id)
        elif role == "tool":
            message_id = known.get(("tool", record["call_id"]), message_id)
        elif role == "assistant":
            message_id = next((known[("call", c["id"])] for c in record["tool_calls"]
                               if ("call", c["id"]) in known), message_id)
        out.append(_message(message_id, record))
    return out


def _user_ids(records: Sequence[Mapping[str, Any]], client: list[str]) -> dict[int, str]:
    """The client's id of each user record (by its place) the client holds under another id:
    a record whose id the client has is that message; the client's other ids go to the
    records left, paired from the latest (a client that sent only its last messages)."""
    held = {str(r["id"]) for r in records if r["role"] == "user"}
    others = [message_id for message_id in client if message_id not in held]
    mine = set(client)
    left = [at for at, r in enumerate(records) if r["role"] == "user" and str(r["id"]) not in mine]
    count = min(len(others), len(left))
    return dict(zip(left[len(left) - count:], others[len(others) - count:], strict=True))


def continued(kept: StreamInput, records: Sequence[Mapping[str, Any]]) -> StreamInput:
    """The stream input of a run that continues an earlier one (a person's answer, or a run a
    crash cut, taken over): a resume, whose opening `MESSAGES_SNAPSHOT` names the calls the
    run's results answer. The thread's messages (`records`, as `thread_messages` takes them)
    stand for the client's when the client's name none of some call of the thread (a client
    that sends only its latest message); else the client's stay as it sent them."""
    client = client_messages(kept)
    calls = {("call", c["id"]) for r in records if r["role"] == "assistant"
             for c in r["tool_calls"]}
    if calls <= _client_ids(client).keys():
        return kept._replace(resume=True)
    return kept._replace(resume=True, messages=kept_messages(thread_messages(records, client)))


def caught_up(kept: StreamInput, records: Sequence[Mapping[str, Any]]) -> StreamInput:
    """The stream input of a run whose client missed some of its thread's messages: it holds
    one of them and not all that follow (it sent while another run went on, and that run's
    reply came after; or a tab that missed another tab's exchange). Such a stream opens with
    the thread's messages (`records`, as `thread_messages` takes them) and ends with them: a
    client drops every message a `MESSAGES_SNAPSHOT` does not hold, so one that holds only its
    own would lose the reply it missed; and it keeps those it holds in its own order, so the
    opening first gives the messages before the first one it missed (`StreamInput.held`; none
    where it misses the thread's first: then all of them come anew, in order).
    Otherwise `kept` as it is."""
    client = client_messages(kept)
    messages = thread_messages(records, client)
    ids = {message.id for message in client}
    held = [message.id in ids for message in messages]
    if True not in held or all(held[held.index(True):]):
        return kept
    first = held.index(False, held.index(True)) if held[0] else 0  # (0: none, all anew)
    return kept._replace(resume=True, messages=kept_messages(messages), held=first)


def _client_ids(client: Sequence[Message]) -> dict[tuple[str, str], str]:
    known: dict[tuple[str, str], str] = {}
    for message in client:
        if isinstance(message, ToolMessage):
            known[("tool", message.tool_call_id)] = message.id
        elif isinstance(message, AssistantMessage):
            for call in message.tool_calls or ():
                known[("call", call.id)] = message.id
    return known


def _message(message_id: str, record: Mapping[str, Any]) -> Message:
    role = record["role"]
    content = str(record.get("content") or "")
    if role == "tool":
        error = bool(record.get("is_error"))
        if not error and record.get("result") is not None:
            content = result_text(record["result"])
        return ToolMessage(id=message_id, tool_call_id=str(record["call_id"]), content=content,
                           error=content if error else None)
    if role == "assistant":
        calls = [ToolCall(id=c["id"], function=FunctionCall(
            name=c["name"], arguments=json.dumps(c["arguments"], separators=(",", ":"))))
            for c in record["tool_calls"]]
        return AssistantMessage(id=message_id, content=content or None,
                                tool_calls=calls or None)
    if role == "system":
        return SystemMessage(id=message_id, content=content)
    if role == "developer":
        return DeveloperMessage(id=message_id, content=content)
    images = [Image(i["url"], i["media_type"]) for i in record.get("images") or ()]
    files = [file_from_json(f) for f in record.get("files") or ()]
    return UserMessage(id=message_id,
                       content=content_parts(PlainMessage.user(content, *images, *files)))


async def connect_batches(run_input: RunAgentInput, messages: Sequence[Message], *,
                          state: Any = None, pending: ApprovalRequest | None = None,
                          paused_run_id: str | None = None,
                          tail: AsyncIterable[Sequence[RuntimeEvent]] | None = None,
                          version: int = 0) -> AsyncIterator[list[BaseEvent]]:
    """The AG-UI events of a connect, a batch at a time (see the module).

    `messages`: the thread's messages (`thread_messages`); `tail`: the events of the run still
    going, from its `RunStarted`; without one, `state` is the thread's kept state and `pending`
    the question its paused run (`paused_run_id`) waits on, and `version` the kept state's
    number (0: none).
    """
    restored = run_input.model_copy(update={"messages": list(messages)})
    batches = (translate_batches(restored, tail, restore=True) if tail is not None
               else _idle(restored, state, pending, paused_run_id, version))
    async for batch in batches:
        yield batch


async def connect_frames(run_input: RunAgentInput, messages: Sequence[Message], *,
                         state: Any = None, pending: ApprovalRequest | None = None,
                         paused_run_id: str | None = None, tail: Reads | None = None,
                         version: int = 0, after: Cursor | None = None
                         ) -> AsyncIterator[bytes]:
    """`connect_batches` as a server writes it, a batch of SSE frames at a time. The frames of
    the run still going (`tail`: its log from its first event, each batch with the index of
    its first event) carry their ids; `after`, where a client that lost its connection
    resumes: it gets that run from there (`frame_log`), not the thread restored. The frames of
    a thread with nothing running carry none: they are no run's."""
    restored = run_input.model_copy(update={"messages": list(messages)})
    if tail is not None:
        frames = frame_log(restored, tail, after=after, restore=after is None)
        async with aclosing(frames):
            async for chunk in frames:
                yield chunk
        return
    async for batch in _idle(restored, state, pending, paused_run_id, version):
        yield sse_frames([encode_event(event) for event in batch])


async def _idle(restored: RunAgentInput, state: Any, pending: ApprovalRequest | None,
                paused_run_id: str | None, version: int) -> AsyncIterator[list[BaseEvent]]:
    """The events of a thread with nothing running. A thread with no kept state (none, and no
    version: a page's new thread, or a server that keeps none) gets no STATE_SNAPSHOT: the
    client keeps the state it has, with the person's edits made while it connected."""
    shown = state is not None or version > 0
    kept = freeze({} if state is None else state)
    events: list[RuntimeEvent] = [RunStarted(paused_run_id or restored.run_id,
                                             restored.thread_id, kept, version=version)]
    if pending is not None:
        events.append(ApprovalRequested(pending))
    events.append(RunFinished(None, kept, outcome="interrupt" if pending else "success"))
    async for batch in translate_batches(restored, _once(events), restore=True):
        yield [event for event in batch if shown or not isinstance(event, StateSnapshotEvent)]


async def _once(events: list[RuntimeEvent]) -> AsyncIterator[list[RuntimeEvent]]:
    yield events
