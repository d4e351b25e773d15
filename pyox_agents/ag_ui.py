"""AG-UI 1.0 for pyox-agents agents, with or without the bundled server.

    from pyox_agents import ag_ui

    @app.post("/agent")                     # any ASGI framework
    async def run(request):
        events = ag_ui.stream(agent, await request.json(), store=store)
        return StreamingResponse(ag_ui.encode(events), media_type=ag_ui.MEDIA_TYPE)

`stream` runs the agent and yields `ag_ui.core` events; `encode` writes them as SSE. `connect`
gives a client that comes back to a thread its history, state and the run still going. The lower
level pieces are `parse_request` (a body -> `RunAgentInput` + `RunRequest`), `translate`
(runtime events -> AG-UI events) and `encode_event` (one event -> JSON).

A consumer that stops reading (a client that went away) does not stop the run: it goes on to
its end and commits its work, as under the server; `RunService.stop(thread_id)` stops it.
"""

from pyox_agents._ag_ui import connect, parse_request, stream
from pyox_agents._run_request import RequestError
from pyox_agents.adapters.ag_ui import APPROVAL_SCHEMA, MEDIA_TYPE, encode, encode_event, translate

__all__ = [
    "APPROVAL_SCHEMA",
    "MEDIA_TYPE",
    "RequestError",
    "connect",
    "encode",
    "encode_event",
    "parse_request",
    "stream",
    "translate",
]
