"""`RemoteAgent` against a real peer: a pydantic-ai `AGUIAdapter` app on uvicorn (127.0.0.1),
whose tool changes its state and returns a `STATE_SNAPSHOT` (issue: "Tested against our own
server and against a real peer: a pydantic-ai `AGUIAdapter` app ... whose tool returns a state
snapshot")."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from ag_ui.core import StateSnapshotEvent
from pydantic import BaseModel
from pydantic_ai import Agent as PaiAgent
from pydantic_ai import RunContext as PaiContext
from pydantic_ai import ToolReturn
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.ui import StateDeps
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from pyox_agents import (
    Agent,
    Message,
    RemoteAgent,
    StateChanged,
    SubagentFinished,
    SubagentStarted,
    ToolCallStarted,
)
from pyox_agents.models import FunctionModel as OurFunctionModel
from pyox_agents.models import ToolCall
from tests.ag_ui.servers import serving
from tests.runs import collect, finished, replay, results

pytestmark = pytest.mark.anyio


class Items(BaseModel):
    items: list[str] = []


def pai_app() -> Starlette:
    """pydantic-ai's AG-UI app: its model calls `add_item(text=<the task>)`, then says so."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        last = messages[-1]
        if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart)
                                                  for p in last.parts):
            yield "added "
            yield "it"
            return
        task = next(p.content for m in messages if isinstance(m, ModelRequest)
                    for p in m.parts if p.part_kind == "user-prompt")
        yield {0: DeltaToolCall(name="add_item", json_args=json.dumps({"text": task}))}

    agent: PaiAgent[StateDeps[Items], str] = PaiAgent(
        FunctionModel(stream_function=stream), deps_type=StateDeps[Items])

    @agent.tool
    def add_item(ctx: PaiContext[StateDeps[Items]], text: str) -> ToolReturn:
        """Append `text` to the shared list."""
        ctx.deps.state.items.append(text)
        return ToolReturn(return_value="added",
                          metadata=[StateSnapshotEvent(snapshot=ctx.deps.state.model_dump())])

    async def run(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent, deps=StateDeps(Items()))

    return Starlette(routes=[Route("/ag-ui", run, methods=["POST"])])


def _parent(remote_tool: Any) -> Agent:
    def decide(messages: list[Message], tools: list[Any]) -> Any:
        done = [m for m in messages if m.role == "tool"]
        if done:
            return f"parent read: {done[0].content}"
        return ToolCall(remote_tool.name, {"task": "milk"}, id="r1")

    return Agent(OurFunctionModel(decide), tools=[remote_tool])


async def test_a_pydantic_ai_agents_state_snapshot_lands_in_the_parents_state() -> None:
    async with serving(pai_app()) as base:
        remote = RemoteAgent(f"{base}/ag-ui", name="shopper").as_tool(state="write")
        events = await collect(_parent(remote), state={"items": ["eggs"]})
    assert finished(events).state == {"items": ["eggs", "milk"]}
    assert replay({"items": ["eggs"]}, events) == {"items": ["eggs", "milk"]}
    assert [e.call_id for e in events if isinstance(e, StateChanged)] == ["r1"]
    assert results(events)["r1"].result == "added it"
    started = next(e for e in events if isinstance(e, SubagentStarted))
    ended = next(e for e in events if isinstance(e, SubagentFinished))
    assert (started.name, ended.answer) == ("shopper", "added it")
    inside = events[events.index(started) + 1:events.index(ended)]
    call = next(e for e in inside if isinstance(e, ToolCallStarted))
    assert (call.name, call.run_id) == ("add_item", started.run_id)


async def test_with_read_the_peers_snapshot_changes_nothing_here() -> None:
    async with serving(pai_app()) as base:
        remote = RemoteAgent(f"{base}/ag-ui", name="shopper").as_tool(state="read")
        events = await collect(_parent(remote), state={"items": ["eggs"]})
    assert finished(events).state == {"items": ["eggs"]}
    assert results(events)["r1"].result == "added it"
