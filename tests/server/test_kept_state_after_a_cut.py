"""A thread whose run was cut after a step committed and before its state was kept.

A process killed between a step's commit and the write of the thread's kept state leaves the
committed state in the run's record only (the run has not ended). The run that continues it,
on any process, starts from that state and shows it to its client; when it ends, the thread's
state (`GET /threads/{id}`) must be what its client saw, even when the continuing run changed
nothing more itself.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import anyio
import httpx
import jsonpatch
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.events import ToolCallStarted
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.runtime._process_runs import leave_for_recovery
from pyox_agents.server import create_app
from pyox_agents.state.messages import Message
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.servers import frames, serving

pytestmark = pytest.mark.anyio

HANG = {"on": False}
"""While on, `wait` does not return: the run is cut during it."""

FOR_EVER = 3600.0


@tool
async def note(ctx: RunContext, text: str) -> str:
    """Add `text` to the notes."""
    ctx.state.setdefault("notes", []).append(text)
    return "noted"


@tool(idempotent=True)
async def wait(ctx: RunContext) -> str:
    """Wait (for ever while the run is to be cut here)."""
    if HANG["on"]:
        await anyio.sleep(FOR_EVER)
    return "waited"


def plan_model(messages: Any, tools: Any) -> Any:
    """The latest plan (a user message other than "continue"), one step per tool result
    since; then "done"."""
    at = max(i for i, m in enumerate(messages) if m.role == "user" and m.content != "continue")
    plan = messages[at].content.split()
    done = sum(1 for m in messages[at:] if m.role == "tool")
    if done < len(plan):
        kind, _, value = plan[done].partition(":")
        return ToolCall(kind, {"text": value} if kind == "note" else {})
    return "done"


def worker() -> Agent:
    return Agent(FunctionModel(plan_model), tools=[note, wait])


def replay(events: list[dict[str, Any]], view: Any) -> Any:
    """The client's state after the snapshots and deltas of `events`."""
    for event in events:
        if event["type"] == "STATE_SNAPSHOT":
            view = event["snapshot"]
        elif event["type"] == "STATE_DELTA":
            view = jsonpatch.apply_patch(view, event["delta"])
    return view


async def cut_during_wait(store: SQLiteStore, thread: str, state: Any) -> None:
    """Run the plan's next steps on `thread` from `state` until `wait` starts, then stop the
    run there with its record left as saved: what a process killed after the step before
    committed (and before its server kept the state) leaves."""
    conversation = await store.aload(thread)
    conversation.add_message(Message.user("note:b wait"))
    HANG["on"] = True
    try:
        handle = worker().with_store(store).start(conversation, state=state)
        async with contextlib.aclosing(handle.events()) as events:  # type: ignore[type-var]
            async for event in events:
                if isinstance(event, ToolCallStarted) and event.name == "wait":
                    leave_for_recovery(handle.run_id)
                    break
    finally:
        HANG["on"] = False


async def test_a_run_continued_after_a_cut_keeps_what_its_client_was_shown(
    tmp_path: Path
) -> None:
    """"every thread's state equals the replay of the deltas its client saw" (issue 22): the
    state a cut run committed, shown by the run that continues it, is the thread's once that
    run ends, though the continuing run itself changes nothing."""
    store = SQLiteStore(tmp_path / "t.db")
    app = create_app({"worker": worker()}, store=store)
    first_message = {"id": "u1", "role": "user", "content": "note:a"}
    body = {"threadId": "t1", "runId": "r1", "protocolVersion": "1.0", "state": {},
            "messages": [first_message]}
    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        first = frames((await client.post(f"{url}/agents/worker/ag-ui", json=body)).text)
        view = replay(first, {})
        assert view == {"notes": ["a"]}
        await cut_during_wait(store, "t1", view)  # commits note:b, then is cut in `wait`

        again = {**body, "runId": "r2", "state": view, "messages": [
            first_message, {"id": "u3", "role": "user", "content": "continue"}]}
        second = frames((await client.post(f"{url}/agents/worker/ag-ui", json=again)).text)
        assert second[-1]["type"] == "RUN_FINISHED", second[-1]
        view = replay(second, view)
        thread = (await client.get(f"{url}/threads/t1")).json()
    assert view == {"notes": ["a", "b"]}, "the continuing run shows what the cut run committed"
    assert not thread["running"]
    assert thread["state"] == view
