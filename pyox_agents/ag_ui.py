"""AG-UI 1.0 for pyox-agents agents, with or without the bundled server.

    from pyox_agents import ag_ui

    @app.post("/agent")                     # any ASGI framework
    async def run(request):
        events = ag_ui.stream(agent, await request.json(), store=store)
        return StreamingResponse(ag_ui.encode(events), media_type=ag_ui.MEDIA_TYPE)

`stream` runs the agent and yields `ag_ui.core` events; `encode` writes them as SSE. The lower
level pieces are `parse_request` (a body -> `RunAgentInput` + `RunRequest`), `translate`
(runtime events -> AG-UI events) and `encode_event` (one event -> JSON).
"""

from pyox_agents.adapters.ag_ui import (
    APPROVAL_SCHEMA,
    MEDIA_TYPE,
    encode,
    encode_event,
    parse_request,
    stream,
    translate,
)
from pyox_agents.service._runs import RequestError

__all__ = [
    "APPROVAL_SCHEMA",
    "MEDIA_TYPE",
    "RequestError",
    "encode",
    "encode_event",
    "parse_request",
    "stream",
    "translate",
]
