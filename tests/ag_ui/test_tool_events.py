"""The events a tool sends while it runs, as AG-UI events: `CUSTOM`, `ACTIVITY_SNAPSHOT`,
`ACTIVITY_DELTA`; and `PredictState` before the call of a `predict_state` tool."""

from __future__ import annotations

from typing import Any

import jsonpatch
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents import Agent, RunContext, ToolCall, tool
from pyox_agents.events import (
    CustomEvent,
    FileAttached,
    PreliminaryResult,
    Progress,
    RunFinished,
    RuntimeEvent,
    SourceCited,
    SubagentFinished,
    SubagentStarted,
    ToolResult,
)
from pyox_agents.models import ScriptedModel
from pyox_agents.state.frozen import freeze
from pyox_agents.state.patch import diff
from tests.ag_ui.helpers import of_type, run_input, translated, types
from tests.ag_ui.test_translate import START, call
from tests.ag_ui.verify import check_stream
from tests.runs import collect

pytestmark = pytest.mark.anyio

DONE = RunFinished("ok", freeze({}))
OLD = run_input(protocolVersion=None)
SUB = "b" * 64


async def test_an_emitted_event_is_a_custom_event_with_its_name_and_value() -> None:
    """`ctx.emit(name, value)`: "AG-UI `CUSTOM{name, value}`"."""
    out = await translated([START, *call("c1", "t", "m1"),
                            CustomEvent("weather", freeze({"city": "Oslo"}), call_id="c1"),
                            ToolResult("c1", "t", result="ok"), DONE])
    [custom] = of_type(out, "CUSTOM")
    assert (custom["name"], custom["value"]) == ("weather", {"city": "Oslo"})
    assert types(out).index("CUSTOM") < types(out).index("TOOL_CALL_RESULT")
    check_stream(out)


async def test_progress_is_an_activity_snapshot_then_activity_deltas() -> None:
    first = freeze({"step": 1, "of": 3})
    second = freeze({"step": 2, "of": 3})
    delta = [op.to_json() for op in diff(first, second)]
    out = await translated([START, *call("c1", "t", "m1"),
                            Progress("c1-steps", "steps", first, call_id="c1"),
                            Progress("c1-steps", "steps", second, delta, call_id="c1"),
                            ToolResult("c1", "t", result="ok"), DONE])
    snapshot, = of_type(out, "ACTIVITY_SNAPSHOT")
    patch, = of_type(out, "ACTIVITY_DELTA")
    assert (snapshot["messageId"], snapshot["activityType"], snapshot["content"]) == (
        "c1-steps", "steps", {"step": 1, "of": 3})
    assert (patch["messageId"], patch["activityType"]) == ("c1-steps", "steps")
    assert jsonpatch.apply_patch(snapshot["content"], patch["patch"]) == {"step": 2, "of": 3}
    check_stream(out)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=3),
                          st.lists(st.integers(), max_size=3),
                          st.dictionaries(st.sampled_from("abc"), st.integers(), max_size=3)),
                min_size=1, max_size=5))
def test_the_client_rebuilds_every_progress_content_from_snapshot_and_deltas(
        contents: list[Any]) -> None:
    """Whatever JSON the views hold (an activity's content is an object on the wire: other
    content is `{"value": content}`), snapshot + deltas give each content in turn."""
    import anyio

    events: list[RuntimeEvent] = [START]
    before: Any = None
    for index, content in enumerate(contents):
        frozen = freeze(content)
        delta = None if index == 0 else [op.to_json() for op in diff(before, frozen)]
        events.append(Progress("v", "k", frozen, delta))
        before = frozen
    out = anyio.run(translated, [*events, DONE])
    shown: Any = None
    seen = []
    for event in out:
        if event["type"] == "ACTIVITY_SNAPSHOT":
            shown = event["content"]
        elif event["type"] == "ACTIVITY_DELTA":
            shown = jsonpatch.apply_patch(shown, event["patch"])
        else:
            continue
        assert isinstance(shown, dict)
        seen.append(shown)
    assert seen == [c if isinstance(c, dict) else {"value": c} for c in contents]


async def test_a_progress_delta_seen_first_by_this_stream_is_sent_as_a_snapshot() -> None:
    """A client that joins a run late (a reconnect's tail) never gets a delta it cannot apply."""
    out = await translated([START, Progress("v", "k", freeze({"n": 2}),
                                            [{"op": "replace", "path": "/n", "value": 2}]), DONE])
    assert [e["type"] for e in out if e["type"].startswith("ACTIVITY")] == ["ACTIVITY_SNAPSHOT"]
    assert of_type(out, "ACTIVITY_SNAPSHOT")[0]["content"] == {"n": 2}


async def test_sources_files_and_preliminary_results_are_named_custom_events() -> None:
    out = await translated([
        START, *call("c1", "t", "m1"),
        SourceCited("c1-source-1", url="https://example.com", title="Ex", call_id="c1"),
        SourceCited("c1-source-2", title="Q3", media_type="application/pdf", filename="q3.pdf",
                    call_id="c1"),
        FileAttached("data:image/png;base64,AA==", "image/png", "a.png", call_id="c1"),
        PreliminaryResult("c1", "t", freeze({"done": 1})),
        ToolResult("c1", "t", result="ok"), DONE])
    assert [(e["name"], e["value"]) for e in of_type(out, "CUSTOM")] == [
        ("source", {"sourceId": "c1-source-1", "url": "https://example.com", "title": "Ex",
                    "toolCallId": "c1"}),
        ("source", {"sourceId": "c1-source-2", "title": "Q3", "mediaType": "application/pdf",
                    "filename": "q3.pdf", "toolCallId": "c1"}),
        ("file", {"url": "data:image/png;base64,AA==", "mediaType": "image/png",
                  "filename": "a.png", "toolCallId": "c1"}),
        ("preliminary_result", {"toolCallId": "c1", "toolName": "t", "result": {"done": 1}}),
    ]
    snapshot, = of_type(out, "MESSAGES_SNAPSHOT")
    assert next(m for m in snapshot["messages"] if m["role"] == "tool")["content"] == "ok"


async def test_a_subagents_tool_events_carry_its_subagent_run_id() -> None:
    out = await translated([
        START, *call("c1", "r", "m1"), SubagentStarted(SUB, "c1", "r", "ch"),
        CustomEvent("tick", 1, call_id="c2", run_id=SUB),
        Progress("c2-p", "p", freeze({"n": 1}), call_id="c2", run_id=SUB),
        SubagentFinished(SUB, "c1", answer=1), DONE])
    nested = [e for e in out if e["type"] in ("CUSTOM", "ACTIVITY_SNAPSHOT")]
    assert [e.get("subagentRunId") for e in nested] == [SUB, SUB]
    check_stream(out)


@pytest.mark.parametrize("given_input", [run_input(), OLD], ids=["1.0", "0.0.59"])
async def test_tool_events_keep_the_stream_valid_for_both_client_versions(given_input: Any
                                                                          ) -> None:
    out = await translated([START, *call("c1", "t", "m1"),
                            CustomEvent("e", None, call_id="c1"),
                            Progress("v", "k", freeze([1]), call_id="c1"),
                            ToolResult("c1", "t", result="ok"), DONE], given_input)
    check_stream(out, client="1.0" if given_input is not OLD else "0.0")
    assert of_type(out, "CUSTOM")[0]["value"] is None


# -- predict_state -------------------------------------------------------------------------------


def test_predict_state_names_an_argument_of_the_tool() -> None:
    """`@tool(predict_state={"document": "text"})`: the argument must exist (clear TypeError)."""
    with pytest.raises(TypeError, match=r"'write'.*'document'.*'txt'.*'text', 'title'"):
        @tool(predict_state={"document": "txt"})
        def write(ctx: RunContext, text: str, title: str = "") -> str:
            """Write."""
            return text


@pytest.mark.parametrize("bad", [["document"], {"": "text"}, {"document": 3}])
def test_predict_state_is_a_mapping_of_state_keys_to_argument_names(bad: Any) -> None:
    with pytest.raises(TypeError, match=r"predict_state"):
        tool(predict_state=bad)(_write_document)


def _write_document(ctx: RunContext, text: str) -> str:
    """Write the document."""
    ctx.state["document"] = text
    return "written"


async def test_predict_state_is_announced_just_before_the_tools_call_starts() -> None:
    """"Before the model's ToolCallStarted of such a tool the runtime emits
    `CustomEvent("PredictState", [{"state_key": ..., "tool": ..., "tool_argument": ...}])`"."""
    write = tool(predict_state={"document": "text"})(_write_document)
    agent = Agent(model=ScriptedModel([ToolCall("_write_document", {"text": "Hi"}, id="c1"),
                                       "done"]), tools=[write])
    events = await collect(agent, state={"document": ""})
    kinds = [type(e).__name__ for e in events]
    at = kinds.index("ToolCallStarted")
    assert events[at - 1] == CustomEvent("PredictState", [
        {"state_key": "document", "tool": "_write_document", "tool_argument": "text"}],
        transient=True)  # a hint for the client's view, not kept in an AI SDK message
    assert kinds.count("CustomEvent") == 1


async def test_predict_state_goes_on_the_wire_before_tool_call_start_then_the_state_delta(
        ) -> None:
    """`CUSTOM{name:"PredictState", value}` just before `TOOL_CALL_START`; the authoritative
    STATE_DELTA still comes when the tool finishes."""
    write = tool(predict_state={"document": "text"})(_write_document)
    agent = Agent(model=ScriptedModel([ToolCall("_write_document", {"text": "Hi"}, id="c1"),
                                       "done"]), tools=[write])
    events = await collect(agent, state={"document": ""})
    out = await translated(events)
    kinds = types(out)
    at = kinds.index("TOOL_CALL_START")
    assert out[at - 1]["type"] == "CUSTOM" and out[at - 1]["name"] == "PredictState"
    assert out[at - 1]["value"] == [{"state_key": "document", "tool": "_write_document",
                                     "tool_argument": "text"}]
    assert kinds.index("TOOL_CALL_RESULT") < kinds.index("STATE_DELTA")
    check_stream(out)
