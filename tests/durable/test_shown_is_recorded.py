"""A tool's change to the shared state is in its run's record before any client is shown it.

A server keeps a thread's state as its client is shown it (each version is kept first). If the
run's record were saved after that, a process killed in between would leave a kept change whose
call the record still has in flight: the run that continues the thread would ask "outcome
unknown after a crash: run again?" about a call that finished, and a person who says yes gets
its change twice (the churn test saw a note added twice). Here the store writes run records
slowly, so a save that comes after the change is shown is still on its way when the client reads
the record the moment it sees the change.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import jsonpatch
import pytest

from pyox_agents import Agent, RunContext, StateChanged, ToolCall, tool
from pyox_agents.models import ScriptedModel
from pyox_agents.server import create_app
from pyox_agents.state.patch import parse_patch
from pyox_agents.stores import SQLiteStore
from pyox_agents.stores.base import StepRecord

SLOW = 0.4
"""Seconds each write of a run's record takes: far longer than a client reads a frame."""


class SlowRecords(SQLiteStore):
    """SQLite whose run-record writes take `SLOW` seconds (its kept-state writes do not)."""

    def write(self, record: StepRecord) -> None:
        time.sleep(SLOW)
        super().write(record)


@tool
async def note(ctx: RunContext, text: str) -> str:
    """Add `text` to the notes."""
    ctx.state.setdefault("notes", []).append(text)
    return "noted"


_STATE = ("STATE_SNAPSHOT", "STATE_DELTA", "data-state", "data-state-delta")
"""The events that show a version of the shared state, on either protocol."""


def _data(line: str) -> Any:
    return json.loads(line[5:]) if line.startswith("data:") else None


def _first_change(url: str, protocol: str) -> None:
    """Run "note a" and return as soon as the client is shown its change."""
    if protocol == "ag-ui":
        body: dict[str, Any] = {"threadId": "t1", "runId": "r1", "state": {},
                                "messages": [{"id": "u1", "role": "user", "content": "a"}]}
    else:
        body = {"id": "t1", "messages": [{"id": "u1", "role": "user",
                                          "parts": [{"type": "text", "text": "a"}]}]}
    with httpx.stream("POST", f"{url}/agents/notes/{protocol}", json=body, timeout=20) as reply:
        assert reply.status_code == 200
        for line in reply.iter_lines():
            event = _data(line)
            if isinstance(event, dict) and event.get("type") in _STATE \
                    and "notes" in json.dumps(event):
                return
    raise AssertionError("the stream ended without showing the note")


@pytest.mark.parametrize("protocol", ["ag-ui", "ai-sdk"])
def test_a_change_a_client_is_shown_is_recorded_with_its_call_closed(
    live_server: Callable[[Any], str], tmp_path: Path, protocol: str
) -> None:
    """Rule: a version of the shared state that a tool made is shown only once the run's record
    holds the call's result (its step), not the call in flight."""
    store = SlowRecords(tmp_path / "runs.sqlite")
    agent = Agent(ScriptedModel([ToolCall("note", {"text": "a"}), "done"]), tools=[note],
                  store=store)
    url = live_server(create_app({"notes": agent}, store=store))
    _first_change(url, protocol)
    with SQLiteStore(tmp_path / "runs.sqlite") as reader:
        entries = reader.load_thread("t1").entries
        (run_id,) = [str(e["content"]) for e in entries if e.get("kind") == "run_start"]
        run = reader.load_run(run_id)
        assert [(s.tool, s.outcome) for s in run.steps if s.kind == "tool"] == [("note", "ok")]
        assert run.in_flight is None
        assert reader.load_thread("t1").shared_state == {"notes": ["a"]}


class UnevenRecords(SQLiteStore):
    """SQLite whose run-record writes take 0 to 30 ms, at random: saves that overlap end in
    any order."""

    def __init__(self, path: Path, seed: int) -> None:
        super().__init__(path)
        self._rng = random.Random(seed)

    def write(self, record: StepRecord) -> None:
        time.sleep(self._rng.uniform(0, 0.03))
        super().write(record)


@tool
async def append(ctx: RunContext, text: str, wait: float) -> str:
    """Append `text` to the list after `wait` seconds."""
    await anyio.sleep(wait)
    ctx.state["items"].append(text)
    return "appended"


@pytest.mark.anyio
@pytest.mark.parametrize("seed", range(8))
async def test_parallel_changes_are_shown_in_the_order_they_were_committed(
    tmp_path: Path, seed: int
) -> None:
    """Rule: each change is saved before it is shown, and changes are shown in the order they
    were committed: the deltas a client applies one after another give the state, whatever
    order the saves end in."""
    rng = random.Random(seed)
    calls = [ToolCall("append", {"text": f"t{i}", "wait": rng.uniform(0, 0.01)})
             for i in range(6)]
    agent = Agent(ScriptedModel([calls, "done"]), tools=[append],
                  store=UnevenRecords(tmp_path / "runs.sqlite", seed))
    state: Any = {"items": []}
    versions = []
    async for event in agent.stream("go", state={"items": []}):
        if isinstance(event, StateChanged):
            state = jsonpatch.apply_patch(state, event.delta)
            versions.append(event.version)
            assert state == event.state
    assert versions == sorted(versions) and len(versions) == 6
    assert sorted(state["items"]) == [f"t{i}" for i in range(6)]


@pytest.mark.anyio
async def test_a_persons_edit_during_a_tools_save_is_shown_after_the_tools_change(
    tmp_path: Path
) -> None:
    """Rule: a person's edit committed while a tool's change is being saved (committed, not
    shown yet) is shown after it: each delta applies to the version before it."""
    returned = anyio.Event()

    @tool
    async def add(ctx: RunContext, text: str) -> str:
        """Append `text`."""
        ctx.state["items"].append(text)
        returned.set()
        return "added"

    agent = Agent(ScriptedModel([ToolCall("add", {"text": "tool"}), "done"]), tools=[add],
                  store=SlowRecords(tmp_path / "runs.sqlite"))
    handle = agent.start("go", state={"items": []})
    changes: list[StateChanged] = []

    async def read() -> None:
        async for event in handle.events():
            if isinstance(event, StateChanged):
                changes.append(event)

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        with anyio.fail_after(10):
            await returned.wait()
            await anyio.sleep(SLOW / 4)  # its change is committed, its save under way
        _, ops = parse_patch({"items": []}, [{"op": "add", "path": "/items/-", "value": "p"}])
        assert handle.edit_state(ops, 0) is not None
    assert [(c.version, c.call_id == "") for c in changes] == [(1, False), (2, True)]
    state: Any = {"items": []}
    for change in changes:
        state = jsonpatch.apply_patch(state, change.delta)
        assert state == change.state
    assert state == {"items": ["tool", "p"]}


class SlowKeeping(SQLiteStore):
    """SQLite whose kept-state writes take `SLOW` seconds (a server keeping a version lags
    its run), and that notes the kept state at each write of a run record that ends the run."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.kept_at_end: list[Any] = []

    def write_kept_state(self, thread_id: str, kept: Any, token: Any = None) -> None:
        time.sleep(SLOW)
        super().write_kept_state(thread_id, kept, token)

    def append_kept_changes(self, thread_id: str, since: int, changes: Any,
                            token: Any = None) -> Any:
        time.sleep(SLOW)
        return super().append_kept_changes(thread_id, since, changes, token)

    def write(self, record: StepRecord) -> None:
        if record.run is not None and record.run.get("status") != "running":
            self.kept_at_end.append(self.load_kept_state(record.thread_id))
        super().write(record)


@pytest.mark.parametrize("protocol", ["ag-ui", "ai-sdk"])
def test_a_run_records_its_end_only_once_the_server_kept_every_version_before_it(
    live_server: Callable[[Any], str], tmp_path: Path, protocol: str
) -> None:
    """Rule: a run's last save drops the shared state from its record (the thread's kept
    state holds it), so it comes only once the server has kept every version the run showed
    before it: a crash between could otherwise lose a tool's change that no record holds."""
    store = SlowKeeping(tmp_path / "runs.sqlite")
    agent = Agent(ScriptedModel([ToolCall("note", {"text": "a"}), "done"]), tools=[note],
                  store=store)
    url = live_server(create_app({"notes": agent}, store=store))
    _first_change(url, protocol)
    deadline = time.monotonic() + 10
    while not store.kept_at_end and time.monotonic() < deadline:
        time.sleep(0.02)
    assert store.kept_at_end, "the run never recorded its end"
    assert store.kept_at_end[0] is not None
    assert store.kept_at_end[0]["state"] == {"notes": ["a"]}
