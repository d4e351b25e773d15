"""AG-UI 1.0: requests in, runtime events out as AG-UI events, and their SSE encoding."""

from pyox_agents.adapters.ag_ui._encode import (
    APPROVAL_SCHEMA,
    MEDIA_TYPE,
    declares_1_0,
    encode,
    encode_event,
    interrupt_reason,
    parse_request,
    request_from_input,
    result_id,
    stream,
    translate,
    translate_batches,
)

__all__ = [
    "APPROVAL_SCHEMA",
    "MEDIA_TYPE",
    "declares_1_0",
    "encode",
    "encode_event",
    "interrupt_reason",
    "parse_request",
    "request_from_input",
    "result_id",
    "stream",
    "translate",
    "translate_batches",
]
