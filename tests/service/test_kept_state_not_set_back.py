"""A thread's kept state is not set back by the record of its run that has not ended.

Each version of a run's shared state is kept before its client is shown it, and a tool's
change is saved in the run's record (with its call's result) before that. A process that stops
while a step is under way (here: it shuts down with no grace while one of the step's parallel
calls still waits, after the other's change was shown) leaves a record that holds what the
client was shown, not an older version: the thread's state (`GET /threads/{id}`) and the run
that continues it take it. (The kept state can still be ahead of the record: a person's edit
during a run is kept, not recorded; it stands.) A record state the kept state does not hold
(the step committed, its state never kept) is still the thread's latest.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.events import RunFinished, RunStarted, StateChanged, ToolCallStarted
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.service import RunRequest, RunService
from pyox_agents.state.messages import Message
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.servers import serving

pytestmark = pytest.mark.anyio


def worker(gate: anyio.Event) -> Agent:
    """An agent following the plan of the latest user message other than "continue": steps
    apart, a step's parallel calls joined by "+" ("note:a note:b+wait"); then "done".
    `wait` returns once `gate` is set."""

    @tool(idempotent=True)
    async def note(ctx: RunContext, text: str) -> str:
        """Add `text` to the notes, once."""
        notes = ctx.state.setdefault("notes", [])
        if text not in notes:
            notes.append(text)
        return "noted"

    @tool(idempotent=True)
    async def wait(ctx: RunContext) -> str:
        """Wait for the gate."""
        await gate.wait()
        return "waited"

    def plan_model(messages: Any, tools: Any) -> Any:
        at = max(i for i, m in enumerate(messages)
                 if m.role == "user" and m.content != "continue")
        plan = messages[at].content.split()
        done = sum(1 for m in messages[at:] if m.role == "assistant" and m.tool_calls)
        if done < len(plan):
            calls = []
            for call in plan[done].split("+"):
                name, _, text = call.partition(":")
                calls.append(ToolCall(name, {"text": text} if name == "note" else {}))
            return calls
        return "done"

    return Agent(FunctionModel(plan_model), tools=[note, wait])


def opened() -> anyio.Event:
    gate = anyio.Event()
    gate.set()
    return gate


async def run_to_end(store: SQLiteStore, thread: str, plan: str, state: Any = None) -> None:
    """One run of `plan` on `thread`, served with kept state, to its end."""
    runs = RunService(store, keep_state=True)
    live = await runs.start(worker(opened()).with_store(store),
                            RunRequest(thread, messages=(Message.user(plan),), state=state))
    with anyio.fail_after(10):
        async for _ in live.follow():
            pass


async def stop_mid_step(runs: RunService, thread: str, plans: tuple[str, ...], state: Any,
                        shown: Any) -> None:
    """Start the last of `plans` (the client's user messages) on `thread`, its `wait` never
    returning; once the run's client was shown `shown` and the run waits, the process shuts
    down with no grace: the run is left where it is, its record as last saved (as after a
    crash)."""
    agent = worker(anyio.Event()).with_store(runs.store)
    messages = tuple(Message.user(plan) for plan in plans)
    live = await runs.start(agent, RunRequest(thread, messages=messages, state=state))
    seen: list[Any] = []
    waiting = False
    with anyio.fail_after(10):
        async with contextlib.aclosing(live.follow()) as events:  # type: ignore[type-var]
            async for event in events:
                if isinstance(event, StateChanged):
                    seen.append(event.state)
                waiting = waiting or (isinstance(event, ToolCallStarted) and event.name == "wait")
                if waiting and seen and seen[-1] == shown:
                    break
    await runs.shutdown(0)


@pytest.mark.parametrize("plan", ["note:a note:b+wait", "note:a+note:b+wait"])
async def test_a_run_stopped_mid_step_leaves_what_its_client_was_shown(
    tmp_path: Path, plan: str
) -> None:
    """The kept state holds v0 -> v1 -> v2 (the client was shown v2 mid-step, while a parallel
    call still waited), and so does the unfinished run's record, saved before v2 was shown:
    `GET /threads/{id}` on the next process gives v2."""
    store = SQLiteStore(tmp_path / "t.db")
    shown = {"notes": ["a", "b"]}
    await stop_mid_step(RunService(store, keep_state=True), "t1", (plan,), {"notes": []},
                        shown)
    kept = store.load_kept_state("t1")
    assert kept is not None and kept["state"] == shown
    assert store.load_thread("t1").shared_state == shown, "the record is behind the client"

    app = create_app({"worker": worker(opened())}, store=store)
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as client:
        thread = (await client.get("/threads/t1")).json()
    assert thread["state"] == shown, "the thread's state is not what its client was shown"


async def test_a_run_that_continues_after_the_stop_starts_from_what_its_client_was_shown(
    tmp_path: Path
) -> None:
    """The run that continues the stopped one, for a client that sends no state (a reloaded
    page), starts from the version its client was shown; it ends with that state kept."""
    store = SQLiteStore(tmp_path / "t.db")
    shown = {"notes": ["a", "b"]}
    plan = "note:a note:b+wait"
    await stop_mid_step(RunService(store, keep_state=True), "t1", (plan,), {"notes": []},
                        shown)
    assert store.load_thread("t1").shared_state == shown  # the record: not behind

    runs = RunService(store, keep_state=True)
    request = RunRequest("t1", messages=(Message.user(plan), Message.user("continue")))
    live = await runs.start(worker(opened()).with_store(store), request)
    with anyio.fail_after(10):
        events = [event async for event in live.follow()]
    started = events[0]
    assert isinstance(started, RunStarted)
    assert started.state == shown, "the continuing run started from an older state"
    assert isinstance(events[-1], RunFinished) and events[-1].state == shown
    assert (await runs.kept_state("t1")).state == shown


async def test_a_record_state_the_kept_state_does_not_hold_is_still_the_threads_latest(
    tmp_path: Path
) -> None:
    """The other side: a process that committed a step and stopped before keeping its state
    left it in the run's record only (here a server that keeps no state ran the step). That
    state is the thread's latest: `GET /threads/{id}` gives it, over the older kept one."""
    store = SQLiteStore(tmp_path / "t.db")
    await run_to_end(store, "t1", "note:a", {"notes": []})
    assert store.load_kept_state("t1")["state"] == {"notes": ["a"]}  # type: ignore[index]

    committed = {"notes": ["a", "b"]}
    unkept = RunService(store)  # commits the steps, keeps no state
    await stop_mid_step(unkept, "t1", ("note:a", "note:b wait"), {"notes": ["a"]}, committed)
    assert store.load_thread("t1").shared_state == committed  # the scene: in the record only
    assert store.load_kept_state("t1")["state"] == {"notes": ["a"]}  # type: ignore[index]

    app = create_app({"worker": worker(opened())}, store=store)
    async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as client:
        thread = (await client.get("/threads/t1")).json()
    assert thread["state"] == committed
