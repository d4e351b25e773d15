"""A run stopped while the server is busy keeping one version of the state keeps the versions the
run committed meanwhile: the thread's kept state has every change whose tool result the
conversation holds.

Found by the fault suite (`tests/reliability/test_faults.py`, a client that leaves with
`on_disconnect="cancel"`: a kept state without a change whose result the conversation held): a
change the run handed over as the server's reader was cancelled was never taken from the run's
outbox, and the run's end then dropped it from the run's record.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.state.messages import Message
from pyox_agents.stores import MemoryStore
from tests.ag_ui.servers import post_run, serving

pytestmark = pytest.mark.anyio


class _SlowFirstKeep(MemoryStore):
    """A MemoryStore whose first write of a thread's kept state waits for `answer`."""

    def __init__(self) -> None:
        super().__init__()
        self.began, self.answer = asyncio.Event(), asyncio.Event()

    async def _slow(self) -> None:
        if not self.began.is_set():
            self.began.set()
            await self.answer.wait()

    async def aappend_kept_changes(self, *args: Any, **kwargs: Any) -> Any:
        await self._slow()
        return await super().aappend_kept_changes(*args, **kwargs)

    async def awrite_kept_state(self, *args: Any, **kwargs: Any) -> Any:
        await self._slow()
        return await super().awrite_kept_state(*args, **kwargs)


def agent(added: asyncio.Event, hold: asyncio.Event) -> Agent:
    @tool
    async def add(ctx: RunContext, text: str) -> str:
        """Add an item."""
        ctx.state["items"].append(text)
        if text == "b":
            added.set()
        return "added"

    @tool
    async def wait(ctx: RunContext) -> str:
        """Wait."""
        await hold.wait()
        return "waited"

    def model(messages: list[Message], tools: Any) -> Any:
        done = sum(1 for m in messages if m.role == "tool")
        return [ToolCall("add", {"text": "a"}), ToolCall("add", {"text": "b"}),
                ToolCall("wait", {}), "Done."][done]

    return Agent(FunctionModel(model), tools=[add, wait])


async def test_a_run_stopped_while_a_version_is_kept_keeps_the_versions_after_it() -> None:
    """Rule: every change a run committed (its tool's result is in the conversation) is in the
    thread's kept state, also when the run is stopped."""
    added, hold = asyncio.Event(), asyncio.Event()
    store = _SlowFirstKeep()
    app = create_app({"todo": agent(added, hold)}, store=store)
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        run = asyncio.create_task(post_run(http, "/agents/todo/ag-ui", {
            "threadId": "t", "runId": "r", "state": {"items": []},
            "messages": [{"id": "u", "role": "user", "content": "go"}]}))
        await store.began.wait()  # the server keeps the run's first version ("a")
        await added.wait()  # meanwhile the run committed "b" and went on
        await asyncio.sleep(0.05)
        stop = asyncio.create_task(http.post("/agents/todo/ag-ui/t/stop"))
        await asyncio.sleep(0.05)
        store.answer.set()
        assert (await stop).json() == {"stopped": True}
        await run
        view = (await http.get("/threads/t")).json()
        results = [m["content"] for m in view["messages"] if m["role"] == "tool"]
        assert results[:2] == ["added", "added"], results
        assert view["state"] == {"items": ["a", "b"]}
        hold.set()


async def test_a_run_stopped_as_it_hands_over_a_change_keeps_it() -> None:
    """Rule: as above, when the stop lands as the run hands the server its change: the server's
    wait for the next batch is cancelled the moment the run's conversation holds the tool's
    result (its change committed and saved), before the server took the change (the fault
    suite's case: it failed 8 of 30 times before)."""

    @tool
    async def add(ctx: RunContext, text: str) -> str:
        """Add an item."""
        ctx.state["items"].append(text)
        return "added"

    def model(messages: list[Message], tools: Any) -> Any:
        done = sum(1 for m in messages if m.role == "tool")
        return [ToolCall("add", {"text": "a"}), ToolCall("add", {"text": "b"}), "Done."][done]

    app = create_app({"todo": Agent(FunctionModel(model), tools=[add])}, store=MemoryStore())
    runs = app.state.pyox.runs

    def committed(live: Any) -> bool:
        return live is not None and live.handle is not None and sum(
            1 for m in live.handle.conversation.messages if m.role == "tool") == 2

    async def stop_as_b_is_committed() -> None:
        # a look at every turn of the event loop (no event says "committed, not handed over"):
        # the stop lands no later than the turn that hands the change over
        while not committed(runs.active("t")):  # noqa: ASYNC110
            await asyncio.sleep(0)
        runs.active("t").task.cancel()

    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        stopper = asyncio.create_task(stop_as_b_is_committed())
        await post_run(http, "/agents/todo/ag-ui", {
            "threadId": "t", "runId": "r", "state": {"items": []},
            "messages": [{"id": "u", "role": "user", "content": "go"}]})
        await stopper
        view = (await http.get("/threads/t")).json()
        results = [m["content"] for m in view["messages"] if m["role"] == "tool"]
        assert results == ["added", "added"], results
        assert view["state"] == {"items": ["a", "b"]}
