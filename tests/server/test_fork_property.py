"""A fork at any run of a thread gives the conversation and the shared state the thread had right
after that run (seed 000's `fork`), whatever came after: more runs, regenerates and edits that
branched the thread, runs whose tool failed. And a fork at any user message ends with that
message. Over random sequences of requests, through the real app."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.state.messages import Message
from pyox_agents.stores import MemoryStore


@tool
def edit(ctx: RunContext, changes: dict[str, Any]) -> str:
    """Set each key of `changes` in the shared state (None removes it: a missing key fails)."""
    for key, value in changes.items():
        if value is None:
            del ctx.state[key]
        else:
            ctx.state[key] = value
    return "edited"


def reply(messages: list[Message], tools: Any) -> Any:
    last = messages[-1]
    if last.role == "user":
        return ToolCall("edit", {"changes": json.loads(last.content)})
    return f"Done after {len(messages)} messages."


changes = st.dictionaries(st.sampled_from("abc"), st.none() | st.integers(0, 9) | st.lists(
    st.integers(0, 9), max_size=3), min_size=1, max_size=3)
steps = st.lists(st.one_of(st.tuples(st.just("send"), changes),
                           st.tuples(st.just("edit"), changes),
                           st.tuples(st.just("regenerate"), st.none())), min_size=1, max_size=6)


async def play(requests: list[tuple[str, Any]]) -> None:
    app = create_app({"ed": Agent(FunctionModel(reply), tools=[edit])}, store=MemoryStore())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        sent: list[dict[str, str]] = []  # the user messages of the thread's conversation
        then: dict[str, dict[str, Any]] = {}  # each run: the thread right after it
        for n, (kind, change) in enumerate(requests):
            if kind == "send" or not sent:
                sent.append({"id": f"u{n}", "role": "user", "content": json.dumps(change or {})})
            elif kind == "edit":
                sent[-1] = {**sent[-1], "content": json.dumps(change)}
            answer = await http.post("/agents/ed/ag-ui", json={
                "threadId": "t", "runId": f"r{n}", "messages": sent})
            assert answer.status_code == 200 and "RUN_FINISHED" in answer.text, answer.text
            runs = (await http.get("/threads/t/history")).json()["runs"]
            then[runs[-1]["run_id"]] = (await http.get("/threads/t")).json()
        for run_id, seen in then.items():
            forked = await http.post("/threads/t/fork", json={"run_id": run_id})
            assert forked.status_code == 201, forked.text
            got = (await http.get(f"/threads/{forked.json()['id']}")).json()
            assert (got["messages"], got["state"]) == (seen["messages"], seen["state"])
        for message in {m["id"] for m in sent}:
            forked = await http.post("/threads/t/fork", json={"message_id": message})
            got = (await http.get(f"/threads/{forked.json()['id']}")).json()
            assert got["messages"][-1]["id"] == message


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(requests=steps)
def test_a_fork_at_any_run_has_the_conversation_and_state_of_then(
        requests: list[tuple[str, Any]]) -> None:
    asyncio.run(play(requests))
