"""A remote AG-UI run read as a subagent's run: each AG-UI event (a parsed JSON object) becomes
the runtime events a local subagent's run would give its parent's stream, and the remote's
shared state is followed (`STATE_SNAPSHOT` replaces it, `STATE_DELTA` patches it)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pyox_agents._redact import redact_text
from pyox_agents.events import (
    CustomEvent,
    ReasoningDelta,
    ReasoningEnded,
    ReasoningStarted,
    RuntimeEvent,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
)
from pyox_agents.runtime._replies import valid_json
from pyox_agents.state.frozen import JSON, freeze
from pyox_agents.state.messages import Usage
from pyox_agents.state.patch import apply_json
from pyox_agents.tools import ToolError

__all__ = ["RemoteAgentError", "RemoteRun", "loads"]


class RemoteAgentError(ToolError):
    """A remote agent's run did not give an answer: it failed (`RUN_ERROR`), could not be
    reached, broke its stream, or waits for a person. The tool call that ran it is an error
    result the model reads; the parent run goes on.

    The message names the URL (its password and secret parameters hidden) and quotes what the
    remote said, for the server's log and the run's record; the model and the person read
    `public_message`, which names the agent only.
    """


class RemoteRun:
    """One remote run as it streams: `on` each AG-UI event; `answer`, `state`, `usage` after.

    `emit` takes the runtime events for the parent's stream; `where` names the remote agent in
    the messages the server keeps ("the remote agent 'research' at http://..."), `who` in
    what the model and the person read ("the remote agent 'research'"). `state` is the state the
    remote run was given, followed through its state events when `follow_state` (else they
    are ignored: its changes stay its own).
    """

    def __init__(self, name: str, call_id: str, where: str, state: JSON,
                 emit: Callable[[Sequence[RuntimeEvent]], None], *,
                 follow_state: bool = True) -> None:
        self.name, self.call_id, self.where = name, call_id, where
        self.who = f"the remote agent {name!r}"
        self.follow_state = follow_state
        self.state = state
        """The remote run's shared state as it last said (frozen)."""
        self.state_changed = False
        self.answer: Any = None
        self.usage = Usage()
        self.run_id: str | None = None
        self.ended = False
        self._emit = emit
        self._texts: dict[str, list[str]] = {}
        self._reasoning: dict[str, list[str]] = {}
        self._calls: dict[str, tuple[str, list[str]]] = {}
        self._names: dict[str, str] = {}
        self._last_text = ""

    def on(self, event: Mapping[str, Any]) -> None:
        """Take the next AG-UI event.

        Raises:
            RemoteAgentError: the remote run failed, waits for a person, or sent a state
                change that does not apply.
        """
        kind = event.get("type")
        if kind == "RUN_STARTED":
            if self.run_id is None:
                self.run_id = str(event.get("runId", ""))
                self._send(SubagentStarted(self.run_id, self.call_id, self.name,
                                           str(event.get("threadId", ""))))
            return
        if self.run_id is None:
            self.fail(f"{self.where} sent {kind} before RUN_STARTED; is this an AG-UI endpoint?",
                      f"{self.who} did not answer as an AG-UI agent")
        run_id = str(event.get("subagentRunId") or self.run_id)
        if kind in ("STATE_SNAPSHOT", "STATE_DELTA"):
            self._state(event)
        elif kind == "RUN_FINISHED":
            self._finished(event)
        elif kind == "RUN_ERROR":
            code = f" ({event['code']})" if event.get("code") else ""
            self.fail(f"{self.where} failed{code}: {event.get('message', '')}",
                      f"{self.who} failed{code}; the server's log has the details")
        else:
            self._part(kind, event, run_id)

    def _part(self, kind: Any, event: Mapping[str, Any], run_id: str) -> None:
        """A text, reasoning, tool-call, custom or nested-subagent event."""
        message_id = str(event.get("messageId", ""))
        call_id = str(event.get("toolCallId", ""))
        if kind == "TEXT_MESSAGE_START":
            self._texts[message_id] = []
            self._send(TextStarted(message_id, run_id=run_id))
        elif kind == "TEXT_MESSAGE_CONTENT" and message_id in self._texts:
            self._texts[message_id].append(str(event.get("delta", "")))
            self._send(TextDelta(message_id, str(event.get("delta", "")), run_id=run_id))
        elif kind == "TEXT_MESSAGE_END" and message_id in self._texts:
            self._last_text = "".join(self._texts.pop(message_id))
            self._send(TextEnded(message_id, self._last_text, run_id=run_id))
        elif kind == "REASONING_MESSAGE_START":
            self._reasoning[message_id] = []
            self._send(ReasoningStarted(message_id, run_id=run_id))
        elif kind == "REASONING_MESSAGE_CONTENT" and message_id in self._reasoning:
            self._reasoning[message_id].append(str(event.get("delta", "")))
            self._send(ReasoningDelta(message_id, str(event.get("delta", "")), run_id=run_id))
        elif kind == "REASONING_MESSAGE_END" and message_id in self._reasoning:
            text = "".join(self._reasoning.pop(message_id))
            self._send(ReasoningEnded(message_id, text, run_id=run_id))
        elif kind in ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"):
            self._tool_call(kind, call_id, event, run_id)
        elif kind == "CUSTOM":
            self._send(CustomEvent(str(event.get("name", "")), event.get("value"),
                                   run_id=run_id))
        elif kind == "SUBAGENT_STARTED":
            self._send(SubagentStarted(run_id, str(event.get("parentToolCallId") or ""),
                                       str(event.get("name", "")), ""))
        elif kind == "SUBAGENT_FINISHED":
            self._send(SubagentFinished(run_id, "", answer=event.get("result")))

    def _tool_call(self, kind: str, call_id: str, event: Mapping[str, Any], run_id: str) -> None:
        if kind == "TOOL_CALL_START":
            name = str(event.get("toolCallName", ""))
            self._calls[call_id] = (name, [])
            self._names[call_id] = name
            message_id = str(event.get("parentMessageId") or "")
            self._send(ToolCallStarted(call_id, name, message_id, run_id=run_id))
        elif kind == "TOOL_CALL_ARGS" and call_id in self._calls:
            self._calls[call_id][1].append(str(event.get("delta", "")))
            self._send(ToolCallArgsDelta(call_id, str(event.get("delta", "")), run_id=run_id))
        elif kind == "TOOL_CALL_END" and call_id in self._calls:
            name, pieces = self._calls.pop(call_id)
            self._send(ToolCallEnded(call_id, name, _arguments("".join(pieces)), run_id=run_id))
        elif kind == "TOOL_CALL_RESULT":
            self._send(ToolResult(call_id, self._names.get(call_id, ""),
                                  result=_content(event.get("content")), run_id=run_id))

    def _state(self, event: Mapping[str, Any]) -> None:
        if event.get("subagentRunId") or not self.follow_state:
            return  # a nested agent's own state, or changes that stay the remote's
        try:
            if event["type"] == "STATE_SNAPSHOT":
                new = freeze(event.get("snapshot"), "the remote STATE_SNAPSHOT")
            else:
                new = apply_json(self.state, event.get("delta") or [])
        except (TypeError, ValueError) as exc:
            self.fail(f"{self.where} sent a {event['type']} that does not apply to its state "
                      f"({exc}); none of its state changes were applied",
                      f"{self.who} sent a state change that does not apply to its state; none "
                      "of its state changes were applied")
        self.state_changed = self.state_changed or new is not self.state
        self.state = new

    def _finished(self, event: Mapping[str, Any]) -> None:
        for usage in event.get("usage") or []:
            if isinstance(usage, Mapping):
                self.usage = self.usage + Usage(int(usage.get("inputTokens") or 0),
                                                int(usage.get("outputTokens") or 0), 1)
        outcome = event.get("outcome")
        if isinstance(outcome, Mapping) and outcome.get("type") == "interrupt":
            asked = "; ".join(str(i.get("message") or i.get("reason") or "")
                              for i in outcome.get("interrupts") or [] if isinstance(i, Mapping))
            waits = (f"waits for a person's approval ({asked}), which cannot be given through "
                     "this tool; answer it at the remote agent, or give it a task that needs no "
                     "approval")
            self.fail(f"{self.where} {waits}", f"{self.who} {waits}")
        result = event.get("result")
        self.answer = result if result is not None else self._last_text
        self._close()
        self.ended = True
        assert self.run_id is not None
        self._send(SubagentFinished(self.run_id, self.call_id, answer=self.answer))

    def fail(self, message: str, public: str) -> Any:
        """End the subagent's part of the parent's stream with `public`, and raise `message`
        (kept on the server) with it.

        Raises:
            RemoteAgentError: always, with `message` and `public`.
        """
        if self.run_id is not None and not self.ended:
            self._close()
            self._send(SubagentFinished(self.run_id, self.call_id, error=public))
        self.ended = True
        raise RemoteAgentError(redact_text(message), public_message=public)

    def _close(self) -> None:
        """End the text, reasoning and tool calls the remote left open."""
        run_id = self.run_id
        for message_id, texts in self._texts.items():
            self._send(TextEnded(message_id, "".join(texts), run_id=run_id))
        for message_id, pieces in self._reasoning.items():
            self._send(ReasoningEnded(message_id, "".join(pieces), run_id=run_id))
        for call_id, (name, args) in self._calls.items():
            self._send(ToolCallEnded(call_id, name, _arguments("".join(args)), run_id=run_id))
        self._texts, self._reasoning, self._calls = {}, {}, {}

    def _send(self, event: RuntimeEvent) -> None:
        self._emit((event,))


def loads(text: str) -> Any:
    """`json.loads(text)`, a lone surrogate that an escape in it gives (`"\\ud800"`, valid
    JSON, no text) replaced by U+FFFD, as in a model's reply.

    Raises:
        ValueError: `text` is not JSON.
        RecursionError: it nests too deep.
    """
    value = json.loads(text)
    return valid_json(value) if "\\ud" in text or "\\uD" in text else value


def _arguments(text: str) -> Mapping[str, Any]:
    try:
        value = loads(text or "{}")
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _content(content: Any) -> Any:
    """A `TOOL_CALL_RESULT`'s content as a result: JSON text parsed, parts' text joined."""
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    if isinstance(content, str):
        try:
            return loads(content)
        except (ValueError, RecursionError):
            return content
    return content
