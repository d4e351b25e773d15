"""The AG-UI routes beside the run: `POST /agents/{name}/ag-ui/connect` (a client that comes
back to a thread: its history, state and live tail), `POST /agents/{name}/ag-ui/{thread_id}/stop`
(stop the thread's run: what a stop button sends, unlike a disconnect, which only detaches) and
`GET /agents/{name}/ag-ui/capabilities`. Each takes the app's `_Server`, as `handled` gives it.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pyox_agents.adapters import ag_ui
from pyox_agents.server._resume import resume_cursor
from pyox_agents.service import rejoin

__all__ = ["ag_ui_capabilities", "ag_ui_connect", "ag_ui_stop"]


async def ag_ui_connect(server: Any, request: Request) -> Response:
    """Stream the thread of the body's `RunAgentInput` (only `threadId` matters) to a client
    that comes back: history and state, then the run still going, if any (see
    `pyox_agents.adapters.ag_ui.connect_frames`). With `Last-Event-ID` (or `?startIndex=`), a
    client that lost its connection to the run going on resumes after it (400 when that run
    has no such event); when the run its id names has ended, or none is going, it gets the
    thread as it is now (and a run going on from its start). The same owner
    check as other thread routes; an unknown thread is empty."""
    principal = await server.principal(request)
    _, agent = server.agent(request)
    after = resume_cursor(request)
    run_input = ag_ui.read_input(await server.body(request))
    await server.runs.check_owner(run_input.thread_id, principal, agent)
    back = await rejoin(server.runs, agent, run_input.thread_id,
                        after.index if after is not None else -1,
                        after.run if after is not None else None)
    frames = ag_ui.connect_frames(
        run_input, ag_ui.thread_messages(back.messages, run_input.messages), state=back.state,
        pending=back.pending, paused_run_id=back.paused_run_id, tail=back.tail,
        version=back.version, after=after if back.resumes else None)
    response: Response = server.sse(frames, None, source=back.tail)
    return response


async def ag_ui_capabilities(server: Any, request: Request) -> Response:
    """The agent's AG-UI `AgentCapabilities` (`ag_ui.agent_capabilities`)."""
    await server.principal(request)
    name, agent = server.agent(request)
    return JSONResponse(ag_ui.agent_capabilities(
        name, [t.spec for t in agent.tools.values()],
        predictions={t.name: t.predict_state for t in agent.tools.values() if t.predict_state},
        persistent=agent.store is not None,
        max_steps=agent.limits.steps if agent.limits is not None else None,
        accepts=getattr(agent.resolve_model(), "accepts", None)))


async def ag_ui_stop(server: Any, request: Request) -> Response:
    """Stop the run going on the thread (`RunService.stop`): it ends "cancelled" at once, its
    stream with `RUN_FINISHED`, and what it committed stays. `{stopped}`: whether a run was
    going. Its body, if any (CopilotKit's runtime sends `{runId}`), is not read: the thread's
    run is stopped, whichever it is."""
    principal = await server.principal(request)
    _, agent = server.agent(request)
    thread_id = request.path_params["thread_id"]
    await server.runs.check_owner(thread_id, principal, agent)
    return JSONResponse({"stopped": await server.runs.stop(thread_id)})
