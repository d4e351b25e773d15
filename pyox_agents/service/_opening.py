"""Opening a run for a request (`RunService.start`'s work once the thread is taken): a new run
on the thread's conversation with the request placed in it, or the thread's paused run
continued with the person's answer and the messages sent with it."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any, Protocol

from pyox_agents._run_request import Decision, RequestError, RunRequest
from pyox_agents.agent import Agent
from pyox_agents.runtime._handle import RunHandle
from pyox_agents.runtime._recovery import last_run_id
from pyox_agents.service._checkpoints import before_and_after
from pyox_agents.service._faults import kept_and_committed
from pyox_agents.service._limits import ServerLimits
from pyox_agents.service._live import LiveRun
from pyox_agents.service._open import (
    LOOK_UP,
    TYPED_OVER,
    WENT_BACK,
    check_news,
    chosen_decision,
    edit_paused,
    open_conversation,
    opened,
    refused_as_request_errors,
    start_state,
)
from pyox_agents.service._placing import Placement
from pyox_agents.service._thread_state import ThreadState
from pyox_agents.state.conversation import State
from pyox_agents.state.history import ImportEntry, RunStartEntry, UserMessageEntry
from pyox_agents.state.messages import Message
from pyox_agents.state.run import RunState
from pyox_agents.stores.base import Store

__all__ = ["open_run"]


class RunService(Protocol):
    """What opening a run reads of the `RunService` that starts it."""

    keep_state: bool
    store: Store | None
    limits: ServerLimits

    async def kept_state(self, thread_id: str) -> ThreadState:
        """The thread's kept shared state."""


async def open_run(
    runs: RunService, agent: Agent, request: RunRequest, live: LiveRun, principal: str | None,
    paused: Any,
) -> RunHandle:
    """Open the run `request` asks for: a new run on the thread's conversation with the
    request placed in it, or the thread's paused run continued with the person's answer (a
    message typed instead of one declines it; going back in the conversation cancels it)."""
    lease = live.lease
    fence = (request.thread_id, lease) if lease is not None else None
    merged = ThreadState()
    if runs.keep_state:
        assert runs.store is not None  # (keep_state needs one)
        live.kept, committed = await kept_and_committed(runs.store,
                                                         request.thread_id)
        merged = live.kept.copy()
        if committed is not None:  # a version the store's kept state may still miss
            merged.add(committed)
            live.start.append(committed)
    conversation, placement = await opened(agent, request)
    if paused is LOOK_UP:  # only a thread whose calls wait for results can be paused
        waiting = request.decisions or (conversation is not None
                                        and conversation.pending_calls)
        paused = await agent.apaused_run(request.thread_id) if waiting else None
    if request.decisions:
        decision = chosen_decision(request, paused)
        if placement.rewind is None or not decision.dismissed:
            if placement.rewind is None and placement.new and decision.dismissed:
                decision = dataclasses.replace(decision, answer=TYPED_OVER)  # for a message
            return await _resume(runs, agent, request, live, paused, fence, placement.new,
                                 decision)
        # dismissed to go back (an AG-UI page must address the interrupt to run at all): the
        # paused run is cancelled below, and the request branches like any edit or regenerate.
        # A person's explicit answer sent with an older history is still that answer.
    pending = paused.pending if paused is not None else None
    if paused is not None and pending is not None:
        if placement.rewind is None and placement.new:  # a message instead of an answer
            declined = Decision(pending.id, approve=False, answer=TYPED_OVER)
            return await _resume(runs, agent, request, live, paused, fence, placement.new,
                                 declined)
        if placement.rewind is not None:  # it goes back: the paused run ends there
            await agent.acancel_paused(paused.run_id, WENT_BACK)
            conversation, placement = await opened(agent, request)
    start = await start_state(request, merged, version_seen=functools.partial(
        _version_seen, runs, request, conversation, placement, merged))
    check_news(request, conversation, placement, start, merged)
    conversation = open_conversation(request, conversation, placement)
    live.last_run = last_run_id(conversation)  # (a crash cut it: the run continues it)
    live.start.append(start)
    with refused_as_request_errors(agent):
        return agent.start(
            conversation, state=start, client_tools=request.client_tools,
            context=request.context, forwarded_props=request.forwarded_props,
            fence=fence, owner=principal, state_bytes=runs.limits.state_bytes)


async def _version_seen(runs: RunService, request: RunRequest, conversation: State | None,
                        placement: Placement, kept: ThreadState) -> tuple[int, Any] | None:
    """The version of the thread's state a client that names none saw last, where its messages
    tell: the one the run that answered its last user message left (that run's checkpoint),
    when the client holds that run's reply whole (it saw it end), whether runs came after it
    (a tab that missed them) or not; with its state where the kept versions no longer hold
    it. None otherwise: its state is matched by content. (Asked only of a client that names
    no version and echoes no state.)"""
    if runs.store is None or conversation is None or placement.rewind is not None:
        return None
    run_id = _run_seen(conversation, request.messages[:len(request.messages) - len(placement.new)])
    if run_id is None:
        return None
    found = await runs.store.aload_checkpoints(request.thread_id, [run_id])
    version = found[-1].head.get("version") if found else None
    if not isinstance(version, int):
        return None
    if kept.keeps(version):
        return version, None
    found = await runs.store.aload_checkpoints(request.thread_id, [run_id], states=True)
    if not found or found[-1].state is None:
        return None
    return version, before_and_after(found[-1])[1]


def _run_seen(conversation: State, held: Sequence[Message]) -> str | None:
    """The id of the run that answered the last user message of `held` (a client's messages
    the thread has), if `held` has as many messages after it as the thread (the reply whole)."""
    users = [at for at, m in enumerate(held) if m.role == "user" and m.id is not None]
    if not users:
        return None
    user_id, replies = held[users[-1]].id, len(held) - users[-1] - 1
    thread = conversation.messages
    at = next((n for n in range(len(thread) - 1, -1, -1)
               if thread[n].role == "user" and thread[n].id == user_id), None)
    if at is None or replies < _reply_length(thread, at):
        return None
    run_id = None  # the first run to start after the message, read from the history's end
    for entry in reversed(conversation.history):
        if isinstance(entry, RunStartEntry):
            run_id = entry.content
        elif isinstance(entry, UserMessageEntry) and entry.content.id == user_id:
            return run_id
        elif isinstance(entry, ImportEntry) and any(m.id == user_id for m in entry.content):
            return run_id  # (a thread's first request)
    return None


def _reply_length(messages: Sequence[Message], at: int) -> int:
    """How many messages answer the user message `messages[at]` (up to the next one)."""
    end = next((n for n in range(at + 1, len(messages)) if messages[n].role == "user"),
               len(messages))
    return end - at - 1


async def _resume(
    runs: RunService, agent: Agent, request: RunRequest, live: LiveRun, paused: RunState | None,
    fence: tuple[str, int] | None, messages: Sequence[Message], decision: Decision,
) -> RunHandle:
    """Continue the thread's paused run with the person's answer `decision` and the `messages`
    the person sent with it."""
    assert paused is not None
    live.resumed = True
    edits = request.state if request.saw_thread else None
    if edits is not None:
        await _edit_paused(runs, agent, request, paused.run_id, fence)
    try:
        return await agent.start_resume(
            paused.run_id,
            approve=decision.approve,
            answer=decision.answer,
            edited_arguments=decision.arguments,
            request_id=decision.request_id,
            fence=fence,
            state_bytes=runs.limits.state_bytes,
            messages=messages,
            client_tools=request.client_tools,
            context=request.context,
            forwarded_props=request.forwarded_props,
            tool_outputs=request.tool_outputs,
        )
    except (ValueError, LookupError) as exc:
        raise RequestError(422, str(exc), "resume") from None


async def _edit_paused(runs: RunService, agent: Agent, request: RunRequest, run_id: str,
                       fence: tuple[str, int] | None) -> None:
    """Commit the person's edits of the state (the client's, against the version it saw)
    into the paused run's record before it resumes, as a tool's would be: onto what the
    run committed since that version, refused (409) where they write the same place."""
    thread = request.thread_id
    try:
        paused = await agent.apaused_state(run_id, thread)
    except LookupError:
        return
    versions = await runs.kept_state(thread)
    versions.add(paused)
    edited = await edit_paused(versions, request)
    if edited is not None:
        await agent.areplace_paused_state(run_id, thread, edited, fence=fence)
