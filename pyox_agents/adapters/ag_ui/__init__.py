"""The AG-UI 1.0 adapter, pure translation: a request body -> a `RunRequest` (with what the
service looked up: the approval request a paused run waits for), and runtime events -> AG-UI
events -> SSE frames. No Agent, no store, no service: `pyox_agents.ag_ui` composes those."""

from pyox_agents.adapters.ag_ui._capabilities import agent_capabilities
from pyox_agents.adapters.ag_ui._connect import (
    caught_up,
    connect_batches,
    connect_frames,
    continued,
    thread_messages,
)
from pyox_agents.adapters.ag_ui._encode import MEDIA_TYPE, encode, encode_event, frame_batches
from pyox_agents.adapters.ag_ui._events import (
    APPROVAL_SCHEMA,
    StreamInput,
    client_messages,
    declares_1_0,
    interrupt_reason,
    stream_input,
)
from pyox_agents.adapters.ag_ui._messages import result_id
from pyox_agents.adapters.ag_ui._numbered import frame_log
from pyox_agents.adapters.ag_ui._parts import content_parts, upgrade_binary_parts
from pyox_agents.adapters.ag_ui._request import read_input, request_from_input
from pyox_agents.adapters.ag_ui._translated import translate, translate_batches

__all__ = [
    "APPROVAL_SCHEMA",
    "MEDIA_TYPE",
    "StreamInput",
    "agent_capabilities",
    "caught_up",
    "client_messages",
    "connect_batches",
    "connect_frames",
    "content_parts",
    "continued",
    "declares_1_0",
    "encode",
    "encode_event",
    "frame_batches",
    "frame_log",
    "interrupt_reason",
    "read_input",
    "request_from_input",
    "result_id",
    "stream_input",
    "thread_messages",
    "translate",
    "translate_batches",
    "upgrade_binary_parts",
]
