"""Any ScriptedModel run translates to a stream the `ai` client accepts (hypothesis)."""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
import jsonpatch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyox_agents import Agent, RunContext, RunFinished, StateChanged, ToolCall, ToolResult, tool
from pyox_agents.models import ScriptedModel

from .helpers import body, check_stream_rules, run_chunks, snapshots, user


@tool
def add(ctx: RunContext, item: str) -> int:
    """Append an item."""
    ctx.state["items"].append(item)
    return len(ctx.state["items"])


@tool
def bump(ctx: RunContext, by: int) -> int:
    """Add to the counter."""
    ctx.state["count"] += by
    return int(ctx.state["count"])


@tool
def fail(ctx: RunContext) -> None:
    """Change the state, then fail (so nothing is applied)."""
    ctx.state["count"] = -1
    raise RuntimeError("failed on purpose")


@tool
def look() -> str:
    """Change nothing."""
    return "nothing"


@tool(approval=True)
def wipe(ctx: RunContext) -> str:
    """Clear the items (a person approves first)."""
    ctx.state["items"] = []
    return "wiped"


TOOLS = [add, bump, fail, look, wipe]

calls = st.one_of(
    st.builds(lambda s: ToolCall("add", {"item": s}), st.text(max_size=5)),
    st.builds(lambda n: ToolCall("bump", {"by": n}), st.integers(-3, 3)),
    st.just(ToolCall("bump", {"by": "x"})),  # arguments the tool refuses
    st.just(ToolCall("bump", raw_arguments="{not json")),  # arguments that are not JSON
    st.just(ToolCall("fail", {})),
    st.just(ToolCall("look", {})),
    st.just(ToolCall("nope", {})),  # no such tool
    st.just(ToolCall("wipe", {})),  # pauses the run for a person
)
replies = st.one_of(
    st.lists(calls, min_size=1, max_size=3),
    st.tuples(st.text(min_size=1, max_size=12), st.lists(calls, min_size=1, max_size=2)).map(
        lambda t: [t[0], *t[1]]),
)
scripts = st.tuples(st.lists(replies, max_size=4), st.sampled_from(["answer", "exhausted"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=scripts, version=st.sampled_from([5, 6, 7]),
       mode=st.sampled_from(["change", "step", "finish"]))
def test_any_scripted_run_gives_a_well_ordered_stream(script: Any, version: int,
                                                      mode: Any) -> None:
    """Each change is a patch; snapshots come where `state_snapshots` says, and the patches
    replayed onto the snapshot before them give the next one and the final state."""
    steps, ending = script
    replies: list[Any] = [
        [dataclasses.replace(p, id=f"c{i}_{j}") if isinstance(p, ToolCall) else p
         for j, p in enumerate(reply)]
        for i, reply in enumerate(steps)
    ] + (["All done."] if ending == "answer" else [])
    initial = {"items": [], "count": 0}

    async def main() -> tuple[list[dict[str, Any]], list[Any]]:
        agent = Agent(ScriptedModel(replies), tools=TOOLS, state_snapshots=mode)
        return await run_chunks(agent, body(user("go"), state=initial), v=version)

    chunks, events = anyio.run(main)
    check_stream_rules(chunks, version)
    changes = [e for e in events if isinstance(e, StateChanged)]
    # every change comes as its patch right after the output of the tool that made it
    for change in changes:
        at = next(i for i, c in enumerate(chunks) if c["type"] == "tool-output-available"
                  and c["toolCallId"] == change.call_id)
        assert chunks[at + 1] == {"type": "data-state-delta", "transient": True,
                                  "data": [dict(op) for op in change.delta]}
    # snapshots: the opening one, then where the mode puts them, and the final state last
    kinds = [c["type"] for c in chunks]
    states = snapshots(chunks)
    assert states[0] == initial and kinds.index("data-state") == 1
    later = [i for i, kind in enumerate(kinds) if kind == "data-state"][1:]
    for at in later:
        before, after = kinds[at - 1], kinds[at + 1]
        if mode == "change":
            assert before == "data-state-delta"
        elif mode == "step":
            assert after == "finish-step" or at > kinds.index("finish") - 4
        else:
            assert at > len(kinds) - 5  # only at the end
    if mode == "finish":
        assert len(states) <= 2
    replayed: Any = initial
    for chunk in chunks:
        if chunk["type"] == "data-state-delta":
            replayed = jsonpatch.apply_patch(replayed, chunk["data"])
        elif chunk["type"] == "data-state":
            assert chunk["data"] == replayed
    if isinstance(events[-1], RunFinished):
        assert states[-1] == events[-1].state == replayed
    # every tool call the runtime answered has exactly one answer on the wire
    answered = {e.call_id for e in events if isinstance(e, ToolResult) and e.run_id is None}
    for call_id in answered:
        outputs = [c for c in chunks if c.get("toolCallId") == call_id and (
            c["type"].startswith("tool-output-") or c["type"] == "tool-input-error")]
        assert len(outputs) == 1, (call_id, outputs)
