"""A Python port of what `@ag-ui/client` 1.0 checks (verify.ts), plus the 1.0 rules ag-ui-validate
lacks: protocolVersion "1.0", outcome shapes, a timestamp on every event, no null optional field,
every event parsing with `ag_ui.core`'s `Event` union. `check_stream` raises AssertionError naming
the first broken rule and the event's index; it returns the client's state after the stream.

`client="0.0"` checks a stream for a client that declared no `protocolVersion` (the 0.0.59 one
CopilotKit bundles): no 1.0-only field, and only the outcomes its strict schemas accept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonpatch
from ag_ui.core import Event
from pydantic import TypeAdapter

EVENT: TypeAdapter[Any] = TypeAdapter(Event)
TERMINAL = ("RUN_FINISHED", "RUN_ERROR")
# Values that are JSON payloads, where null is data rather than an omitted optional field.
PAYLOAD_KEYS = frozenset({"snapshot", "value", "result", "payload", "metadata", "responseSchema",
                          "rawEvent", "input", "parameters", "content"})


@dataclass
class Replayed:
    """The client's reading of a stream: its state, the terminal event, the last messages."""

    state: Any
    terminal: dict[str, Any]
    messages: list[dict[str, Any]] | None = None
    patch_failures: list[str] = field(default_factory=list)


def _nulls(value: Any, path: str) -> list[str]:
    if value is None:
        return [path]
    if isinstance(value, Mapping):
        return [hit for key, item in value.items() if key not in PAYLOAD_KEYS
                for hit in _nulls(item, f"{path}.{key}")]
    if isinstance(value, list):
        return [hit for index, item in enumerate(value) for hit in _nulls(item, f"{path}[{index}]")]
    return []


def check_stream(events: Sequence[dict[str, Any]], *, state: Any = None,
                 thread_id: str | None = None, run_id: str | None = None,
                 client: str = "1.0") -> Replayed:
    """Check one run's stream as the client would; `state` is the client's input state;
    `client` the protocol version it declared ("1.0") or "0.0" for none."""
    assert client in ("1.0", "0.0"), f"client is '1.0' or '0.0', not {client!r}"
    assert events, "the stream is empty: it must start with RUN_STARTED"
    current = {} if state is None else state
    texts: dict[str, str | None] = {}
    calls: dict[str, str | None] = {}
    spans: set[str] = set()
    reasoning: set[str] = set()
    owners: dict[str, str | None] = {}
    steps: dict[str | None, set[str]] = {}
    active: set[str] = set()
    done: set[str] = set()
    started: dict[str, Any] | None = None
    terminal: dict[str, Any] | None = None
    messages: list[dict[str, Any]] | None = None
    for index, event in enumerate(events):
        kind = event.get("type")
        at = f"event {index} ({kind})"
        EVENT.validate_python(event)
        assert isinstance(event.get("timestamp"), int), f"{at} has no timestamp"
        nulls = _nulls(event, "")
        assert not nulls, f"{at} sends null at {nulls}"
        assert terminal is None, f"{at} comes after the terminal {terminal['type']}"
        owner = event.get("subagentRunId")
        if index == 0:
            assert kind == "RUN_STARTED", f"the first event is {kind}, not RUN_STARTED"
            if client == "1.0":
                assert event.get("protocolVersion") == "1.0", f"{at}: protocolVersion is not 1.0"
            else:
                assert "protocolVersion" not in event, f"{at}: protocolVersion to a 0.0.x client"
            if thread_id is not None:
                assert event["threadId"] == thread_id, f"{at}: threadId {event['threadId']}"
            if run_id is not None:
                assert event["runId"] == run_id, f"{at}: runId {event['runId']}"
            started = event
            continue
        assert kind != "RUN_STARTED", f"{at}: a second RUN_STARTED in one run"
        if owner is not None and kind not in ("SUBAGENT_STARTED",):
            assert owner in active, f"{at}: subagentRunId {owner} is not an active subagent"
        match kind:
            case "TEXT_MESSAGE_START":
                mid = event["messageId"]
                assert mid not in texts, f"{at}: text {mid} is already open"
                if mid in owners:
                    assert owners[mid] == owner, f"{at}: {mid} belongs to {owners[mid]}"
                texts[mid] = owners[mid] = owner
            case "TEXT_MESSAGE_CONTENT" | "TEXT_MESSAGE_END":
                mid = event["messageId"]
                assert mid in texts, f"{at}: no open text {mid}"
                assert texts[mid] == owner, f"{at}: owner {owner} is not the opener's"
                assert kind == "TEXT_MESSAGE_END" or event["delta"], f"{at}: empty delta"
                if kind == "TEXT_MESSAGE_END":
                    del texts[mid]
            case "TOOL_CALL_START":
                cid = event["toolCallId"]
                assert cid not in calls, f"{at}: tool call {cid} is already open"
                parent = event.get("parentMessageId")
                if parent is not None and parent in owners:
                    assert owners[parent] == owner, f"{at}: parent {parent} has another owner"
                calls[cid] = owner
            case "TOOL_CALL_ARGS" | "TOOL_CALL_END":
                cid = event["toolCallId"]
                assert cid in calls, f"{at}: no open tool call {cid}"
                assert calls[cid] == owner, f"{at}: owner {owner} is not the opener's"
                if kind == "TOOL_CALL_END":
                    del calls[cid]
            case "TOOL_CALL_RESULT":
                owners[event["messageId"]] = owner
            case "REASONING_START" | "REASONING_END":
                mid = event["messageId"]
                if kind == "REASONING_START":
                    assert mid not in spans, f"{at}: reasoning span {mid} already open"
                    spans.add(mid)
                else:
                    assert mid in spans, f"{at}: no open reasoning span {mid}"
                    spans.remove(mid)
            case "REASONING_MESSAGE_START" | "REASONING_MESSAGE_CONTENT" | "REASONING_MESSAGE_END":
                mid = event["messageId"]
                if kind == "REASONING_MESSAGE_START":
                    assert mid not in reasoning, f"{at}: reasoning message {mid} already open"
                    assert mid not in owners or owners[mid] == owner
                    reasoning.add(mid)
                else:
                    assert mid in reasoning, f"{at}: no open reasoning message {mid}"
                    if kind == "REASONING_MESSAGE_END":
                        reasoning.remove(mid)
            case "STEP_STARTED":
                name = event["stepName"]
                assert name not in steps.setdefault(owner, set()), f"{at}: step {name} is open"
                steps[owner].add(name)
            case "STEP_FINISHED":
                name = event["stepName"]
                assert name in steps.get(owner, set()), f"{at}: step {name} not started by {owner}"
                steps[owner].remove(name)
            case "SUBAGENT_STARTED":
                sid = event["subagentRunId"]
                assert sid not in active and sid not in done, f"{at}: subagent {sid} reused"
                parent = event.get("parentSubagentRunId")
                assert parent is None or parent in active | done, f"{at}: unknown parent {parent}"
                active.add(sid)
            case "SUBAGENT_FINISHED" | "SUBAGENT_ERROR":
                sid = event["subagentRunId"]
                assert sid in active, f"{at}: no active subagent {sid}"
                active.remove(sid)
                done.add(sid)
            case "STATE_SNAPSHOT":
                current = event["snapshot"]
            case "STATE_DELTA":
                current = jsonpatch.apply_patch(current, event["delta"])
            case "MESSAGES_SNAPSHOT":
                messages = event["messages"]
                for message in messages:
                    owners[message["id"]] = message.get("subagentRunId")
            case "RUN_FINISHED":
                still = {"text": list(texts), "tool calls": list(calls),
                         "reasoning spans": sorted(spans), "reasoning messages": sorted(reasoning),
                         "steps": [s for names in steps.values() for s in names],
                         "subagents": sorted(active)}
                assert not any(still.values()), f"{at} while open: {still}"
                assert started is not None
                assert event["threadId"] == started["threadId"], f"{at}: threadId differs"
                assert event["runId"] == started["runId"], f"{at}: runId differs"
                outcome = event.get("outcome", {"type": "success"})
                known = ("success", "interrupt", "cancelled") if client == "1.0" else (
                    "success", "interrupt")
                assert outcome["type"] in known, f"{at}: {outcome}"
                if client == "0.0" and outcome["type"] == "success":
                    assert outcome == {"type": "success"}, f"{at}: 0.0.x refuses {outcome}"
                if outcome["type"] == "interrupt":
                    assert outcome.get("interrupts"), f"{at}: an interrupt outcome with none"
                    assert "result" not in event, f"{at}: an interrupted run has no result"
                terminal = event
            case "RUN_ERROR":
                terminal = event
    assert terminal is not None, "the stream ended without RUN_FINISHED or RUN_ERROR"
    return Replayed(current, terminal, messages)


def sse_events(body: str) -> list[dict[str, Any]]:
    """The events of an SSE body, split as `@ag-ui/client` does (on blank lines, LF only)."""
    import json

    out = []
    for frame in body.split("\n\n"):
        data = [line[5:].removeprefix(" ") for line in frame.split("\n")
                if line.startswith("data:")]
        if data:
            out.append(json.loads("\n".join(data)))
    return out


def results_before_their_calls(events: list[dict[str, Any]]) -> list[str]:
    """The calls whose TOOL_CALL_RESULT comes before the stream named them (TOOL_CALL_START,
    or an assistant message of a MESSAGES_SNAPSHOT): ag-ui-validate's AGUI207, which the
    clients themselves let pass."""
    named: set[str] = set()
    unnamed = []
    for event in events:
        if event["type"] == "TOOL_CALL_START":
            named.add(event["toolCallId"])
        elif event["type"] == "MESSAGES_SNAPSHOT":
            named |= {c["id"] for m in event["messages"] for c in m.get("toolCalls") or ()}
        elif event["type"] == "TOOL_CALL_RESULT" and event["toolCallId"] not in named:
            unnamed.append(event["toolCallId"])
    return unnamed
