"""`RemoteAgent`: an agent behind an AG-UI endpoint, used as a subagent through `as_tool`."""

from __future__ import annotations

import contextlib
import importlib.util
import secrets
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from pyox_agents._redact import redact_url
from pyox_agents.remote._events import RemoteRun
from pyox_agents.runtime._runner import Runner
from pyox_agents.runtime._subagent_tool import as_tool_name, task_tool
from pyox_agents.state.frozen import freeze, thaw
from pyox_agents.tools import RunContext, Tool, ToolError

__all__ = ["RemoteAgent"]

INSTALL = "pip install 'pyox-agents[remote]'"


class RemoteAgent:
    """An agent served at an AG-UI endpoint (ours, pydantic-ai's `AGUIAdapter`, any other),
    given tasks as a subagent: `RemoteAgent(url).as_tool(name=..., state=...)`.

    Args:
        url: the endpoint a `RunAgentInput` is POSTed to, such as
            `http://127.0.0.1:8000/agents/research/ag-ui`.
        headers: sent with every request (an `Authorization` header, say).
        name: the agent's name, for `as_tool` and error messages.

    Raises:
        ValueError: `url` is not an http(s) URL.
        ImportError: httpx is not installed (`pip install "pyox-agents[remote]"`).
    """

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None,
                 name: str | None = None) -> None:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"RemoteAgent(url=...) takes the http(s) URL of an AG-UI endpoint, "
                             f"such as 'http://127.0.0.1:8000/agents/research/ag-ui'; got {url!r}")
        if importlib.util.find_spec("httpx") is None:
            raise ImportError(f"RemoteAgent needs httpx, which is not installed; install it "
                              f"with: {INSTALL}")
        self.url = url
        self.headers = dict(headers or {})
        self.name = name

    def __repr__(self) -> str:
        return f"RemoteAgent({redact_url(self.url)!r}, name={self.name!r})"

    def as_tool(self, name: str | None = None, description: str | None = None,
                state: Literal["read", "write"] | None = None) -> Tool:
        """This remote agent as a tool: the model gives it a task, it answers, as
        `Agent.as_tool` does for a local agent.

        Each call starts a new run at the endpoint (a new thread) whose only message is the task;
        its text, tool calls and results stream into the parent's stream as the subagent's
        events (between `SubagentStarted` and `SubagentFinished`, with the remote run's id). With
        `state="read"` or `"write"` the remote run is given the parent's shared state; with
        `"write"` its `STATE_SNAPSHOT` and `STATE_DELTA` events are applied to it and committed
        when the remote run finishes, with the rebase and conflict rules of any tool. A remote
        run that fails, cannot be reached, or waits for a person gives the call an error result
        the model reads, naming the agent (its URL and the remote's words go to the server's
        log and the run's record only); the parent run goes on.

        Raises:
            ValueError: no name (give `name=` or `RemoteAgent(..., name=...)`), or an unknown
                `state`.
        """
        tool_name = as_tool_name(name or self.name, state, "RemoteAgent(url, name=...)")

        async def run_remote_agent(ctx: RunContext, task: str) -> Any:
            """Args:
            task: What the agent should do, with everything it needs to know.
            """
            return await self._run(ctx, task, tool_name, state)

        return task_tool(run_remote_agent, tool_name, description)

    async def _run(self, ctx: RunContext, task: str, name: str,
                   mode: Literal["read", "write"] | None) -> Any:
        """Run `task` at the endpoint as a subagent of the run behind `ctx`; its answer."""
        from pyox_agents.remote._stream import post_events

        parent = ctx._run
        assert isinstance(parent, Runner), "a remote agent runs inside a tool call of a run"
        sent = freeze(ctx.state, "ctx.state") if mode is not None else freeze({})
        body: dict[str, Any] = {
            "threadId": secrets.token_hex(16), "runId": secrets.token_hex(16),
            "protocolVersion": "1.0", "tools": [], "context": [], "forwardedProps": {},
            "messages": [{"id": secrets.token_hex(8), "role": "user", "content": task}],
        }
        if mode is not None:
            body["state"] = thaw(sent)
        where = f"the remote agent {name!r} at {redact_url(self.url)}"
        run = RemoteRun(name, ctx.call_id or "", where, sent, parent.emit,
                        follow_state=mode == "write")
        events = post_events(self.url, self.headers, body, where, run.who)
        try:
            async with contextlib.aclosing(events):
                async for event in events:
                    run.on(event)
                    if run.ended:
                        break
        except Exception as exc:
            if not run.ended:
                if isinstance(exc, ToolError):
                    run.fail(str(exc), exc.public_message)
                run.fail(f"{type(exc).__name__}: {exc}",
                         f"{run.who} failed; the server's log has the details")
            raise
        finally:
            ctx.child_usage = ctx.child_usage + run.usage
        if not run.ended:
            run.fail(f"the stream of {where} ended before its run did (no RUN_FINISHED); "
                     "the server may have stopped: try again",
                     f"the stream of {run.who} ended before its run did; try again")
        if mode == "write" and run.state_changed:
            ctx.state = run.state  # committed as this call ends: rebased, or a conflict
        return run.answer
