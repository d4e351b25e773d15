"""A thread's history as the `UIMessage[]` a reloaded `useChat` page starts from
(`useChat({messages})`), with the ids the stream gave.

- a user message: `{id, role: "user", parts: [text, files]}`, the id its client gave it (a
  next request names it so); one sent while calls waited for results comes after them, as
  the model read it;
- an assistant message per turn, id `msg_<the first 32 hex digits of the run>` as `start`
  said (a continuation, after an approval or a client tool's output, writes into the same
  message, as it did on the wire; a message the run answers after one typed while it waited
  has `assistant_message_id(run, that message's id)`); a `step-start` part per model reply,
  its reasoning, text and tool parts in their final states (`output-available`,
  `output-error`, `output-denied`; a call waiting for a person `approval-requested` with its
  approval id, or for ai 5 the `data-approval-request` part; one waiting for the page's own
  tool `input-available`); a call a crash cut, which the run asks about once a message was
  typed after it, is asked about in a new message after that one, as the stream asked;
- the last assistant message ends with the `data-state` part of the thread's shared state, and
  its `data-state-version` part where the server numbers its versions, as the stream ends.

A `regenerate` went back in the history (`Restored`): what it replaced is left out. Live parts
(`data-<name>`, sources, files from tools) and message metadata are not kept in the history.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from pyox_agents.adapters.ai_sdk._request import assistant_message_id
from pyox_agents.adapters.ai_sdk._state_parts import state_parts
from pyox_agents.adapters.ai_sdk._user_parts import user_ui_parts
from pyox_agents.adapters.ai_sdk._versions import approval_request_part
from pyox_agents.state._shown_ids import user_message_id
from pyox_agents.state.frozen import thaw
from pyox_agents.state.run import ApprovalRequest

__all__ = ["history_to_ui_messages"]

UIMessage = dict[str, Any]


def history_to_ui_messages(history: Sequence[Any], state: Any = None, *,
                           pending: ApprovalRequest | None = None,
                           sdk_version: int = 7, thread_id: str = "",
                           version: int | None = None) -> list[UIMessage]:
    """The `UIMessage`s of a thread's `history` (`State.history` entries), its shared `state`
    last (with its `version`, where the server numbers them: the page's next request names
    it), and `pending` (the approval the thread waits for) on its call's part. A user
    message has the id its client gave it, else one of its place in thread `thread_id`."""
    out: list[UIMessage] = []
    calls: dict[str, dict[str, Any]] = {}  # call id -> its tool part
    run_id: str | None = None
    waiting: set[str] = set()  # calls asked for that have no result yet
    held: list[UIMessage] = []  # user messages sent meanwhile: shown after the results
    for number, entry in _in_effect(history):
        kind = entry.kind
        if kind == "import":  # the history a thread's first request brought
            out.extend(_imported(entry.content, calls, thread_id, number))
        elif kind == "user_message":
            (held if waiting else out).append({
                "id": user_message_id(thread_id, entry.content, number, 0, kind), "role": "user",
                "parts": user_ui_parts(entry.content)})
        elif kind == "run_start":
            run_id = entry.content
            if not out or out[-1]["role"] != "assistant":
                message_id = assistant_message_id(run_id) if run_id else f"msg-{number}"
                out.append({"id": message_id, "role": "assistant", "parts": []})
        elif kind == "model_reply" and entry.purpose == "think" and out:
            if out[-1]["role"] == "user":  # the run answers a message sent while it waited
                message_id = (assistant_message_id(run_id, out[-1]["id"]) if run_id
                              else f"msg-{number}")
                out.append({"id": message_id, "role": "assistant", "parts": []})
            out[-1]["parts"].extend(_reply_parts(entry.content, calls))
            waiting.update(call.id for call in entry.content.tool_calls)
        elif kind == "tool_result" and entry.call.id in calls:
            calls[entry.call.id].update(_outcome(entry, sdk_version))
            waiting.discard(entry.call.id)
            if not waiting:
                out.extend(held)
                held.clear()
    if pending is not None and pending.call_id in calls:
        part = calls[pending.call_id]
        message = next(m for m in reversed(out) if part in m["parts"])
        if held and pending.call_id in waiting and run_id is not None:  # a crash cut the call:
            # the run asks about it in a new message, answering the last one typed since
            part = dict(part)
            message = {"id": assistant_message_id(run_id, held[-1]["id"]), "role": "assistant",
                       "parts": [{"type": "step-start"}]}
            held.append(message)
            if sdk_version >= 6:
                message["parts"].append(part)
        _waiting(part, pending, message, sdk_version)
    out.extend(held)
    _end_with_state(out, state, version)
    return out


def _end_with_state(out: list[UIMessage], state: Any, version: int | None) -> None:
    """The shared state, and its number where there is one, on the last assistant message, as
    the stream ends its message."""
    assistants = [m for m in out if m["role"] == "assistant"]
    if assistants and state is not None:
        assistants[-1]["parts"].extend(state_parts(state, version or 0))


def _waiting(part: dict[str, Any], pending: ApprovalRequest, message: UIMessage,
             sdk_version: int) -> None:
    """Show the call waiting for a person as the stream did: an `approval-requested` part (ai 6
    and 7), or (ai 5) the `data-approval-request` part, in `message`, that the page answers
    with `approvals`."""
    if sdk_version >= 6:
        part.update(state="approval-requested", approval={"id": pending.id})
        return
    message["parts"].append(approval_request_part(pending))


def _in_effect(history: Sequence[Any]) -> list[tuple[int, Any]]:
    """The entries the conversation still has: a `Restored` drops those after its point."""
    kept: list[tuple[int, Any]] = []
    for number, entry in enumerate(history):
        if entry.kind == "context_change" and type(entry.content).__name__ == "Restored":
            kept = [(n, e) for n, e in kept if n < entry.content.history_length]
        else:
            kept.append((number, entry))
    return kept


def _reply_parts(reply: Any, calls: dict[str, dict[str, Any]]) -> Iterable[dict[str, Any]]:
    return _step_parts(reply.text, reply.reasoning, reply.tool_calls, calls)


def _step_parts(text: str, reasoning: str | None, tool_calls: Iterable[Any],
                calls: dict[str, dict[str, Any]]) -> Iterable[dict[str, Any]]:
    """The parts of one step of an assistant message; each call's part kept in `calls`."""
    yield {"type": "step-start"}
    if reasoning:
        yield {"type": "reasoning", "text": reasoning, "state": "done"}
    if text:
        yield {"type": "text", "text": text, "state": "done"}
    for call in tool_calls:
        part = {"type": f"tool-{call.name}", "toolCallId": call.id, "state": "input-available",
                "input": dict(call.arguments)}
        calls[call.id] = part
        yield part


def _imported(messages: Sequence[Any], calls: dict[str, dict[str, Any]], thread_id: str,
              number: int) -> list[UIMessage]:
    """The messages of an `ImportEntry` (history entry `number`) as UI messages: each user
    message, and each assistant turn as one message of steps, its calls' parts in their final
    states (the ids the thread's transcript gives them)."""
    out: list[UIMessage] = []
    for at, message in enumerate(messages):
        if message.role == "tool":
            if message.call_id in calls:
                calls[message.call_id].update(_imported_result(message))
            continue
        if message.role == "user":
            out.append({"id": user_message_id(thread_id, message, number, at, "import"),
                        "role": "user", "parts": user_ui_parts(message)})
        elif message.role == "assistant":
            if not out or out[-1]["role"] != "assistant":
                out.append({"id": user_message_id(thread_id, message, number, at, "import"),
                            "role": "assistant", "parts": []})
            out[-1]["parts"].extend(_step_parts(message.content, None, message.tool_calls,
                                                calls))
    return out


def _imported_result(message: Any) -> dict[str, Any]:
    """The final state of a tool part for a tool message a client brought: its text, read as
    the JSON it was sent as where it is JSON."""
    if message.is_error:
        return {"state": "output-error", "errorText": message.content or "the tool failed"}
    try:
        return {"state": "output-available", "output": json.loads(message.content)}
    except ValueError:
        return {"state": "output-available", "output": message.content}


def _outcome(entry: Any, sdk_version: int) -> dict[str, Any]:
    """The final state of a tool part for its `ToolResultEntry`."""
    if entry.outcome == "denied" and sdk_version >= 6:
        return {"state": "output-denied"}
    if entry.is_error or entry.outcome != "ok":
        return {"state": "output-error", "errorText": entry.text or "the tool failed"}
    return {"state": "output-available", "output": thaw(entry.content)}
