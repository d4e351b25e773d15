"""Talks to the gallery's agents over AG-UI as CopilotKit does, on a real uvicorn server.

`Thread` keeps one conversation: each `send` POSTs a `RunAgentInput` with the whole history
(the messages a client builds from the streams it read), the page's tools, context and state,
and returns the run's events. Every stream's raw text is kept, for `ag-ui-validate`.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.ag_ui.servers import frames

CHANGE_BACKGROUND = {
    "name": "change_background",
    "description": "Change the page's background: any CSS background value.",
    "parameters": {"type": "object", "properties": {"background": {"type": "string"}},
                   "required": ["background"]},
}
SELECT_STEPS = {
    "name": "select_steps",
    "description": "Ask the person which of the proposed steps to carry out.",
    "parameters": {"type": "object", "required": ["steps"], "properties": {"steps": {
        "type": "array", "items": {"type": "object", "properties": {
            "description": {"type": "string"}, "status": {"enum": ["enabled", "disabled"]}}}}}},
}
GENERATE_HAIKU = {
    "name": "generate_haiku",
    "description": "Show a haiku: three lines in Japanese and their English translation.",
    "parameters": {"type": "object", "required": ["japanese", "english"], "properties": {
        "topic": {"type": "string"},
        "japanese": {"type": "array", "items": {"type": "string"}},
        "english": {"type": "array", "items": {"type": "string"}}}},
}
CONFIRM_CHANGES = {
    "name": "confirm_changes",
    "description": "Ask the person whether to keep the change just made to the document.",
    "parameters": {"type": "object", "properties": {}},
}


@dataclass
class Run:
    """One run's stream: its events and raw text."""

    events: list[dict[str, Any]]
    raw: str
    run_id: str

    def of(self, kind: str) -> list[dict[str, Any]]:
        """The events of one type."""
        return [event for event in self.events if event["type"] == kind]

    @property
    def text(self) -> str:
        """All the assistant text the run streamed."""
        return "".join(event["delta"] for event in self.of("TEXT_MESSAGE_CONTENT"))

    @property
    def outcome(self) -> dict[str, Any]:
        """RUN_FINISHED's outcome (`{"type": "success"}` when the client sent none)."""
        [finished] = self.of("RUN_FINISHED")
        outcome: dict[str, Any] = finished.get("outcome") or {"type": "success"}
        return outcome

    def calls(self, name: str) -> list[dict[str, Any]]:
        """The calls of tool `name` in this run: `{"id", "arguments"}` each."""
        names = {e["toolCallId"]: e["toolCallName"] for e in self.of("TOOL_CALL_START")}
        args: dict[str, str] = {}
        for event in self.of("TOOL_CALL_ARGS"):
            args[event["toolCallId"]] = args.get(event["toolCallId"], "") + event["delta"]
        return [{"id": call_id, "arguments": json.loads(args.get(call_id) or "{}")}
                for call_id, called in names.items() if called == name]


@dataclass
class Thread:
    """One conversation with one agent of the gallery, as a CopilotKit page holds it."""

    client: httpx.AsyncClient
    base: str
    agent: str
    tools: list[dict[str, Any]] = field(default_factory=list)
    context: list[dict[str, Any]] = field(default_factory=list)
    forwarded: dict[str, Any] | None = None
    state: Any = None
    thread_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    messages: list[dict[str, Any]] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)

    async def say(self, text: str) -> Run:
        """The person says `text`."""
        self.messages.append({"id": uuid.uuid4().hex, "role": "user", "content": text})
        return await self.send()

    async def answer(self, call_id: str, content: Any) -> Run:
        """The page answers its frontend tool's call `call_id` (as CopilotKit does after a run
        ends with that call) and starts the follow-up run."""
        text = content if isinstance(content, str) else json.dumps(content)
        self.messages.append({"id": uuid.uuid4().hex, "role": "tool", "toolCallId": call_id,
                              "content": text})
        return await self.send()

    async def resume(self, run: Run, payload: Any) -> Run:
        """Answer the interrupt `run` ended with, with the same runId (as CopilotKit does)."""
        [interrupt] = run.outcome["interrupts"]
        return await self.send(run_id=run.run_id, resume=[
            {"interruptId": interrupt["id"], "status": "resolved", "payload": payload}])

    async def send(self, *, run_id: str | None = None, **extra: Any) -> Run:
        """POST the thread as it is now; the run's messages and state join it."""
        run_id = run_id or uuid.uuid4().hex
        body: dict[str, Any] = {"threadId": self.thread_id, "runId": run_id,
                                "messages": self.messages, "tools": self.tools,
                                "context": self.context, "state": self.state, **extra}
        if self.forwarded is not None:
            body["forwardedProps"] = self.forwarded
        response = await self.client.post(f"{self.base}/agents/{self.agent}/ag-ui", json=body,
                                          timeout=60)
        assert response.status_code == 200, response.text
        run = Run(frames(response.text), response.text, run_id)
        self._learn(run)
        self.runs.append(run)
        return run

    def _learn(self, run: Run) -> None:
        for event in run.events:
            if event["type"] == "MESSAGES_SNAPSHOT":
                self.messages = [m for m in event["messages"] if m["role"] != "activity"]
            elif event["type"] == "STATE_SNAPSHOT":
                self.state = event["snapshot"]
            elif event["type"] == "STATE_DELTA":
                self.state = _apply(self.state, event["delta"])
        if not run.of("MESSAGES_SNAPSHOT"):
            self.messages += _built(run)


def _apply(state: Any, delta: list[dict[str, Any]]) -> Any:
    import jsonpatch  # a dev dependency, as in the other state tests

    return jsonpatch.apply_patch(state, delta)


def _built(run: Run) -> list[dict[str, Any]]:
    """The messages a client builds from a stream without a MESSAGES_SNAPSHOT."""
    out: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    for event in run.events:
        kind = event["type"]
        if kind == "TEXT_MESSAGE_START":
            by_id[event["messageId"]] = {"id": event["messageId"], "role": "assistant",
                                         "content": ""}
            out.append(by_id[event["messageId"]])
        elif kind == "TEXT_MESSAGE_CONTENT":
            by_id[event["messageId"]]["content"] += event["delta"]
        elif kind == "TOOL_CALL_START":
            parent = event.get("parentMessageId") or event["toolCallId"]
            if parent not in by_id:
                by_id[parent] = {"id": parent, "role": "assistant", "toolCalls": []}
                out.append(by_id[parent])
            by_id[parent].setdefault("toolCalls", []).append(
                {"id": event["toolCallId"], "type": "function",
                 "function": {"name": event["toolCallName"], "arguments": ""}})
            by_id[event["toolCallId"]] = by_id[parent]["toolCalls"][-1]
        elif kind == "TOOL_CALL_ARGS":
            by_id[event["toolCallId"]]["function"]["arguments"] += event["delta"]
        elif kind == "TOOL_CALL_RESULT":
            out.append({"id": event["messageId"], "role": "tool",
                        "toolCallId": event["toolCallId"], "content": event["content"]})
    return out
