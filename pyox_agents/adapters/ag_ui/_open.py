"""What an AG-UI translation has open (text, reasoning, tool calls, steps, per run, and the
active subagents), opened and closed in order, and the messages it streamed, kept by id."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    BaseEvent,
    ReasoningEndEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    StepFinishedEvent,
    StepStartedEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentFinishedSuccessOutcome,
    SubagentStartedEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from pyox_agents.adapters.ag_ui._messages import MessageDraft, as_json, result_id, result_text
from pyox_agents.state._pieces import Pieces

__all__ = ["OpenParts", "now_ms"]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(slots=True)
class _Parts:
    """What one run (the stream's own, or a subagent's) has open."""

    texts: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)


class OpenParts:
    """What one stream's translation has open, and the messages of this run it streamed."""

    __slots__ = ("call_message", "call_owner", "drafts", "parts", "subagents")

    def __init__(self) -> None:
        self.parts: dict[str | None, _Parts] = {None: _Parts()}
        self.subagents: dict[str, str | None] = {}
        """The active subagent runs, in start order, each with its parent (None: this run)."""
        self.drafts: dict[str, MessageDraft] = {}
        self.call_message: dict[str, str] = {}
        self.call_owner: dict[str, str | None] = {}

    # -- opening -------------------------------------------------------------------------------

    def _step_started(self, name: str, owner: str | None) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        if name not in parts.steps:
            parts.steps.append(name)
            yield StepStartedEvent(step_name=name, **self._attributed(owner))

    def _text_started(self, message_id: str, owner: str | None) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        if message_id not in parts.texts:
            parts.texts.append(message_id)
            self._draft(message_id, "assistant", owner)
            yield TextMessageStartEvent(message_id=message_id, role="assistant",
                                        **self._attributed(owner))

    def _reasoning_started(self, rid: str, owner: str | None) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        if rid not in parts.reasoning:
            parts.reasoning.append(rid)
            yield ReasoningStartEvent(message_id=rid, **self._attributed(owner))
            yield ReasoningMessageStartEvent(message_id=rid, role="reasoning",
                                             **self._attributed(owner))

    def _call_started(self, call_id: str, name: str, message_id: str, owner: str | None
                      ) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        if call_id in parts.calls:
            return
        parts.calls.append(call_id)
        draft = self._draft(message_id, "assistant", owner)
        draft.calls[call_id] = Pieces()
        draft.names[call_id] = name
        self.call_message[call_id] = message_id
        self.call_owner[call_id] = owner
        yield ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name,
                                 parent_message_id=message_id, **self._attributed(owner))

    def _subagent_started(self, run_id: str, call_id: str, name: str) -> Iterator[BaseEvent]:
        if run_id in self.parts:
            return
        self.parts[run_id] = _Parts()
        parent_run = self.call_owner.get(call_id)
        if parent_run not in self.subagents:
            parent_run = None
        self.subagents[run_id] = parent_run
        parents: dict[str, Any] = {"parent_tool_call_id": call_id} if call_id else {}
        if call_id in self.call_message:
            parents["parent_message_id"] = self.call_message[call_id]
        if parent_run is not None:
            parents["parent_subagent_run_id"] = parent_run
        yield SubagentStartedEvent(subagent_run_id=run_id, name=name, **parents)

    # -- closing -------------------------------------------------------------------------------

    def _text_ended(self, message_id: str, owner: str | None) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        if message_id in parts.texts:
            parts.texts.remove(message_id)
            yield TextMessageEndEvent(message_id=message_id, **self._attributed(owner))

    def _reasoning_ended(self, rid: str, owner: str | None) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        if rid in parts.reasoning:
            parts.reasoning.remove(rid)
            yield ReasoningMessageEndEvent(message_id=rid, **self._attributed(owner))
            yield ReasoningEndEvent(message_id=rid, **self._attributed(owner))

    def _call_ended(self, call_id: str, arguments: Mapping[str, Any] | None, owner: str | None
                    ) -> Iterator[BaseEvent]:
        """End a tool call; `arguments` None when it is cut short (nothing more is sent)."""
        parts = self._parts(owner)
        if call_id not in parts.calls:
            return
        parts.calls.remove(call_id)
        streamed = self._arguments(call_id)
        if not streamed and arguments is not None:  # else the client keeps "" as the arguments
            text = json.dumps(as_json(arguments), separators=(",", ":"))
            streamed.add(text)
            yield ToolCallArgsEvent(tool_call_id=call_id, delta=text, **self._attributed(owner))
        yield ToolCallEndEvent(tool_call_id=call_id, **self._attributed(owner))

    def _result(self, call_id: str, result: Any, error: str | None, owner: str | None
                ) -> Iterator[BaseEvent]:
        yield from self._call_ended(call_id, None, owner)
        content = error if error is not None else result_text(result)
        message_id = result_id(call_id)  # kept as a tool message
        draft = self._draft(message_id, "tool", owner)
        draft.call_id, draft.error = call_id, error
        draft.text = Pieces()
        draft.text.add(content)
        yield ToolCallResultEvent(message_id=message_id, tool_call_id=call_id, content=content,
                                  role="tool", **self._attributed(owner))

    def _subagent_finished(self, run_id: str, answer: Any, error: str | None
                           ) -> Iterator[BaseEvent]:
        if run_id not in self.subagents:
            return
        yield from self._close_subagents(parent=run_id)
        yield from self._close_parts(run_id)
        del self.subagents[run_id]
        if error is not None:
            yield SubagentErrorEvent(subagent_run_id=run_id, message=error)
        else:
            result = {} if answer is None else {"result": as_json(answer)}
            yield SubagentFinishedEvent(subagent_run_id=run_id,
                                        outcome=SubagentFinishedSuccessOutcome(), **result)

    def _close_subagents(self, parent: str | None = None) -> Iterator[BaseEvent]:
        """Close the subagents still active under `parent` (all when None), newest first."""
        for run_id in reversed(list(self.subagents)):
            if parent is not None and not self._descends(run_id, parent):
                continue
            del self.subagents[run_id]
            yield from self._close_parts(run_id)
            yield SubagentErrorEvent(subagent_run_id=run_id, code="cancelled",
                                     message="the run ended before this subagent finished")

    def _descends(self, run_id: str, ancestor: str) -> bool:
        parent = self.subagents.get(run_id)
        while parent is not None:
            if parent == ancestor:
                return True
            parent = self.subagents.get(parent)
        return False

    def _close_parts(self, owner: str | None) -> Iterator[BaseEvent]:
        parts = self._parts(owner)
        for rid in list(reversed(parts.reasoning)):
            yield from self._reasoning_ended(rid, owner)
        for message_id in list(reversed(parts.texts)):
            yield from self._text_ended(message_id, owner)
        for call_id in list(reversed(parts.calls)):
            if _parses(self._arguments(call_id).text()):
                yield from self._call_ended(call_id, None, owner)
            else:  # cut off mid-arguments: no TOOL_CALL_END claims arguments that do not
                parts.calls.remove(call_id)  # parse; the run's end (RUN_ERROR) closes it
        for name in list(reversed(parts.steps)):
            parts.steps.remove(name)
            yield StepFinishedEvent(step_name=name, **self._attributed(owner))

    def cut_mid_arguments(self) -> bool:
        """Whether a tool call is open with arguments that do not parse (the run ended while
        the model wrote them): no TOOL_CALL_END can close it, so only `RUN_ERROR` ends such a
        run validly (AG-UI 1.0: a stopped run "closes everything it opened", or errs)."""
        return any(not _parses(self._arguments(call_id).text())
                   for parts in self.parts.values() for call_id in parts.calls)

    def _close_all(self) -> Iterator[BaseEvent]:
        yield from self._close_subagents()
        yield from self._close_parts(None)

    # -- helpers -------------------------------------------------------------------------------

    def _arguments(self, call_id: str) -> Pieces:
        """The arguments the stream has sent of call `call_id` so far."""
        return self.drafts[self.call_message[call_id]].calls[call_id]

    def _parts(self, owner: str | None) -> _Parts:
        parts = self.parts.get(owner)
        if parts is None:
            parts = self.parts[owner] = _Parts()
        return parts

    def _draft(self, message_id: str, role: str, owner: str | None) -> MessageDraft:
        draft = self.drafts.get(message_id)
        if draft is None:
            draft = self.drafts[message_id] = MessageDraft(message_id, role, owner)
        return draft

    @staticmethod
    def _attributed(owner: str | None) -> dict[str, Any]:
        """What every event of `owner`'s run carries: the time, and the subagent it is of."""
        if owner is None:
            return {"timestamp": now_ms()}
        return {"timestamp": now_ms(), "subagent_run_id": owner}


def _parses(arguments: str) -> bool:
    """Whether a call's streamed arguments are whole JSON (none at all counts: `{}` follows)."""
    if not arguments:
        return True
    try:
        json.loads(arguments)
    except ValueError:
        return False
    return True
