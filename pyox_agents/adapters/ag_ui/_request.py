"""An AG-UI `RunAgentInput` -> a `RunRequest`: messages, state, tools, context, results, resume.

Everything a client can get wrong is answered here, before any stream: malformed JSON is a 400,
a body that is not a `RunAgentInput` (or that the runtime cannot use) a 422 naming the field.
Unknown extra fields are ignored. `forwardedProps` reaches tools as `ctx.forwarded_props`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pydantic
from ag_ui.core import (
    AssistantMessage,
    DeveloperMessage,
    ResumeEntry,
    RunAgentInput,
    SystemMessage,
    TextPart,
    ToolMessage,
    UserMessage,
)
from ag_ui.core import ToolCall as AgUiToolCall
from pydantic.alias_generators import to_camel

from pyox_agents._run_request import (
    Decision,
    RequestError,
    RunRequest,
    ToolOutput,
    read_double_texting,
)
from pyox_agents.adapters._body import read_json
from pyox_agents.adapters.ag_ui._events import interrupt_reason
from pyox_agents.adapters.ag_ui._parts import upgrade_binary_parts, user_content
from pyox_agents.models.base import ToolSpec
from pyox_agents.state._validation import validation_problems
from pyox_agents.state.frozen import NotJSON, freeze
from pyox_agents.state.messages import Message, ToolCall
from pyox_agents.state.run import ApprovalRequest

__all__ = ["read_input", "request_from_input"]

_TAGS = frozenset({"developer", "system", "assistant", "user", "tool", "activity", "reasoning",
                   "text", "image", "audio", "video", "document", "data", "url", "file"})
"""Discriminator tags pydantic puts in an error's location after a list index."""
_TYPES_SHOWN = frozenset({"str", "int", "float", "bool", "dict", "list", "none"})
"""Union members pydantic puts in an error's location after a field name."""


def read_input(body: bytes) -> RunAgentInput:
    """The `RunAgentInput` in `body` (legacy `binary` content parts read as media parts).

    Raises:
        RequestError: 400 when `body` is not JSON; 422, naming the field, when it is not a valid
            `RunAgentInput`.
    """
    data = read_json(body, "a RunAgentInput as a JSON object", frozen="state")
    if not isinstance(data, dict):
        raise RequestError(422, f"the body is a JSON {type(data).__name__}, not a RunAgentInput "
                                "object: send {threadId, runId, messages, ...}", "body")
    try:
        return RunAgentInput.model_validate(upgrade_binary_parts(data))
    except pydantic.ValidationError as exc:
        where, what = validation_problems(exc, root="body", location=_field)[0]
        raise RequestError(422, f"the body is not a valid RunAgentInput: {where}: {what}",
                           where) from None


def request_from_input(run_input: RunAgentInput, pending: ApprovalRequest | None = None
                       ) -> RunRequest:
    """The `RunRequest` a validated `RunAgentInput` asks for; `pending` is the approval request
    the thread's paused run waits for (the service looks it up), which `resume` must answer.

    `messages` is the client's whole history (reasoning, activity and subagent messages are not
    the conversation's and are left out); `state` absent or null means none (the thread's kept
    state, on a server that keeps it; `{}` too from a client that has no assistant message yet,
    i.e. never received this thread's state); `tools` are the client's own tools; `context`
    becomes "description: value" lines; tool messages are the client's results for its tools'
    calls (the server keeps those its thread still waits for); `resume` answers the interrupt
    the thread's paused run waits for.

    Raises:
        RequestError: 422 naming the field: a message part the runtime cannot pass on, a tool
            result for no known call, a resume that does not answer the open interrupt or
            answers it with an invalid payload.
    """
    messages, outputs, paths = _messages(run_input)
    return RunRequest(
        thread_id=run_input.thread_id,
        messages=messages,
        state=run_input.state,
        saw_thread=any(isinstance(m, AssistantMessage) for m in run_input.messages),
        tool_outputs=outputs,
        decisions=_decisions(run_input, pending),
        client_tools=tuple(
            ToolSpec(t.name, t.description, t.parameters if isinstance(t.parameters, Mapping)
                     else {"type": "object", "properties": {}})
            for t in run_input.tools or ()),
        context=tuple(f"{c.description}: {c.value}" for c in run_input.context or ()),
        forwarded_props=_forwarded(run_input.forwarded_props),
        part_paths=paths,
        double_texting=read_double_texting(
            run_input.forwarded_props.get("doubleTexting")
            if isinstance(run_input.forwarded_props, Mapping) else None,
            "forwardedProps.doubleTexting"),
        state_version=_state_version(run_input.forwarded_props))


# -- messages ----------------------------------------------------------------------------------


_Paths = dict[tuple[int, str, int], str]


def _messages(run_input: RunAgentInput
              ) -> tuple[tuple[Message, ...], tuple[ToolOutput, ...], _Paths]:
    out: list[Message] = []
    paths: _Paths = {}
    outputs: list[ToolOutput] = []
    calls: dict[str, ToolCall] = {}
    for index, message in enumerate(run_input.messages):
        if getattr(message, "subagent_run_id", None) is not None:
            continue  # a subagent's message, shown by the client; not this conversation's
        # most of a history: text only, as `Message.user` and `Message.assistant` make it
        if type(message) is UserMessage and type(message.content) is str:
            out.append(Message(role="user", content=message.content, id=message.id))
            continue
        if type(message) is AssistantMessage and not message.tool_calls:
            out.append(Message(role="assistant", content=message.content or ""))
            continue
        where = f"messages[{index}]"
        match message:
            case UserMessage(content=content):
                parts = user_content(content, where)
                paths.update(((len(out), "images", n), f"{where}.content[{i}]")
                             for n, i in enumerate(parts.image_at))
                paths.update(((len(out), "files", n), f"{where}.content[{i}]")
                             for n, i in enumerate(parts.file_at))
                out.append(dataclasses.replace(
                    Message.user(parts.text, *parts.images, *parts.files), id=message.id))
            case SystemMessage(content=content) | DeveloperMessage(content=content):
                out.append(Message.system(content))
            case AssistantMessage(content=content, tool_calls=tool_calls):
                made = tuple(_tool_call(call) for call in tool_calls or ())
                calls.update((call.id, call) for call in made)
                out.append(Message.assistant(content or "", made))
            case ToolMessage(content=content, tool_call_id=call_id, error=error):
                call = calls.get(call_id)
                if call is None:
                    raise RequestError(
                        422, f"{where} is the result of tool call {call_id!r}, which no earlier "
                             "assistant message asked for; send the assistant message with that "
                             "tool call before its result", f"{where}.toolCallId")
                text = _tool_content(content, where)
                if not text and error is not None:
                    text = error
                out.append(Message.tool(call, text, is_error=error is not None))
                outputs.append(ToolOutput(call_id, text, is_error=error is not None))
            case _:
                continue  # reasoning and activity messages are the client's display only
    return tuple(out), tuple(outputs), paths


def _tool_call(call: AgUiToolCall) -> ToolCall:
    text = call.function.arguments
    try:
        arguments = json.loads(text) if text.strip() else {}
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        return ToolCall(call.function.name, {}, id=call.id, raw_arguments=text)
    return ToolCall(call.function.name, arguments, id=call.id)


def _tool_content(content: str | Sequence[Any], where: str) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for index, part in enumerate(content):
        if not isinstance(part, TextPart):
            raise RequestError(
                422, f"{where}.content[{index}] is a {getattr(part, 'type', '?')} part; a tool "
                     "result is given to the agent as text: send text parts or a string",
                f"{where}.content[{index}]")
        texts.append(part.text)
    return "\n".join(texts)


# -- resume ------------------------------------------------------------------------------------


def _decisions(run_input: RunAgentInput, request: ApprovalRequest | None
               ) -> tuple[Decision, ...]:
    """The person's answer to the interrupt the thread waits for, from `resume`.

    Entries for interrupts the thread does not have open are ignored (the protocol says to go
    on) when the request brings a message of the person's; when it has one open, `resume` must
    answer it. A resume that is the whole request (its history ends with the agent's message)
    while nothing is open answers what was answered or cancelled already (in another tab, or
    by this request sent before): it is refused, as it is on the AI SDK, not run again.
    """
    if not run_input.resume:
        return ()
    if request is None:
        if run_input.messages and run_input.messages[-1].role != "user":
            raise RequestError(
                422, f"thread {run_input.thread_id!r} has no run waiting for an answer: resume "
                     f"answers {[e.interrupt_id for e in run_input.resume]}, which it does not "
                     "wait for (answered or cancelled already, in another tab or by this request "
                     "sent before, or never asked); load the thread again (connect) to see what "
                     "it holds", "resume")
        return ()
    for index, entry in enumerate(run_input.resume):
        if entry.interrupt_id == request.id:
            return (_decision(request, entry, f"resume[{index}]"),)
    raise RequestError(
        422, f"thread {run_input.thread_id!r} waits for interrupt {request.id!r} "
             f"({request.prompt!r}), and resume does not answer it; send "
             f"{{interruptId: {request.id!r}, status: \"resolved\" | \"cancelled\", payload}}",
        "resume")


def _decision(request: ApprovalRequest, entry: ResumeEntry, where: str) -> Decision:
    if entry.status == "cancelled":
        return Decision(request.id, approve=False, dismissed=True)
    reason = interrupt_reason(request)
    payload = entry.payload
    missing = "payload" not in entry.model_fields_set
    if reason == "approval":
        if missing or not isinstance(payload, dict) or not isinstance(payload.get("approved"),
                                                                       bool):
            raise RequestError(
                422, f"{where} answers approval interrupt {request.id!r} ({request.tool}) "
                     f"with payload {_shown(payload, missing)}; it must be "
                     "{\"approved\": true | false} (and \"arguments\": {...} to change them)",
                f"{where}.payload")
        arguments = payload.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise RequestError(
                422, f"{where}.payload.arguments for interrupt {request.id!r} must be an object "
                     f"of the tool's arguments, got {_shown(arguments, False)}",
                f"{where}.payload.arguments")
        approved = payload["approved"]
        return Decision(request.id, approve=approved,
                        arguments=arguments if approved and arguments is not None else None)
    if missing:
        raise RequestError(
            422, f"{where} answers input interrupt {request.id!r} ({request.prompt!r}) with no "
                 "payload; send the answer as its payload (it must match its responseSchema)",
            f"{where}.payload")
    return Decision(request.id, approve=True, answer=payload)  # held to the schema on resume


def _shown(value: Any, missing: bool) -> str:
    if missing:
        return "(none)"
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _field(loc: Sequence[int | str]) -> str:
    """A pydantic error location as the body's field path, as the protocol spells its fields
    (`ag_ui.core`'s alias generator): `messages[2].toolCallId`."""
    out = ""
    previous: int | str | None = None
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif (isinstance(previous, int) and part in _TAGS) or part in _TYPES_SHOWN \
                or "[" in part or "-" in part:
            pass  # a union branch, not a field
        else:
            out += f".{to_camel(part)}" if out else to_camel(part)
        previous = part
    return out


def _forwarded(props: Any) -> Any:
    """`forwardedProps` frozen (tools read it), or a 422 naming it when it is not JSON."""
    try:
        return None if props is None else freeze(props, "forwardedProps")
    except NotJSON as exc:
        raise RequestError(422, str(exc), "forwardedProps") from None


def _state_version(props: Any) -> int | None:
    """`forwardedProps.stateVersion`: the number of the version the client's state was made
    on (the `stateVersion` of the last state event it applied), or None.

    Raises:
        RequestError: 422 when it is there but not a whole number from 1.
    """
    if not isinstance(props, Mapping) or props.get("stateVersion") is None:
        return None
    version = props["stateVersion"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RequestError(422, f"forwardedProps.stateVersion is {version!r}: send the "
                                "stateVersion of the last state event the page applied (a "
                                "whole number from 1), or leave it out",
                           "forwardedProps.stateVersion")
    return version
