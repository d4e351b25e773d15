"""The AI SDK UI message stream adapter (`ai` 5, 6, 7), pure translation: a request body (and the
names of the agent's own tools) -> a `Chat` and a `RunRequest`, and runtime events -> chunks ->
SSE frames. No Agent, no store, no service: `pyox_agents.ai_sdk` composes those."""

from pyox_agents.adapters.ai_sdk._chunks import Chunk
from pyox_agents.adapters.ai_sdk._encode import (
    DONE,
    HEADERS,
    encode,
    encode_chunk,
    frame_batches,
    frame_log,
    translate,
    translate_batches,
)
from pyox_agents.adapters.ai_sdk._history import history_to_ui_messages
from pyox_agents.adapters.ai_sdk._request import (
    SDK_VERSIONS,
    Chat,
    check_sdk_version,
    parse_request,
    ui_messages_to_messages,
)
from pyox_agents.adapters.ai_sdk._state_parts import STATE_ID
from pyox_agents.adapters.ai_sdk._user_parts import user_ui_parts
from pyox_agents.adapters.ai_sdk._versions import CHUNK_TYPES, FINISH_REASONS, finish_reason

__all__ = [
    "CHUNK_TYPES",
    "DONE",
    "FINISH_REASONS",
    "HEADERS",
    "SDK_VERSIONS",
    "STATE_ID",
    "Chat",
    "Chunk",
    "check_sdk_version",
    "encode",
    "encode_chunk",
    "finish_reason",
    "frame_batches",
    "frame_log",
    "history_to_ui_messages",
    "parse_request",
    "translate",
    "translate_batches",
    "ui_messages_to_messages",
    "user_ui_parts",
]
