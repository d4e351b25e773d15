"""Opening a run for a request: the thread's conversation (from the store, or from the client's
messages), the state it starts from, the decision that answers a paused run, and the request's
errors in HTTP terms."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio.to_thread
import pydantic

from pyox_agents._run_request import Decision, RequestError, RunRequest
from pyox_agents.agent import Agent
from pyox_agents.models._inputs import InputNotAccepted, check_inputs
from pyox_agents.runtime._starting import add_client_results
from pyox_agents.service._placing import Placement, check_message_ids, place
from pyox_agents.service._thread_state import (
    ThreadState,
    edit_running,
    json_equal,
    merge,
    merge_onto,
)
from pyox_agents.state._validation import describe_problems
from pyox_agents.state.conversation import State
from pyox_agents.state.frozen import NotJSON, thaw
from pyox_agents.state.rebase import Conflict
from pyox_agents.state.run import RunState

__all__ = [
    "LOOK_UP",
    "TYPED_OVER",
    "WENT_BACK",
    "check_news",
    "chosen_decision",
    "edit_paused",
    "open_conversation",
    "opened",
    "refused_as_request_errors",
    "start_state",
]


LOOK_UP: Any = object()
"""`RunService.start(paused=LOOK_UP)`, the default: the service looks the thread's paused run
up itself, if the request needs it (the caller has not)."""

TYPED_OVER = "the person sent a new message instead of answering"
"""Why a pending approval or question is declined when a message comes instead of an answer
(the message goes into the conversation right after the declined call's result)."""
WENT_BACK = "the person went back in the conversation instead of answering"
"""Why a paused run is cancelled when a request edits or regenerates an earlier message."""


async def opened(agent: Agent, request: RunRequest) -> tuple[State | None, Placement]:
    """The thread's kept conversation (None: the agent keeps none of it) and where the
    request's messages go in it (`place`).

    Raises:
        RequestError: 422 naming the part, when the agent's model cannot take an image or
            file of the request's messages; 409 when the request cannot be placed.
    """
    _check_inputs(agent, request)
    check_message_ids(request.messages)
    conversation = await agent.athread(request.thread_id)
    if conversation is None:
        return None, Placement(new=request.messages)
    return conversation, place(conversation, request.messages)


def open_conversation(request: RunRequest, conversation: State | None,
                      placement: Placement) -> State:
    """The conversation a new run goes on: the kept one with the request placed in it (the
    client's results for its tools' calls, then its new messages, or the branch its edit or
    regenerate makes), or, when none is kept, a new one of the client's messages.

    While calls of a run cut short (a crash) wait for their results, an edit or a
    regenerate does not branch: they may have run, so that run goes on first and settles them
    (in recovery), and the request's new messages follow them.

    Raises:
        RequestError: 422 for a thread id or message a State refuses.
    """
    if conversation is None:
        try:
            return State(id=request.thread_id, messages=list(request.messages))
        except ValueError as exc:
            raise RequestError(422, f"thread id: {exc}", "threadId") from None
        except TypeError as exc:  # a value in a message that is not JSON (too deep)
            raise RequestError(422, str(exc), "messages") from None
    if placement.rewind is not None and not conversation.pending_calls:
        _branch(conversation, placement.rewind)
        for result in placement.declined:  # an edited message's declines: not asked again
            conversation._add_tool_result(result.call, result.outcome, result.content,
                                          is_error=result.is_error, text=result.text)
    else:
        add_client_results(conversation, request.tool_outputs)
    for message in placement.new:
        conversation.add_message(message)
    return conversation


def _check_inputs(agent: Agent, request: RunRequest) -> None:
    try:
        model = agent.resolve_model()
    except ValueError:
        return  # a model name with no provider: refused_as_request_errors answers it (500)
    try:
        check_inputs(model, request.messages, request.part_paths)
    except InputNotAccepted as exc:
        raise RequestError(422, str(exc), exc.path) from None


@contextlib.contextmanager
def refused_as_request_errors(agent: Agent) -> Iterator[None]:
    """Turn what `Agent.start` refuses into HTTP answers: a state that is not JSON or does not
    validate (422), a thread that cannot run now (409, e.g. its last run still runs); an agent
    whose model cannot be resolved is the server's fault (500), never a conflict."""
    try:
        agent.resolve_model()
    except ValueError as exc:
        raise RequestError(500, f"agent {agent.name or ''!r} cannot run: {exc}; this is the "
                                "server's configuration, not the request") from None
    try:
        yield
    except pydantic.ValidationError as exc:
        raise RequestError(422, _validation_message(exc), "state") from None
    except TypeError as exc:
        raise RequestError(422, str(exc), "state") from None
    except InputNotAccepted as exc:  # a part kept in the thread that this model cannot take
        raise RequestError(422, str(exc), exc.path) from None
    except ValueError as exc:
        raise RequestError(409, str(exc)) from None


def chosen_decision(request: RunRequest, paused: RunState | None) -> Decision:
    """The request's answer to the approval request `paused` waits for.

    Raises:
        RequestError: 422 when the thread has no paused run, or the request answers another.
    """
    pending = paused.pending if paused is not None else None
    if pending is None:
        raise RequestError(422, f"thread {request.thread_id!r} has no run waiting for an answer",
                           "resume")
    chosen = [d for d in request.decisions if d.request_id == pending.id]
    unknown = [d.request_id for d in request.decisions if d.request_id != pending.id]
    if unknown or not chosen:
        missing = "" if chosen else f"; the open request is {pending.id!r}"
        raise RequestError(
            422,
            f"resume answers request(s) {unknown or [d.request_id for d in request.decisions]}"
            f" that thread {request.thread_id!r} does not have open{missing}",
            "resume",
        )
    return chosen[0]


async def edit_paused(versions: ThreadState, request: RunRequest) -> Any:
    """The paused run's state with the person's edits (the client's state against the version
    it saw) rebased onto it, or None when they change nothing. The work is done in a worker
    thread: it grows with the state's size, and a big state must not hold the event loop.

    Raises:
        RequestError: 409, naming the path, where the run wrote the same place meanwhile.
    """
    client = request.state
    seen = request.state_seen
    with _state_not_json(), _refused_edits(versions, "in the paused run"):
        return await anyio.to_thread.run_sync(edit_running, versions, client,
                                              client if seen is None else seen,
                                              request.state_version)


async def start_state(request: RunRequest, kept: ThreadState | None, *,
                      version_seen: Callable[[], Awaitable[tuple[int, Any] | None]] | None = None
                      ) -> Any:
    """The state a new run starts from: the client's, merged with the thread's kept state.

    No state from the client (or `{}` from one that never received this thread's state, e.g. a
    reloaded page): the kept state. Otherwise the client's edits on top of the version it last
    saw, rebased onto the kept state's latest version (`merge`), in a worker thread unless the
    client sent the latest version as it is: a merge's work grows with the state's size (it is
    linear), and a big state must not hold the event loop.

    The version it last saw is the one it names; else the one `version_seen()` finds, where
    its messages tell (asked only when the state is not the latest as it is: the version's
    number, and its state where the kept versions no longer hold it); else the one its state
    is, or is closest to.
    """
    with _state_not_json(), _refused_edits(kept, "since the version it was made on"):
        return await _start_state(request, kept, version_seen)


async def _start_state(request: RunRequest, kept: ThreadState | None,
                       version_seen: Callable[[], Awaitable[tuple[int, Any] | None]] | None) -> Any:
    client = request.state
    fresh = client is None or (not request.saw_thread and json_equal(client, {}))
    if kept is None or not kept.version:
        return {} if client is None else client
    if fresh:
        return kept.frozen()
    seen = request.state_seen
    if seen is None and isinstance(client, dict | list) and not client:
        seen = kept.frozen()  # cleared: what it cleared is all it had, the latest at best
    version = request.state_version
    if seen is None and version is None:
        if kept.is_latest(client):
            return kept.frozen()
        seen_at = None if version_seen is None else await version_seen()
        if seen_at is not None:  # its edits are on what the run it saw last left: an undo is
            number, state = seen_at  # one, even back to an older version's content
            if not kept.keeps(number):  # (that state, which the kept versions no longer hold)
                return await anyio.to_thread.run_sync(merge_onto, kept, client, state)
            version = number
    return await anyio.to_thread.run_sync(merge, kept, client, client if seen is None else seen,
                                          version)


def check_news(request: RunRequest, conversation: State | None, placement: Placement,
               start: Any, kept: ThreadState) -> None:
    """Refuse a request that brings its thread nothing, whose run would only answer again what
    the thread answered (a second, identical reply): the same request sent again, or a tab
    that missed what followed it. Nothing new is: no new message, no going back, no answer, no
    tool result a call waits for, and the state as the thread keeps it; on a thread whose last
    message is the agent's answer (`conversation` before the request is placed in it).

    Raises:
        RequestError: 409, saying so.
    """
    if (conversation is None or placement.rewind is not None or placement.new
            or request.decisions or conversation.pending_calls or not conversation.messages
            or conversation.messages[-1].role != "assistant"
            or not kept.version or not kept.is_latest(start)):
        return
    raise RequestError(
        409, f"thread {request.thread_id!r} has nothing new to answer: the request has no new "
             "message, answer or tool result the thread waits for, and leaves the state as it "
             "is (it was sent before, or by a tab that missed what followed); send a new "
             "message, or go back to one (the messages up to it) to have it answered again",
        "messages")


def _branch(conversation: State, length: int) -> None:
    """Go back to the first `length` entries of the history: an edit or a regenerate branches
    there. The history keeps the old branch (and a `Restored` entry saying so)."""
    conversation.restore(State(history=conversation.history[:length]).snapshot())


def _validation_message(exc: pydantic.ValidationError) -> str:
    return "state does not match the agent's state type: " + describe_problems(exc, root="state")


@contextlib.contextmanager
def _refused_edits(versions: ThreadState | None, where: str) -> Iterator[None]:
    """A client's edits of the state that cannot be rebased (a place they write is gone) or
    whose version is not kept: 409 with the current `version` and `state`, as an edit sent
    alone gets; nothing of the request applies."""
    try:
        yield
    except (Conflict, LookupError) as exc:
        assert versions is not None
        reason = (f"the shared state changed at {exc.path or '/'} {where}: a place your state "
                  "changes is gone" if isinstance(exc, Conflict) else str(exc))
        raise RequestError(409, f"{reason}; nothing of your request was applied: send it "
                                f"again on the current state (version {versions.version}, as "
                                "the thread gives it: GET /threads/{id})",
                           "state", details={"version": versions.version,
                                             "state": thaw(versions.frozen())}) from None


@contextlib.contextmanager
def _state_not_json() -> Iterator[None]:
    """A client's state that is not JSON (met where it is merged with the kept one): 422."""
    try:
        yield
    except NotJSON as exc:
        raise RequestError(422, str(exc), "state") from None
