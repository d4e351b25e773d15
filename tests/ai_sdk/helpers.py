"""Helpers for the AI SDK adapter tests: request bodies, runs and the stream's ordering rules."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

from pyox_agents import Agent, RuntimeEvent, ai_sdk
from pyox_agents.adapters.ai_sdk import Chat
from pyox_agents.service import LiveRun, RunService


def user(text: str, id: str = "u1") -> dict[str, Any]:
    """A UIMessage from the user."""
    return {"id": id, "role": "user", "parts": [{"type": "text", "text": text}]}


def body(*messages: Mapping[str, Any], chat_id: str = "chat-1", **extra: Any) -> bytes:
    """A DefaultChatTransport body (extras such as `state` go in `extra`)."""
    return json.dumps({**extra, "id": chat_id, "messages": list(messages),
                       "trigger": extra.pop("trigger", "submit-message")}).encode()


async def events_of(items: Iterable[RuntimeEvent]) -> AsyncIterator[RuntimeEvent]:
    for item in items:
        yield item


async def translate(events: Sequence[RuntimeEvent], chat: Chat | None = None, *,
                    v: int = 7) -> list[dict[str, Any]]:
    """The chunks of `events` (a fixed list) for `chat`."""
    chat = chat or Chat("chat-1", sdk_version=v)
    return [c async for c in ai_sdk.translate(chat, events_of(events), sdk_version=v)]


async def start(agent: Agent, raw: bytes, service: RunService | None = None, *, v: int = 7
                ) -> tuple[Chat, LiveRun]:
    """Parse `raw` and start its run."""
    chat, request = ai_sdk.parse_request(raw, agent, sdk_version=v)
    live = await (service or RunService(agent.store)).start(agent, request, name="a")
    return chat, live


async def run_chunks(agent: Agent, raw: bytes, service: RunService | None = None, *,
                     v: int = 7) -> tuple[list[dict[str, Any]], list[RuntimeEvent]]:
    """The chunks and the events of one whole request."""
    chat, live = await start(agent, raw, service, v=v)
    chunks = [c async for c in ai_sdk.translate(chat, live.follow(), sdk_version=v,
                                                state_snapshots=agent.state_snapshots)]
    return chunks, list(live.events)


def types(chunks: Iterable[Mapping[str, Any]]) -> list[str]:
    return [c["type"] for c in chunks]


def check_stream_rules(chunks: Sequence[Mapping[str, Any]], v: int = 7,
                       parts: Iterable[str] = ()) -> None:
    """Assert the ordering rules the `ai` client enforces, and the version gating.

    `parts` are tool call ids whose parts exist already (a continuation's message).
    """
    assert chunks[0]["type"] == "start"
    assert [c["type"] for c in chunks].count("finish") == 1
    assert chunks[-1]["type"] == "finish"
    assert chunks[-1].get("finishReason") in ai_sdk.FINISH_REASONS[v] - {"unknown"}
    texts: set[str] = set()
    reasonings: set[str] = set()
    inputs: set[str] = set()
    tool_parts = set(parts)
    step_open = False
    for index, chunk in enumerate(chunks):
        kind = chunk["type"]
        assert kind.startswith("data-") or kind in ai_sdk.CHUNK_TYPES[v], (kind, v)
        json.dumps(chunk)  # JSON all through
        if kind == "start-step":
            assert not step_open
            step_open = True
        elif kind == "finish-step":
            assert step_open
            step_open = False
        elif kind == "text-start":
            texts.add(chunk["id"])
        elif kind in ("text-delta", "text-end"):
            assert chunk["id"] in texts, chunk
            if kind == "text-end":
                texts.remove(chunk["id"])
        elif kind == "reasoning-start":
            reasonings.add(chunk["id"])
        elif kind in ("reasoning-delta", "reasoning-end"):
            assert chunk["id"] in reasonings, chunk
            if kind == "reasoning-end":
                reasonings.remove(chunk["id"])
        elif kind == "tool-input-start":
            inputs.add(chunk["toolCallId"])
            tool_parts.add(chunk["toolCallId"])
        elif kind == "tool-input-delta":
            assert chunk["toolCallId"] in inputs, chunk
        elif kind in ("tool-input-available", "tool-input-error"):
            inputs.discard(chunk["toolCallId"])
            tool_parts.add(chunk["toolCallId"])
        elif kind.startswith("tool-output-") or kind == "tool-approval-request":
            assert chunk["toolCallId"] in tool_parts, chunk
        elif kind == "data-state-delta":
            assert chunk.get("transient") is True
            # a patch is followed by the snapshot that has it, before the message ends
            assert "data-state" in [c["type"] for c in chunks[index + 1:]]
        elif kind == "data-state":
            assert chunk["id"] == "state"
        elif kind == "error":
            assert [c["type"] for c in chunks[index + 1:]] == ["finish"]
            assert chunks[-1]["finishReason"] == "error"
    assert not texts and not reasonings and not inputs and not step_open


def snapshots(chunks: Iterable[Mapping[str, Any]]) -> list[Any]:
    return [c["data"] for c in chunks if c["type"] == "data-state"]


def bare(chunk: Mapping[str, Any]) -> dict[str, Any]:
    """`chunk` without its `messageMetadata` (tests of other fields)."""
    return {k: v for k, v in chunk.items() if k != "messageMetadata"}
