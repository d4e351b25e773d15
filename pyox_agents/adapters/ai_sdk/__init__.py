"""The AI SDK UI message stream (`ai` 5, 6, 7): requests in, runtime events out as chunks."""

from pyox_agents.adapters.ai_sdk._encode import (
    CHUNK_TYPES,
    FINISH_REASONS,
    HEADERS,
    SDK_VERSIONS,
    STATE_ID,
    Chat,
    Chunk,
    encode,
    encode_chunk,
    finish_reason,
    parse_request,
    stream,
    translate,
    translate_batches,
    ui_messages_to_messages,
)

__all__ = [
    "CHUNK_TYPES",
    "FINISH_REASONS",
    "HEADERS",
    "SDK_VERSIONS",
    "STATE_ID",
    "Chat",
    "Chunk",
    "encode",
    "encode_chunk",
    "finish_reason",
    "parse_request",
    "stream",
    "translate",
    "translate_batches",
    "ui_messages_to_messages",
]
