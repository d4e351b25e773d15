"""Serve an agent to AI SDK `useChat` frontends (`ai` 5, 6 and 7): the UI message stream.

With the bundled server, `create_app({...})` routes `POST /agents/{name}/ai-sdk?v=7` here. In
your own framework:

    from pyox_agents import ai_sdk

    async def chat(request):                      # POST, body from DefaultChatTransport
        chunks = ai_sdk.stream(agent, await request.body(), store=store, sdk_version=7)
        return StreamingResponse(ai_sdk.encode(chunks), headers=ai_sdk.HEADERS)

The shared state reaches the page as a `data-state` part (id "state") that is replaced in place
as tools change it; send the page's state back in the transport's `body: () => ({state})`.

A consumer that stops reading (a client that went away) does not stop the run: it goes on to
its end and commits its work, as under the server; `RunService.stop(thread_id)` stops it.
"""

from pyox_agents._ai_sdk import parse_request, stream
from pyox_agents._run_request import RequestError
from pyox_agents.adapters.ai_sdk import (
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
    translate,
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
    "RequestError",
    "encode",
    "encode_chunk",
    "finish_reason",
    "parse_request",
    "stream",
    "translate",
    "ui_messages_to_messages",
]
