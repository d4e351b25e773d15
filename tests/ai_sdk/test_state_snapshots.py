"""Large state, small wire: each change is a transient patch, the whole state is written where
`Agent(state_snapshots=...)` says, and the message still ends with the final state."""

from __future__ import annotations

import json
from typing import Any

import jsonpatch
import pytest

from pyox_agents import Agent, RunContext, ToolCall, tool
from pyox_agents.models import ScriptedModel
from pyox_agents.service import RunService, ServerLimits

from .helpers import body, check_stream_rules, run_chunks, snapshots, types, user

pytestmark = pytest.mark.anyio


@tool(idempotent=True)
def inc(ctx: RunContext, n: int) -> int:
    """Add n to the counter."""
    ctx.state["count"] += n
    return int(ctx.state["count"])


@tool
def finish_todo(ctx: RunContext, index: int) -> str:
    """Mark one todo done."""
    ctx.state["todos"][index]["done"] = True
    return "done"


def two_changes_in_one_step(mode: Any = "step") -> Agent:
    return Agent(ScriptedModel([[ToolCall("inc", {"n": 2}), ToolCall("inc", {"n": 3})], "ok"]),
                 tools=[inc], state_snapshots=mode)


def replayed(chunks: list[dict[str, Any]], start: Any) -> Any:
    """The state an `onData` handler keeps: snapshots replace it, patches change it."""
    state = start
    for chunk in chunks:
        if chunk["type"] == "data-state":
            state = chunk["data"]
        elif chunk["type"] == "data-state-delta":
            state = jsonpatch.apply_patch(state, chunk["data"])
    return state


async def test_changes_inside_a_step_are_patches_and_the_step_end_writes_one_snapshot() -> None:
    """"Between the opening data-state and a step end, changes go out as transient
    data-state-delta parts" and "the persistent data-state is written at most once per step
    end and once at finish" (the default, "step")."""
    chunks, _ = await run_chunks(two_changes_in_one_step(), body(user("go"), state={"count": 1}))
    check_stream_rules(chunks)
    assert snapshots(chunks) == [{"count": 1}, {"count": 6}]
    deltas = [c for c in chunks if c["type"] == "data-state-delta"]
    assert [d["transient"] for d in deltas] == [True, True]
    kinds = types(chunks)
    first_step_end = kinds.index("finish-step")
    assert kinds[first_step_end - 1] == "data-state"
    assert replayed(chunks, None) == {"count": 6}


async def test_state_snapshots_finish_writes_the_whole_state_only_at_start_and_end() -> None:
    """"at finish" sends at most two whole snapshots however many changes a run makes."""
    agent = Agent(ScriptedModel([ToolCall("inc", {"n": 1}) for _ in range(5)] + ["ok"]),
                  tools=[inc], state_snapshots="finish")
    chunks, _ = await run_chunks(agent, body(user("go"), state={"count": 0}))
    check_stream_rules(chunks)
    assert snapshots(chunks) == [{"count": 0}, {"count": 5}]
    assert types(chunks)[-2:] == ["data-state", "finish"]
    assert len([c for c in chunks if c["type"] == "data-state-delta"]) == 5


async def test_state_snapshots_change_writes_the_whole_state_after_every_change() -> None:
    chunks, _ = await run_chunks(two_changes_in_one_step("change"),
                                 body(user("go"), state={"count": 1}))
    check_stream_rules(chunks)
    # the step's two calls run at once (each a sync tool in a worker thread): either may
    # commit first, so the state after the first change is 1 + 2 or 1 + 3
    first, middle, last = snapshots(chunks)
    assert (first, last) == ({"count": 1}, {"count": 6})
    assert middle in ({"count": 3}, {"count": 4})


async def test_opening_snapshot_is_left_out_when_the_client_has_that_state() -> None:
    """"The opening snapshot may be left out when it equals what the client sent"; the message
    still ends with one data-state equal to the final state."""
    seen = {"id": "a0", "role": "assistant",
            "parts": [{"type": "data-state", "id": "state", "data": {"count": 1}}]}
    chunks, _ = await run_chunks(two_changes_in_one_step("finish"),
                                 body(user("go"), seen, user("more", id="u2")))
    check_stream_rules(chunks)
    assert snapshots(chunks) == [{"count": 6}]
    assert replayed(chunks, {"count": 1}) == {"count": 6}


async def test_opening_snapshot_is_sent_when_the_client_edited_the_state_it_saw() -> None:
    seen = {"id": "a0", "role": "assistant",
            "parts": [{"type": "data-state", "id": "state", "data": {"count": 1}}]}
    chunks, _ = await run_chunks(two_changes_in_one_step("finish"),
                                 body(user("go"), seen, user("more", id="u2"),
                                      state={"count": 10}))
    assert snapshots(chunks) == [{"count": 10}, {"count": 15}]


async def test_a_run_that_changes_nothing_writes_the_state_once() -> None:
    agent = Agent(ScriptedModel(["nothing to do"]), tools=[inc])
    chunks, _ = await run_chunks(agent, body(user("go"), state={"count": 1}))
    assert snapshots(chunks) == [{"count": 1}]


def test_unknown_state_snapshots_setting_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match='"change", "step" or "finish", got \'always\''):
        Agent(ScriptedModel(["x"]), state_snapshots="always")  # type: ignore[arg-type]


async def test_one_item_change_to_100000_todos_is_under_a_kibibyte_on_the_wire() -> None:
    """"a one-item change to 100,000 todos puts 4.6 MB on the wire, each time": now a patch."""
    todos = [{"id": i, "text": f"todo {i}", "done": False} for i in range(100_000)]
    agent = Agent(ScriptedModel([[ToolCall("finish_todo", {"index": i}) for i in range(3)],
                                 "ok"]), tools=[finish_todo], state_snapshots="finish")
    roomy = RunService(None, limits=ServerLimits(state_bytes=10_000_000))
    chunks, _ = await run_chunks(agent, body(user("go"), state={"todos": todos}), roomy)
    deltas = [c for c in chunks if c["type"] == "data-state-delta"]
    assert len(deltas) == 3
    assert all(len(json.dumps(d, separators=(",", ":"))) < 1024 for d in deltas)
    assert len(snapshots(chunks)) == 2
