"""`create_app`: a Starlette app that serves agents to AG-UI and AI SDK frontends over SSE.

Routes (DESIGN.md, "Server"):

- `POST /agents/{name}/ag-ui`: body `RunAgentInput`, answer an AG-UI event stream.
  `POST /agents/{name}/ag-ui/connect`: the thread's history, state and live tail (a client
  that comes back); `GET /agents/{name}/ag-ui/capabilities`: what the agent can do.
- `POST /agents/{name}/ai-sdk`: body as the AI SDK `DefaultChatTransport` sends it, answer a UI
  message stream (`?v=5|6|7` picks the client's major, 7 by default).
- `GET /agents/{name}/ai-sdk/{chat_id}/stream`: 204 when nothing runs on the chat, else the run
  from its first chunk (after `Last-Event-ID`, from `?startIndex=`), then live; `POST .../stop`
  cancels it; `GET /agents/{name}/ai-sdk/{chat_id}/messages` gives the chat as `UIMessage[]`.
- `GET /agents`, `GET /healthz`, the caller's threads and runs (`_threads_api.py`), a stop
  (`POST /agents/{name}/ag-ui/{thread_id}/stop`; a disconnect only detaches), a person's edit
  and the thread's live feed (`_live_state_routes.py`).

Every frame of a run's stream has an SSE `id:` (`pyox_agents.adapters.parse_cursor`). Bad input
is answered before any stream (400, 403, 404, 408, 409, 413, 415, 422). A run goes on
when its client disconnects (`on_disconnect="detach"`, the default) or is cancelled
(`"cancel"`); either way what it committed stays committed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from pyox_agents.adapters import Cursor, ai_sdk
from pyox_agents.agent import Agent
from pyox_agents.server._ag_ui_routes import (
    ag_ui_capabilities,
    ag_ui_connect,
    ag_ui_run,
    ag_ui_stop,
)
from pyox_agents.server._ai_sdk_messages import ai_sdk_messages, sdk_version
from pyox_agents.server._auth import Auth, bearer_tokens
from pyox_agents.server._body import read_json_body
from pyox_agents.server._cross_site import middleware_for, normalized_origins, refused_method
from pyox_agents.server._gc import tune_gc as _tune_gc
from pyox_agents.server._hosts import normalized_hosts
from pyox_agents.server._live_state_routes import EditPace, live_state_routes
from pyox_agents.server._refusals import handled, text_error
from pyox_agents.server._resume import resume_cursor
from pyox_agents.server._threads_api import thread_routes
from pyox_agents.server.sse import Chunks, EventStreamResponse, check_times
from pyox_agents.service import LiveRun, RequestError, RunService, ServerLimits
from pyox_agents.stores.base import Store

__all__ = ["Auth", "bearer_tokens", "create_app"]

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class _Server:
    """The app's configuration and run registry, shared by its endpoints."""

    def __init__(
        self,
        agents: Mapping[str, Agent],
        store: Store | None,
        *,
        keepalive: float,
        max_body: int,
        on_disconnect: Literal["detach", "cancel"],
        auth: Auth | None,
        limits: ServerLimits | None,
        send_timeout: float | None,
        lease_ttl: float,
        keep_state: bool,
        cors_origins: tuple[str, ...],
        body_timeout: float | None,
    ) -> None:
        store = _one_store(agents, store)
        limits = limits or ServerLimits()
        self.agents = {
            name: agent if agent.store is not None else agent.with_store(
                store, paused_runs=limits.paused_runs, paused_seconds=limits.paused_seconds,
                paused_bytes=limits.paused_bytes)
            for name, agent in agents.items()
        }
        self.store = store
        self.keepalive = keepalive
        self.max_body = max_body
        self.on_disconnect = on_disconnect
        self.auth = auth
        self.send_timeout = send_timeout
        self.cors_origins = cors_origins
        self.body_timeout = body_timeout
        self.runs = RunService(store, limits=limits, lease_ttl=lease_ttl, keep_state=keep_state)
        self.edit_pace = EditPace(limits.edits_per_second)

    async def principal(self, request: Request) -> str | None:
        """Who asks (None without auth: everyone is the same principal). 401 if refused."""
        if self.auth is None:
            return None
        who = self.auth(request)
        if inspect.isawaitable(who):
            who = await who
        if who is None:
            raise RequestError(401, "missing or unknown credentials: send Authorization: "
                                    "Bearer <token>", headers={"WWW-Authenticate": "Bearer"})
        return str(who)

    def agent(self, request: Request) -> tuple[str, Agent]:
        name = request.path_params["name"]
        agent = self.agents.get(name)
        if agent is None:
            known = ", ".join(sorted(self.agents))
            raise RequestError(404, f"no agent named {name!r}; the agents are: {known}")
        return name, agent

    async def owned(self, request: Request, key: str) -> tuple[str | None, Agent, str]:
        """The caller, the path's agent, and the path's thread `key` once it is new or the
        caller's (401, 404 otherwise)."""
        principal = await self.principal(request)
        _, agent = self.agent(request)
        thread_id = request.path_params[key]
        await self.runs.check_owner(thread_id, principal, agent)
        return principal, agent, thread_id

    async def body(self, request: Request) -> bytes:
        """The request's JSON body (`read_json_body`: 415, 413 or 408 when refused)."""
        return await read_json_body(request, max_body=self.max_body, within=self.body_timeout)

    def sse(self, frames: Chunks, live: LiveRun | None, extra: Mapping[str, str] = {},
            source: object = None) -> EventStreamResponse:
        """Stream pre-framed SSE bytes (one chunk per batch of events) with keep-alive comments;
        mind disconnects (`on_disconnect="cancel"`: a stream that ends before its run stops it).
        `source`, the run's events a follower's frames read (a resume, a connect), is closed
        when the stream ends, so that the run no longer keeps them for this reader, nor counts
        it (`followers_per_run`). (The run's own response keeps its place until the run ends.)
        """
        cancel = live if self.on_disconnect == "cancel" else None
        close = getattr(source, "aclose", None)

        async def on_close() -> None:
            if close is not None:
                await close()
            if cancel is not None and not cancel.done:
                await self.runs.stop(cancel.thread_id)

        return EventStreamResponse(frames, headers={**SSE_HEADERS, **extra},
                                   keepalive=self.keepalive, send_timeout=self.send_timeout,
                                   on_close=on_close if close or cancel else None)


def _one_store(agents: Mapping[str, Agent], store: Store | None) -> Store | None:
    """The one store of a server and its agents: `store`, or the one its agents save to.

    A thread's owner is kept with the thread, in the store; if an agent saved its threads in
    another store than the server reads owners from, the server could not tell whose a thread
    is (after a restart, anyone could act on it). So two stores are refused here.

    Raises:
        ValueError: an agent saves to a store other than `store`, or two agents save to
            different stores.
    """
    theirs = {id(agent.store): (name, agent.store) for name, agent in agents.items()
              if agent.store is not None}
    if store is not None:
        for name, kept in theirs.values():
            if kept is not store:
                raise ValueError(
                    f"agent {name!r} saves to a store of its own, not to create_app's store: "
                    "the server keeps who owns each thread in one store; give the agent no "
                    "store (it then saves to the server's), or give create_app the agent's")
        return store
    if len(theirs) > 1:
        names = sorted(name for name, _ in theirs.values())
        raise ValueError(f"agents {names[0]!r} and {names[1]!r} save to different stores: "
                         "the server keeps who owns each thread in one store; give them the "
                         "same store, or none and create_app(store=...)")
    return next((kept for _, kept in theirs.values()), None)


def create_app(
    agents: Mapping[str, Agent],
    *,
    store: Store | None = None,
    keepalive: float = 15.0,
    max_body: int = 5_000_000,
    on_disconnect: Literal["detach", "cancel"] = "detach",
    cors_origins: Sequence[str] = (),
    allowed_hosts: Sequence[str] | None = None,
    body_timeout: float | None = 30.0,
    page: str | Path | None = None,
    auth: Auth | None = None,
    limits: ServerLimits | None = None,
    send_timeout: float | None = 30.0,
    lease_ttl: float = 30.0,
    tune_gc: bool = False,
    keep_state: bool = True,
) -> Starlette:
    """A Starlette app serving `agents` (by name) over AG-UI and the AI SDK stream protocol.

    Agents without a store of their own save to `store` (so threads and runs persist, and a run
    can be resumed by a later request); with `store=None`, the store the agents save to is the
    server's. A server has one store, where each thread's owner is kept with the thread: an
    agent that saves to another is refused. `keepalive` is the seconds between keep-alive comments
    in a silent stream; `max_body` the largest request body in bytes (larger: 413). `page` is a
    folder of static files (a built web page) served at `/`. `auth(request) -> principal |
    None` says who asks (see `bearer_tokens`); threads and runs belong to the principal that
    created them, and are not found (404) by others. `limits` bounds requests and runs
    (`ServerLimits`). A client that takes more than `send_timeout` seconds to accept the next
    event is dropped; its run goes on, detached, and can be followed again. With a store that
    has leases (`RedisStore`), several processes share the work; `lease_ttl` is how long a
    process that died keeps a thread before another may take it. `tune_gc=True` calls
    `tune_gc()` when the app starts (it changes the whole process's `gc` settings, so it is
    the caller's choice: `pyox-agents serve` and `demo` make it).

    Cross-site requests (docs/guides/deploying.md, "Cross-site requests and hosts"): a request
    that can change something (POST, PUT, PATCH, DELETE) from a browser page on another origin
    is refused (403) unless its origin is in `cors_origins` (`scheme://host[:port]`, or `"*"`),
    which also get CORS headers; a JSON body sent as `text/plain` or a form is refused (415).
    `allowed_hosts` (names, `*.example.com`, or `"*"`) refuses (400) a request whose `Host`
    is another, as DNS rebinding makes it; None checks no host (a proxy in front does).
    A client that takes more than `body_timeout` seconds to send a request's body gets 408.

    `keep_state` (the default; needs a `store`): the server keeps each thread's latest shared
    state, so a page that sends none, or a reloaded page's `{}`, gets it back in the run's
    opening snapshot (and `GET /threads/{id}` shows it). A client's state is the person's edits
    on top of the version it last saw: they are merged onto the latest version, so a client that
    was away never erases what a run committed meanwhile (README, "Shared state"). With False,
    the server keeps none: a run starts from the client's state, or `{}`.

    Raises:
        ValueError: no agents, a name that is not usable in a URL, an unknown `on_disconnect`,
            a `keepalive` that is not > 0 or a `send_timeout` < 0 (or NaN),
            a value of `cors_origins` or `allowed_hosts` that is not an origin or a host, or
            agents that save to another store than the server's (or to two).
    """
    _check_config(agents, on_disconnect)
    check_times(keepalive, send_timeout)
    origins = normalized_origins(cors_origins)
    hosts = None if allowed_hosts is None else normalized_hosts(allowed_hosts)
    server = _Server(agents, store, keepalive=keepalive, max_body=max_body,
                     on_disconnect=on_disconnect, auth=auth, limits=limits,
                     send_timeout=send_timeout, lease_ttl=lease_ttl, keep_state=keep_state,
                     cors_origins=origins, body_timeout=body_timeout)
    app = Starlette(routes=_routes(server, page), middleware=middleware_for(origins, hosts),
                    exception_handlers={405: refused_method}, lifespan=_lifespan(server, tune_gc))
    app.state.pyox = server
    return app


def _lifespan(server: _Server, tune_gc: bool) -> Any:
    """Start-up (`tune_gc()` if asked; the agents' toolsets entered, so an MCP server serves
    every run of the app instead of starting for each) and shutdown (every active run is
    cancelled, then the toolsets close, in the server's own event loop)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if tune_gc:
            _tune_gc()
        async with contextlib.AsyncExitStack() as toolsets:
            for agent in server.agents.values():
                if agent.toolsets:
                    await toolsets.enter_async_context(agent)
            yield
            await server.runs.close()

    return lifespan


def _check_config(agents: Mapping[str, Agent], on_disconnect: str) -> None:
    """Refuse what `create_app` cannot serve, before anything runs."""
    if not agents:
        raise ValueError("create_app() got no agents; pass a mapping such as {'todo': agent}")
    for name, agent in agents.items():
        if not name or "/" in name or not isinstance(agent, Agent):
            raise ValueError(f"create_app(): agent {name!r} needs a non-empty name without '/' "
                             "and an Agent")
    if on_disconnect not in ("detach", "cancel"):
        raise ValueError(f'on_disconnect is "detach" or "cancel", got {on_disconnect!r}')


def _routes(server: _Server, page: str | Path | None) -> list[Route | Mount]:
    """The app's routes: each protocol's refusals in the body format its clients read."""
    return [
        Route("/agents/{name}/ag-ui", handled(server, ag_ui_run), methods=["POST"]),
        Route("/agents/{name}/ag-ui/connect", handled(server, ag_ui_connect), methods=["POST"]),
        Route("/agents/{name}/ag-ui/capabilities", handled(server, ag_ui_capabilities),
              methods=["GET"]),
        Route("/agents/{name}/ag-ui/{thread_id}/stop", handled(server, ag_ui_stop),
              methods=["POST"]),
        Route("/agents/{name}/ai-sdk", handled(server, _ai_sdk_run, text_error),
              methods=["POST"]),
        Route("/agents/{name}/ai-sdk/{chat_id}/stream",
              handled(server, _ai_sdk_resume, text_error), methods=["GET"]),
        Route("/agents/{name}/ai-sdk/{chat_id}/stop",
              handled(server, _ai_sdk_stop, text_error), methods=["POST"]),
        Route("/agents/{name}/ai-sdk/{chat_id}/messages",
              handled(server, ai_sdk_messages, text_error), methods=["GET"]),
        Route("/agents", handled(server, _list_agents), methods=["GET"]),
        *thread_routes(server),
        *live_state_routes(server),
        Route("/healthz", _healthz, methods=["GET"]),
        *([Mount("/", StaticFiles(directory=str(page), html=True))] if page else []),
    ]


async def _ai_sdk_run(server: _Server, request: Request) -> Response:
    principal = await server.principal(request)
    name, agent = server.agent(request)
    version = sdk_version(request)
    chat, run_request = ai_sdk.parse_request(await server.body(request), agent.tools,
                                             sdk_version=version)
    # the chat is the run's from its start: a client that resumes the stream then replays it
    live = await server.runs.start(agent, run_request, name=name, principal=principal,
                                   meta={"ai_sdk": chat.to_json()})
    users = [m.id for m in run_request.messages if m.role == "user"]
    if live.continues and chat.message_id is None and users:  # typed while the run waited:
        chat = dataclasses.replace(chat, answers=users[-1])  # it answers in a new message
        live.meta["ai_sdk"] = chat.to_json()
        await server.runs.publish_meta(live, live.meta)
    return _ai_sdk_events(server, live.read(), chat, version, live, agent)


async def _ai_sdk_resume(server: _Server, request: Request) -> Response:
    principal = await server.principal(request)
    _, agent = server.agent(request)
    chat_id = request.path_params["chat_id"]
    after = resume_cursor(request)
    await server.runs.check_owner(chat_id, principal, agent)
    found = await (server.runs.follow(chat_id, after.index, after.run) if after is not None
                   else server.runs.follow(chat_id))  # here, or (shared runs) on another process
    if found is None or "ai_sdk" not in found[1]:  # none goes on (the one it read has ended)
        return Response(status_code=204)
    reads, meta = found
    chat = meta["ai_sdk"]
    if isinstance(chat, Mapping):  # published by another process as JSON
        chat = ai_sdk.Chat.from_json(chat)
    # the run speaks the major it was started with
    return _ai_sdk_events(server, reads, chat, chat.sdk_version, None, agent, after)


def _ai_sdk_events(server: _Server, reads: AsyncIterator[Any], chat: Any, version: int,
                   live: LiveRun | None, agent: Agent, after: Cursor | None = None) -> Response:
    """The UI message stream of a run's log (`reads`), each frame with its `id:`, after `after`
    for a client that resumes (a follower's `reads` are closed with the stream)."""
    frames = ai_sdk.frame_log(chat, reads, sdk_version=version,
                              state_snapshots=agent.state_snapshots, after=after)
    return server.sse(frames, live, {"x-vercel-ai-ui-message-stream": "v1"},
                      None if live is not None else reads)


async def _ai_sdk_stop(server: _Server, request: Request) -> Response:
    _, _, chat_id = await server.owned(request, "chat_id")
    return JSONResponse({"stopped": await server.runs.stop(chat_id)})


async def _list_agents(server: _Server, request: Request) -> Response:
    await server.principal(request)
    listing = [
        {
            "name": name,
            "tools": [{"name": t.name, "description": t.description, "approval": t.approval}
                      for t in agent.tools.values()],
            "capabilities": {"state": True, "approvals": True, "persistent": agent.store
                             is not None, "protocols": ["ag-ui", "ai-sdk"]},
        }
        for name, agent in server.agents.items()
    ]
    return JSONResponse({"agents": listing})


async def _healthz(request: Request) -> Response:
    return JSONResponse({"ok": True})
