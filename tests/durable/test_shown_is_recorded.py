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
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, RunContext, ToolCall, tool
from pyox_agents.models import ScriptedModel
from pyox_agents.server import create_app
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
