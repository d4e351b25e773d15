"""The AG-UI routes: `POST /agents/{name}/ag-ui` (a run), `POST /agents/{name}/ag-ui/connect`
(a client that comes back to a thread: its history, state and live tail),
`POST /agents/{name}/ag-ui/{thread_id}/stop` (stop the thread's run, or the run a `runId` names:
what a stop button sends, unlike a disconnect, which only detaches) and
`GET /agents/{name}/ag-ui/capabilities`. Each takes the app's `_Server`, as `handled` gives it.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pyox_agents.adapters import ag_ui
from pyox_agents.server._resume import resume_cursor
from pyox_agents.service import CLIENT_RUN_ID, LOOK_UP, RequestError, rejoin, transcript
from pyox_agents.state.run import RunState

__all__ = ["ag_ui_capabilities", "ag_ui_connect", "ag_ui_run", "ag_ui_stop"]


async def ag_ui_run(server: Any, request: Request) -> Response:
    """Start the run of the body's `RunAgentInput` and stream its events. Its `runId` is kept
    with the run, so that a stop that names it stops this run and no later one."""
    principal = await server.principal(request)
    name, agent = server.agent(request)
    run_input = ag_ui.read_input(await server.body(request))
    paused = LOOK_UP  # the service looks the paused run up, if the request needs it
    if run_input.resume:  # the owner first: another's pending request is not told
        await server.runs.check_owner(run_input.thread_id, principal, agent)
        paused = await server.runs.paused(agent, run_input.thread_id)
    pending = paused.pending if isinstance(paused, RunState) else None
    run_request = ag_ui.request_from_input(run_input, pending)
    kept, sent = ag_ui.stream_input(run_input), len(run_input.messages)
    del run_input  # its models go now, not once a burst of requests has all started
    live = await server.runs.start(agent, run_request, name=name, principal=principal,
                                   paused=paused, meta={CLIENT_RUN_ID: kept.run_id})
    conversation = live.conversation
    if conversation is not None and live.continues:  # its results answer earlier calls
        kept = ag_ui.continued(kept, transcript(conversation, before_run=live.run_id))
    elif conversation is not None and len(conversation.messages) > sent:  # it may have missed
        kept = ag_ui.caught_up(kept, transcript(conversation, before_run=live.run_id))  # some
    response: Response = server.sse(ag_ui.frame_log(kept, live.read()), live)
    return response


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
    stream with `RUN_FINISHED`, and what it committed stays. `{stopped}`: whether it was
    stopped. An empty body stops whichever run goes on; a body `{"runId": "..."}` (what
    CopilotKit's runtime sends) stops only the run whose request had that `runId` (a stop
    that arrives once that run has ended leaves the thread's next run going: `false`)."""
    _, _, thread_id = await server.owned(request, "thread_id")
    empty = request.headers.get("content-length") == "0"
    run_id = None if empty else _named_run(await server.body(request))
    return JSONResponse({"stopped": await server.runs.stop(thread_id, run_id)})


def _named_run(raw: bytes) -> str | None:
    """The `runId` of a stop's body (None: an empty body, or one that names no run).

    Raises:
        RequestError: 422 for a body that is not a JSON object, or a `runId` that is not a
            non-empty string.
    """
    if not raw.strip():
        return None
    usage = 'send {"runId": "<the runId of the run to stop>"}, or no body to stop any run'
    try:
        body = json.loads(raw)
    except ValueError:
        raise RequestError(422, f"the body is not JSON: {usage}") from None
    except RecursionError:
        raise RequestError(422, f"the body nests too deeply: {usage}") from None
    if not isinstance(body, dict):
        raise RequestError(422, f"the body must be a JSON object: {usage}")
    if "runId" not in body:
        return None
    run_id = body["runId"]
    if not isinstance(run_id, str) or not run_id:
        raise RequestError(422, f"runId must be a non-empty string, got "
                                f"{json.dumps(run_id)[:40]}: {usage}", "runId")
    return run_id
