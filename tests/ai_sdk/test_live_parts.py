"""A tool's live events become `useChat` parts: `data-<name>`, progress parts updated in place,
sources, files, preliminary tool outputs; `start` / `finish` carry the message's metadata."""

from __future__ import annotations

from typing import Any

import pytest

from pyox_agents import Agent, RunContext, RunFinished, ToolCall, ai_sdk, tool
from pyox_agents.adapters.ai_sdk import Chat
from pyox_agents.models import ScriptedModel
from pyox_agents.state.messages import Reply, Usage

from .helpers import body, check_stream_rules, events_of, run_chunks, user
from .live_tools import count_up, research

pytestmark = pytest.mark.anyio


def agent_calling(name: str) -> Agent:
    return Agent(ScriptedModel([ToolCall(name, {}, id="c1"), "done"]),
                 tools=[research, count_up])


async def chunks_of(name: str, v: int = 7) -> list[dict[str, Any]]:
    chunks, _ = await run_chunks(agent_calling(name), body(user("go"), state={}), v=v)
    check_stream_rules(chunks, v)
    return chunks


@pytest.mark.parametrize("v", [5, 6, 7])
async def test_emit_gives_a_data_part_with_its_id_and_transient_flag(v: int) -> None:
    """`ctx.emit(name, value, id=None, transient=False)` gives `data-<name>`."""
    chunks = await chunks_of("research", v)
    assert {"type": "data-weather", "id": "w1", "data": {"city": "Oslo"}} in chunks
    assert {"type": "data-tick", "data": 1, "transient": True} in chunks


async def test_progress_is_a_data_part_of_its_kind_updated_in_place_by_its_id() -> None:
    chunks = await chunks_of("research")
    views = [c for c in chunks if c["type"] == "data-crawl"]
    assert [v["data"] for v in views] == [{"done": 1, "of": 3}, {"done": 3, "of": 3}]
    assert len({v["id"] for v in views}) == 1 and "transient" not in views[0]


async def test_citations_are_source_parts_and_files_are_file_parts() -> None:
    chunks = await chunks_of("research")
    (url,) = [c for c in chunks if c["type"] == "source-url"]
    (doc,) = [c for c in chunks if c["type"] == "source-document"]
    assert url["url"] == "https://example.com/a" and url["title"] == "Page A"
    assert doc["mediaType"] == "application/pdf" and doc["title"] == "Annual report"
    assert doc["filename"] == "report.pdf" and url["sourceId"] != doc["sourceId"]
    assert {"type": "file", "url": "data:text/plain;base64,aGk=", "mediaType": "text/plain"
            } in chunks


async def test_live_parts_come_before_the_tool_output() -> None:
    chunks = await chunks_of("research")
    kinds = [c["type"] for c in chunks]
    assert kinds.index("data-weather") < kinds.index("tool-output-available")
    assert kinds.index("file") < kinds.index("tool-output-available")


@pytest.mark.parametrize("v", [5, 6, 7])
async def test_generator_tool_streams_preliminary_outputs_then_the_final_one(v: int) -> None:
    """"a tool that yields partial results streams tool-output-available{preliminary: true}
    parts, then the final one"."""
    chunks = await chunks_of("count_up", v)
    outputs = [c for c in chunks if c["type"] == "tool-output-available"]
    assert [(c["output"], c.get("preliminary")) for c in outputs] == [
        (1, True), (2, True), (3, True), (3, None)]


async def test_start_carries_when_the_run_began_and_the_model() -> None:
    chunks = await chunks_of("research")
    meta = chunks[0]["messageMetadata"]
    assert meta["model"] == "scripted" and isinstance(meta["createdAt"], int)


async def test_finish_carries_the_tokens_and_the_cost() -> None:
    agent = Agent(ScriptedModel([Reply(text="hi", usage=Usage(
        input_tokens=120, output_tokens=30, requests=1, cost=0.0025))]))
    chunks, events = await run_chunks(agent, body(user("go")))
    final = events[-1]
    assert isinstance(final, RunFinished) and final.usage.input_tokens >= 120
    assert chunks[-1]["messageMetadata"] == {
        "usage": {"inputTokens": final.usage.input_tokens,
                  "outputTokens": final.usage.output_tokens}, "cost": final.usage.cost}
    assert final.usage.cost >= 0.0025


async def test_a_replay_gives_the_same_metadata() -> None:
    chunks, events = await run_chunks(agent_calling("research"), body(user("go"), state={}))
    again = [c async for c in ai_sdk.translate(Chat("chat-1"), events_of(events))]
    assert again[0] == chunks[0] and again[-1] == chunks[-1]


@pytest.mark.parametrize("name", ["state", "state-delta", "run-error", "approval-request"])
async def test_a_tool_cannot_emit_a_part_the_runtime_writes_itself(name: str) -> None:
    """`data-state` is the shared state's part: a tool's `ctx.emit("state", ...)` would replace
    it in the message, so it is refused with the name to use instead."""
    @tool
    async def spoof(ctx: RunContext) -> str:
        """Emit under a reserved name."""
        ctx.emit(name, {"todos": []})
        return "sent"

    agent = Agent(ScriptedModel([ToolCall("spoof", {}, id="c1"), "done"]), tools=[spoof])
    chunks, _ = await run_chunks(agent, body(user("go"), state={"todos": [1]}))
    (error,) = [c for c in chunks if c["type"] == "tool-output-error"]
    assert f"{name!r} is reserved" in error["errorText"]
    assert [c["data"] for c in chunks if c["type"] == "data-state"] == [{"todos": [1]}]
