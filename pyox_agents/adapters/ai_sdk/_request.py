"""AI SDK requests: the `DefaultChatTransport` body becomes a `Chat` and a `RunRequest`.

The body is `{id, messages, trigger, messageId?, ...extras}` (extras from the transport's
`body` option). `messages` are `UIMessage`s, parsed leniently: part types and fields this module
does not know (newer `ai` majors add some every release) are ignored, never refused. A body
that is not what any `ai` client sends (not JSON, no chat id, no messages, a message that is not
a `UIMessage`, a new user message with nothing in it) is a 4xx naming the field.

What the request carries, in the runtime's terms:

- the conversation: user, system and assistant messages; an assistant message's tool parts
  become its tool calls and the tool messages that answer them (one assistant message per step);
- the shared state: the `state` body field, else the last `data-state` part in `messages`
  (the version the client last saw, numbered by the last `data-state-version`), on which its
  `state` is the person's edits. None means the thread's kept state, as `{}` from a client
  that never received a `data-state` part;
- approval answers: tool parts in state `approval-responded` with `approval: {id, approved,
  reason?}` (ai 6+), or the `approvals: [{id, approved, reason?}]` body field (how an ai 5
  client, which has no approval parts, answers a `data-approval-request`);
- client tool outputs: `output-available` / `output-error` parts of tools the agent does not
  have. The AI SDK sends no list of the tools a page runs itself; a page may declare them in a
  `clientTools: [{name, description?, inputSchema?}]` body field so that the model can call them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyox_agents._run_request import (
    Decision,
    RequestError,
    RunRequest,
    ToolOutput,
    read_double_texting,
)
from pyox_agents.adapters._body import read_json
from pyox_agents.adapters.ai_sdk._ui_checks import Trigger, read_trigger, read_ui_messages
from pyox_agents.adapters.ai_sdk._user_parts import user_message
from pyox_agents.models.base import ToolSpec
from pyox_agents.state.messages import Message, ToolCall

__all__ = ["SDK_VERSIONS", "Chat", "assistant_message_id", "parse_request",
           "ui_messages_to_messages"]

SDK_VERSIONS = (5, 6, 7)
"""The `ai` majors this adapter speaks (`sdk_version`)."""

_TOOL_RESULT_STATES = frozenset({"output-available", "output-error", "output-denied"})


@dataclass(frozen=True, slots=True)
class Chat:
    """What the stream needs to know of the request that started a run.

    `id` is the chat id (the thread); `message_id` the id of the assistant message a
    continuation (after an approval or a client tool output) keeps writing into, else None (the
    stream starts a new assistant message); `denied_calls` the tool calls a person refused in
    this request, whose results are sent as `tool-output-denied`; `state_seen` the shared
    state the client holds (its last `data-state` part, when it sent no edits of its own), so
    an opening snapshot equal to it is left out (None: unknown, always sent); `answers` the id
    of the user message that a run started earlier answers in a new assistant message (a
    message typed while the run waited for a person), which names that message.
    """

    id: str
    trigger: Trigger = "submit-message"
    message_id: str | None = None
    denied_calls: frozenset[str] = frozenset()
    sdk_version: int = 7
    state_seen: Any = field(default=None, compare=False)
    answers: str | None = None

    def to_json(self) -> dict[str, Any]:
        """This chat as JSON (another server process replays the run from it)."""
        return {"id": self.id, "trigger": self.trigger, "message_id": self.message_id,
                "denied_calls": sorted(self.denied_calls), "sdk_version": self.sdk_version,
                "answers": self.answers}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Chat:
        """The chat `to_json` gave."""
        return cls(data["id"], data["trigger"], data["message_id"],
                   frozenset(data["denied_calls"]), data["sdk_version"],
                   answers=data.get("answers"))


def assistant_message_id(run_id: str, answers: str | None = None) -> str:
    """The id of a run's assistant message: `msg_` and the run's first 32 hex digits (a replay
    gives the same), or, for a later message of the run that answers user message `answers`
    (one typed while it waited for a person), 32 hex digits of both."""
    if answers is None:
        return "msg_" + run_id[:32]
    return "msg_" + hashlib.sha256(f"{run_id}\n{answers}".encode()).hexdigest()[:32]


def check_sdk_version(sdk_version: int) -> int:
    """`sdk_version` if it is a supported `ai` major.

    Raises:
        ValueError: any other value.
    """
    if sdk_version not in SDK_VERSIONS:
        raise ValueError(f"sdk_version is the client's `ai` major: 5, 6 or 7, got {sdk_version!r}")
    return sdk_version


def parse_request(body: bytes, tools: Collection[str] = (), *, sdk_version: int = 7
                  ) -> tuple[Chat, RunRequest]:
    """The `Chat` and the `RunRequest` a `DefaultChatTransport` body asks for; `tools` are the
    names of the agent's own tools (calls of other tools are the client's).

    Validation of the state against the agent's `state_type`, and of approval ids against the
    approvals the server issued, happens when the run starts (`RunService.start`, 422).

    Raises:
        RequestError: 400 when the body is not a JSON object, 422 when a field no `ai` client
            would send that way is wrong (the message names it).
        ValueError: `sdk_version` is not 5, 6 or 7.
    """
    check_sdk_version(sdk_version)
    data = read_json(body, "the AI SDK DefaultChatTransport body: {id, messages, trigger}",
                     frozen="state")
    if not isinstance(data, dict):
        raise RequestError(400, f"the body is a JSON {type(data).__name__}, not an object; send "
                                "{id, messages, trigger}")
    chat_id = data.get("id")
    if not isinstance(chat_id, str) or not chat_id:
        raise RequestError(422, f"id is {chat_id!r}: send the chat id as a non-empty string",
                           "id")
    ui_messages = read_ui_messages(data)
    trigger = read_trigger(data.get("trigger", "submit-message"))
    last = ui_messages[-1]  # (there is one: `read_ui_messages` refuses none)
    continuing = trigger == "submit-message" and last.get("role") == "assistant"
    message_id = None
    if continuing:
        message_id = last.get("id") if isinstance(last.get("id"), str) else None
        if message_id is None and isinstance(data.get("messageId"), str):
            message_id = data["messageId"]
    decisions, denied = _decisions(ui_messages, data.get("approvals"), continuing)
    seen = _last_state_part(ui_messages)
    state = data.get("state")
    chat = Chat(chat_id, trigger, message_id, frozenset(denied), sdk_version,
                state_seen=seen if state is None or state == seen else None)
    messages, paths = _converted(ui_messages)
    request = RunRequest(
        thread_id=chat_id,
        messages=tuple(messages),
        part_paths=paths,
        state=seen if state is None else state,
        state_seen=seen,
        saw_thread=seen is not None,
        tool_outputs=tuple(_client_outputs(ui_messages, tools)),
        decisions=tuple(decisions),
        client_tools=tuple(_client_tools(data.get("clientTools"), tools)),
        double_texting=read_double_texting(data.get("doubleTexting"), "doubleTexting"),
        state_version=(_last_state_part(ui_messages, "data-state-version")
                       if seen is not None else None))
    return chat, request


def ui_messages_to_messages(ui_messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """The runtime's messages for a list of `UIMessage`s (as the model will see them).

    A user message's `file` parts become its images (`image/*`) and files (any other media
    type, with the part's `filename`). Parts of unknown types, reasoning, data parts and tools
    the backend ran on its own (`providerExecuted`, e.g. a subagent's calls) are left out.

    Raises:
        RequestError: 422 naming the part: a user message's `file` part without a string
            `url` and `mediaType`.
    """
    return _converted(ui_messages)[0]


def _converted(ui_messages: Sequence[Mapping[str, Any]]
               ) -> tuple[list[Message], dict[tuple[int, str, int], str]]:
    """The messages, and where each image and file came from (`RunRequest.part_paths`)."""
    out: list[Message] = []
    paths: dict[tuple[int, str, int], str] = {}
    for number, ui in enumerate(ui_messages):
        parts = _parts(ui)
        role = ui.get("role")
        if role == "user":
            message, where = user_message(ui, f"messages[{number}]")
            if message is not None:
                paths.update(((len(out), field, n), at) for (field, n), at in where.items())
                out.append(message)
        elif role == "system":
            text = "\n".join(p["text"] for p in parts if _is_text(p))
            if text:
                out.append(Message.system(text))
        elif role == "assistant":
            out.extend(_assistant_messages(parts))
    return out, paths


def _parts(ui: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    parts = ui.get("parts")
    if not isinstance(parts, list):
        content = ui.get("content")  # a pre-v5 message: {role, content}
        return [{"type": "text", "text": content}] if isinstance(content, str) else []
    return [p for p in parts if isinstance(p, Mapping) and isinstance(p.get("type"), str)]


def _is_text(part: Mapping[str, Any]) -> bool:
    return part["type"] == "text" and isinstance(part.get("text"), str)


def _tool_name(part: Mapping[str, Any]) -> str | None:
    """The tool of a tool part (`tool-<name>` or `dynamic-tool`), None for other parts."""
    kind = part["type"]
    if kind == "dynamic-tool":
        name = part.get("toolName")
        return name if isinstance(name, str) and name else None
    if kind.startswith("tool-") and len(kind) > 5 and isinstance(part.get("toolCallId"), str):
        return str(kind[5:])
    return None


def _assistant_messages(parts: Sequence[Mapping[str, Any]]) -> list[Message]:
    """One assistant message (and its tool results) per step of a UI assistant message."""
    out: list[Message] = []
    text: list[str] = []
    calls: list[ToolCall] = []
    results: list[Message] = []

    def flush() -> None:
        if text or calls:
            out.append(Message.assistant("".join(text), tuple(calls)))
            out.extend(results)
        text.clear()
        calls.clear()
        results.clear()

    for part in parts:
        if part["type"] == "step-start":
            flush()
            continue
        if _is_text(part):
            if calls:  # text after tool calls without a step-start: a new step
                flush()
            text.append(part["text"])
            continue
        name = _tool_name(part)
        if name is None or part.get("providerExecuted") is True:
            continue
        arguments = part.get("input")
        call = ToolCall(name, arguments if isinstance(arguments, dict) else {},
                        id=part["toolCallId"])
        calls.append(call)
        result = _tool_result(call, part)
        if result is not None:
            results.append(result)
    flush()
    return out


def _tool_result(call: ToolCall, part: Mapping[str, Any]) -> Message | None:
    state = part.get("state")
    if state == "output-available":
        output = part.get("output")
        text = output if isinstance(output, str) else json.dumps(
            output, ensure_ascii=False, separators=(",", ":"))
        return Message.tool(call, text)
    if state == "output-error":
        return Message.tool(call, _error_text(part), is_error=True)
    if state == "output-denied":
        approval = part.get("approval")
        reason = approval.get("reason") if isinstance(approval, Mapping) else None
        suffix = f": {reason}" if isinstance(reason, str) and reason else ""
        return Message.tool(call, f"denied by a person{suffix}", is_error=True)
    return None


def _last_state_part(ui_messages: Sequence[Mapping[str, Any]], kind: str = "data-state"
                     ) -> Any:
    """The data of the last `kind` part in `messages`, or None: the state the client last
    received, or (`data-state-version`) its number."""
    found = [p["data"] for ui in ui_messages for p in _parts(ui)
             if p["type"] == kind and "data" in p]
    if kind == "data-state" or not found:
        return found[-1] if found else None
    version = found[-1].get("version") if isinstance(found[-1], Mapping) else None
    return version if type(version) is int and version > 0 else None


def _decisions(ui_messages: Sequence[Mapping[str, Any]], approvals: Any, continuing: bool
               ) -> tuple[list[Decision], list[str]]:
    """Approval answers: `approval-responded` parts of the last message, then `approvals`."""
    decisions: list[Decision] = []
    denied: list[str] = []
    if continuing:
        index = len(ui_messages) - 1
        for number, part in enumerate(_parts(ui_messages[index])):
            approval = part.get("approval")
            if part.get("state") != "approval-responded" or not isinstance(approval, Mapping):
                continue
            where = f"messages[{index}].parts[{number}].approval"
            decision = _decision(approval, where)
            decisions.append(decision)
            if not decision.approve and isinstance(part.get("toolCallId"), str):
                denied.append(part["toolCallId"])
    if approvals is not None:
        if not isinstance(approvals, list):
            raise RequestError(422, "approvals is a list of {id, approved, reason?}", "approvals")
        for number, approval in enumerate(approvals):
            if not isinstance(approval, Mapping):
                raise RequestError(422, f"approvals[{number}] is not an object {{id, approved}}",
                                   f"approvals[{number}]")
            decisions.append(_decision(approval, f"approvals[{number}]"))
    return decisions, denied


def _decision(approval: Mapping[str, Any], where: str) -> Decision:
    request_id = approval.get("id")
    approved = approval.get("approved")
    if not isinstance(request_id, str) or not request_id:
        raise RequestError(422, f"{where}.id is {request_id!r}: send the approvalId the server "
                                "gave in its approval request", f"{where}.id")
    if not isinstance(approved, bool):
        raise RequestError(422, f"{where}.approved is {approved!r}: send true or false",
                           f"{where}.approved")
    reason = approval.get("reason")
    return Decision(request_id=request_id, approve=approved,
                    answer=reason if isinstance(reason, str) else None)


def _client_outputs(ui_messages: Sequence[Mapping[str, Any]], tools: Collection[str]
                    ) -> list[ToolOutput]:
    """Results the client gives for calls of tools the agent does not have (its own tools)."""
    outputs: list[ToolOutput] = []
    for ui in ui_messages:
        if ui.get("role") != "assistant":
            continue
        for part in _parts(ui):
            name = _tool_name(part)
            state = part.get("state")
            if (name is None or name in tools or part.get("providerExecuted") is True
                    or state not in _TOOL_RESULT_STATES):
                continue
            if state == "output-available":
                outputs.append(ToolOutput(part["toolCallId"], part.get("output")))
            else:
                text = _error_text(part) if state == "output-error" else "denied by a person"
                outputs.append(ToolOutput(part["toolCallId"], text, is_error=True))
    return outputs


def _error_text(part: Mapping[str, Any]) -> str:
    """An `output-error` part's `errorText`, or "the tool failed" where it has none (the
    client's `addToolResult` leaves it out, or null)."""
    text = part.get("errorText")
    return "the tool failed" if text is None else str(text)


def _client_tools(declared: Any, tools: Collection[str]) -> list[ToolSpec]:
    """The `clientTools` body field as tool specs; tools the agent has are its own, not these."""
    if declared is None:
        return []
    if not isinstance(declared, list):
        raise RequestError(422, "clientTools is a list of {name, description?, inputSchema?}",
                           "clientTools")
    specs: list[ToolSpec] = []
    for number, item in enumerate(declared):
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str) or not name:
            raise RequestError(422, f"clientTools[{number}] needs a name (a non-empty string)",
                               f"clientTools[{number}].name")
        assert isinstance(item, Mapping)
        if name in tools:
            continue
        schema = item.get("inputSchema", item.get("parameters"))
        description = item.get("description")
        specs.append(ToolSpec(
            name,
            description if isinstance(description, str) else "",
            schema if isinstance(schema, Mapping) else {"type": "object", "properties": {}},
        ))
    return specs
