"""A served run's log on a large state: it holds the whole state of its latest change only, so
a long run does not keep every version of the state until its end, and a reader that replays
an earlier change still gets that change's whole state (an AI SDK resume, with a snapshot
after every change). Against a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore
from tests.ag_ui.servers import post_run, serving
from tests.server.test_resume_after_an_id import Reader

Serve = Callable[[Any], str]
TICKS = 12


def ticking_agent(ticks: int, gate: threading.Event, entered: threading.Event,
                  paused: tuple[threading.Event, threading.Event] | None = None,
                  **options: Any) -> Agent:
    """An agent that ticks todos 0 .. `ticks` - 1, one a step, then calls a tool that waits
    for the test (`entered` set once it waits, `gate` to go on), then answers. With `paused`
    (held, hold), it first calls a tool that sets `held` and waits for `hold`."""

    @tool
    def tick(ctx: RunContext, index: int) -> str:
        """Tick todo `index`."""
        ctx.state["todos"][index]["done"] = True
        return "ticked"

    @tool
    def wait() -> str:
        """Wait for the test."""
        entered.set()
        gate.wait(30)
        return "opened"

    @tool
    def pause() -> str:
        """Wait for the test, before the ticks."""
        assert paused is not None
        paused[0].set()
        paused[1].wait(30)
        return "on"

    turns: list[Any] = [ToolCall("pause", {}, id="p")] if paused is not None else []
    turns += [ToolCall("tick", {"index": i}, id=f"c{i}") for i in range(ticks)]
    return Agent(ScriptedModel([*turns, ToolCall("wait", {}, id="w"), "done"]),
                 tools=[tick, wait, pause], **options)


def todos(count: int) -> dict[str, Any]:
    return {"todos": [{"id": i, "text": f"todo {i}", "done": False} for i in range(count)]}


def chat(chat_id: str) -> dict[str, Any]:
    """An AI SDK request on chat `chat_id` that starts from 20 todos."""
    return {"id": chat_id, "trigger": "submit-message", "state": todos(20),
            "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text",
                                                                  "text": "tick"}]}]}


def test_a_resume_replays_every_change_with_its_whole_state(live_server: Serve) -> None:
    """Rule: a change the log keeps as its delta alone is still shown whole to a reader that
    replays it: the AI SDK resume of a run gives exactly the frames its own stream gave,
    each `data-state` (one after every change) included."""
    gate, entered = threading.Event(), threading.Event()
    agent = ticking_agent(TICKS, gate, entered, state_snapshots="change")
    base = live_server(create_app({"a": agent}, store=MemoryStore()))
    try:
        run = Reader("POST", f"{base}/agents/a/ai-sdk", json=chat("c1"))
        assert entered.wait(20)
        resumed = Reader("GET", f"{base}/agents/a/ai-sdk/c1/stream")
        resumed.until(lambda frames: resumed.status != 0 and len(frames) > 3)
    finally:
        gate.set()
    everything = run.done()
    assert resumed.done() == everything
    states = [data["data"] for _, data in everything
              if isinstance(data, dict) and data["type"] == "data-state"]
    assert len(states) == TICKS + 1  # the start, then one after each change
    for ticked, state in enumerate(states):
        assert [todo["done"] for todo in state["todos"]] == \
            [True] * ticked + [False] * (20 - ticked)


def copies_of_the_list(length: int) -> int:
    """How many lists of `length` items this process holds now."""
    return sum(1 for value in gc.get_objects() if isinstance(value, list) and len(value) == length)


@pytest.mark.anyio
async def test_a_long_run_on_a_large_state_holds_a_few_copies_of_it_not_one_a_step() -> None:
    """Rule: nothing of a run grows with the size of its state times its steps. Each tick
    copies the 5,000-item list it changes; a log that held every version held all 40 copies
    until the run's end. Counted while the run waits after its ticks."""
    gate, entered = threading.Event(), threading.Event()
    app = create_app({"a": ticking_agent(40, gate, entered)}, store=MemoryStore())
    body = {"threadId": "t1", "runId": "r1", "state": todos(5_000), "tools": [],
            "context": [], "forwardedProps": {},
            "messages": [{"id": "m1", "role": "user", "content": "tick"}]}
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as http:
        run = asyncio.create_task(post_run(http, "/agents/a/ag-ui", body))
        try:
            assert await asyncio.to_thread(entered.wait, 20)
            held = copies_of_the_list(5_000)
        finally:
            gate.set()
        _, events = await run
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    assert held <= 6, f"{held} copies of the state's list are held after 40 ticks"


def test_a_state_made_null_by_a_person_is_replayed_as_it_was(live_server: Serve) -> None:
    """Rule: a change the log keeps as its delta alone is made from the version before even
    when that version is null (a person may replace the whole state): the resume gives the
    run's own frames, a snapshot after every change, the null one too."""
    held, hold = threading.Event(), threading.Event()
    gate, entered = threading.Event(), threading.Event()
    agent = ticking_agent(TICKS, gate, entered, (held, hold), state_snapshots="change")
    base = live_server(create_app({"a": agent}, store=MemoryStore()))
    try:
        run = Reader("POST", f"{base}/agents/a/ai-sdk", json=chat("c2"))
        assert held.wait(20)
        version = httpx.get(f"{base}/threads/c2", timeout=10).json()["version"]
        for value in (None, todos(20)):  # null, then the todos again: the ticks go on
            edit = httpx.patch(f"{base}/agents/a/threads/c2/state", timeout=10, json={
                "base": version, "patch": [{"op": "replace", "path": "", "value": value}]})
            assert edit.status_code == 200, edit.text
            version = edit.json()["version"]
        hold.set()
        assert entered.wait(20)
        resumed = Reader("GET", f"{base}/agents/a/ai-sdk/c2/stream")
        resumed.until(lambda frames: resumed.status != 0 and len(frames) > 3)
    finally:
        hold.set()
        gate.set()
    everything = run.done()
    assert resumed.done() == everything
    states = [data["data"] for _, data in everything
              if isinstance(data, dict) and data["type"] == "data-state"]
    assert states[:3] == [todos(20), None, todos(20)], states[:3]
    assert len(states) == TICKS + 3
