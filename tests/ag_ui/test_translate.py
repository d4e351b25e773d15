"""translate(): runtime events -> AG-UI 1.0 events, one rule per test, on hand-made sequences."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from ag_ui.core import UserMessage
from hypothesis import example, given
from hypothesis import strategies as st

from pyox_agents.adapters.ag_ui import APPROVAL_SCHEMA, translate
from pyox_agents.events import (
    ApprovalRequested,
    ReasoningDelta,
    ReasoningEnded,
    ReasoningStarted,
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    StepFinished,
    StepStarted,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
)
from pyox_agents.state._run_parts import INTERNAL_ERROR_MESSAGE
from pyox_agents.state.frozen import freeze
from pyox_agents.state.messages import Usage
from pyox_agents.state.run import AgentError, ApprovalRequest
from tests.ag_ui.helpers import RUN, THREAD, of_type, run_input, translated, types
from tests.ag_ui.verify import check_stream

pytestmark = pytest.mark.anyio

START = RunStarted("a" * 64, THREAD, freeze({"todos": []}))
DONE = RunFinished(answer="ok", state=freeze({"todos": []}))


def text(message_id: str, *pieces: str, run_id: str | None = None) -> list[RuntimeEvent]:
    return [TextStarted(message_id, run_id=run_id),
            *(TextDelta(message_id, p, run_id=run_id) for p in pieces),
            TextEnded(message_id, "".join(pieces), run_id=run_id)]


def call(call_id: str, name: str, message_id: str, args: str = '{"x":1}',
         run_id: str | None = None) -> list[RuntimeEvent]:
    return [ToolCallStarted(call_id, name, message_id, run_id=run_id),
            ToolCallArgsDelta(call_id, args, run_id=run_id),
            ToolCallEnded(call_id, name, {"x": 1}, run_id=run_id)]


def approval(schema: dict[str, Any] | None = None) -> ApprovalRequest:
    return ApprovalRequest(id="apr_1", step=0, call_id="c1", tool="delete", arguments={"x": 1},
                           arguments_hash="h", prompt="allow delete with these arguments?",
                           schema=schema)


async def test_stream_opens_with_run_started_carrying_the_clients_ids_and_protocol_1_0() -> None:
    out = await translated([START, DONE])
    assert out[0]["type"] == "RUN_STARTED"
    assert (out[0]["threadId"], out[0]["runId"], out[0]["protocolVersion"]) == (THREAD, RUN, "1.0")


async def test_a_state_snapshot_of_the_starting_state_follows_run_started() -> None:
    out = await translated([RunStarted("a" * 64, THREAD, freeze({"n": 1})), DONE])
    assert out[1] == {**out[1], "type": "STATE_SNAPSHOT", "snapshot": {"n": 1}}


async def test_every_event_has_a_timestamp_in_milliseconds() -> None:
    out = await translated([START, StepStarted(0), *text("m1", "hi"), StepFinished(0), DONE])
    stamps = [event["timestamp"] for event in out]
    assert all(isinstance(s, int) and s > 1_600_000_000_000 for s in stamps)


async def test_no_optional_field_is_sent_as_null() -> None:
    out = await translated([START, *call("c1", "t", "m1"), ToolResult("c1", "t", result=None),
                            DONE])
    check_stream(out)  # raises on a null outside JSON payloads
    result = of_type(out, "TOOL_CALL_RESULT")[0]
    assert "subagentRunId" not in result and result["content"] == "null"


async def test_steps_start_and_finish_with_a_step_name() -> None:
    out = await translated([START, StepStarted(0), StepFinished(0), StepStarted(1),
                            StepFinished(1), DONE])
    names = [(e["type"], e["stepName"]) for e in out if e["type"].startswith("STEP_")]
    assert names == [("STEP_STARTED", "step-0"), ("STEP_FINISHED", "step-0"),
                     ("STEP_STARTED", "step-1"), ("STEP_FINISHED", "step-1")]


async def test_text_is_one_start_content_end_per_message() -> None:
    out = await translated([START, *text("m1", "Hel", "lo"), DONE])
    texts = [e for e in out if e["type"].startswith("TEXT_MESSAGE")]
    assert types(texts) == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
                            "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
    assert texts[0]["role"] == "assistant" and {e["messageId"] for e in texts} == {"m1"}


async def test_empty_text_deltas_are_not_sent() -> None:
    out = await translated([START, *text("m1", "", "a", ""), DONE])
    assert [e["delta"] for e in of_type(out, "TEXT_MESSAGE_CONTENT")] == ["a"]


async def test_reasoning_is_a_span_and_a_message_with_an_id_apart_from_the_text() -> None:
    out = await translated([START, ReasoningStarted("m1"), ReasoningDelta("m1", "hmm"),
                            ReasoningEnded("m1", "hmm"), *text("m1", "hi"), DONE])
    reasoning = [e for e in out if e["type"].startswith("REASONING")]
    assert types(reasoning) == ["REASONING_START", "REASONING_MESSAGE_START",
                                "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END",
                                "REASONING_END"]
    assert {e["messageId"] for e in reasoning} == {"reasoning-m1"}
    check_stream(out)


async def test_parallel_tool_calls_each_get_start_args_end_with_their_parent_message() -> None:
    out = await translated([START, *call("c1", "a", "m1"), *call("c2", "b", "m1"),
                            *call("c3", "c", "m1"), DONE])
    for cid in ("c1", "c2", "c3"):
        mine = [e for e in out if e.get("toolCallId") == cid]
        assert types(mine) == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
        assert mine[0]["parentMessageId"] == "m1" and mine[1]["delta"] == '{"x":1}'


async def test_a_call_whose_arguments_were_not_streamed_gets_them_before_its_end() -> None:
    out = await translated([START, ToolCallStarted("c1", "t", "m1"),
                            ToolCallEnded("c1", "t", {"a": [1]}), DONE])
    assert [e["delta"] for e in of_type(out, "TOOL_CALL_ARGS")] == ['{"a":[1]}']


async def test_a_tools_state_delta_comes_right_after_its_tool_call_result() -> None:
    delta = [{"op": "add", "path": "/todos/0", "value": "x"}]
    out = await translated([START, *call("c1", "add", "m1"),
                            ToolResult("c1", "add", result="ok"),
                            StateChanged(delta, freeze({"todos": ["x"]}), "c1", 1), DONE])
    at = types(out).index("TOOL_CALL_RESULT")
    assert out[at + 1] == {**out[at + 1], "type": "STATE_DELTA", "delta": delta}


async def test_a_tool_result_has_the_message_id_result_dash_call_id() -> None:
    out = await translated([START, *call("c1", "t", "m1"), ToolResult("c1", "t", result={"a": 1}),
                            DONE])
    result = of_type(out, "TOOL_CALL_RESULT")[0]
    assert result == {**result, "messageId": "result-c1", "toolCallId": "c1",
                      "content": '{"a":1}', "role": "tool"}


async def test_a_failed_tools_result_is_its_error_text() -> None:
    out = await translated([START, *call("c1", "t", "m1"),
                            ToolResult("c1", "t", error="ValueError: no"), DONE])
    assert of_type(out, "TOOL_CALL_RESULT")[0]["content"] == "ValueError: no"
    tool = [m for m in of_type(out, "MESSAGES_SNAPSHOT")[0]["messages"] if m["role"] == "tool"]
    assert tool[0]["error"] == "ValueError: no"


async def test_messages_snapshot_before_run_finished_keeps_input_ids_and_the_streamed_ids() -> None:
    out = await translated([START, *text("m1", "Let me"), *call("c1", "t", "m1"),
                            ToolResult("c1", "t", result="ok"), *text("m2", "Done"), DONE])
    assert types(out)[-2:] == ["MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    messages = out[-2]["messages"]
    assert [m["id"] for m in messages] == ["u1", "m1", "result-c1", "m2"]
    assert messages[1]["content"] == "Let me"
    assert messages[1]["toolCalls"] == [{"id": "c1", "type": "function",
                                         "function": {"name": "t", "arguments": '{"x":1}'}}]
    assert messages[2] == {"id": "result-c1", "role": "tool", "content": "ok",
                           "toolCallId": "c1"}


async def test_a_result_for_a_call_of_an_earlier_run_keeps_the_clients_message_in_place() -> None:
    given = run_input(messages=[
        {"id": "u1", "role": "user", "content": "go"},
        {"id": "m0", "role": "assistant", "toolCalls": [
            {"id": "c0", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
    ])
    out = await translated([START, ToolResult("c0", "t", result="ok"), DONE], given)
    assert [m["id"] for m in of_type(out, "MESSAGES_SNAPSHOT")[0]["messages"]] == [
        "u1", "m0", "result-c0"]


async def test_an_approval_interrupt_ends_with_an_interrupt_outcome() -> None:
    out = await translated([START, *call("c1", "delete", "m1"), ApprovalRequested(approval()),
                            RunFinished(None, freeze({}), outcome="interrupt")])
    outcome = out[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    [interrupt] = outcome["interrupts"]
    assert interrupt == {**interrupt, "id": "apr_1", "reason": "approval", "toolCallId": "c1",
                         "message": "allow delete with these arguments?",
                         "responseSchema": dict(APPROVAL_SCHEMA)}
    assert "result" not in out[-1]
    check_stream(out)


async def test_an_ask_person_interrupt_is_an_input_with_the_tools_schema() -> None:
    schema = {"type": "string"}
    out = await translated([START, ApprovalRequested(approval(schema)),
                            RunFinished(None, freeze({}), outcome="interrupt")])
    [interrupt] = out[-1]["outcome"]["interrupts"]
    assert (interrupt["reason"], interrupt["responseSchema"]) == ("input", schema)


async def test_pending_client_tool_calls_finish_as_success_with_their_ids() -> None:
    out = await translated([START, *call("c1", "pick_color", "m1"),
                            RunFinished(None, freeze({}), pending_call_ids=("c1",))])
    assert out[-1]["outcome"] == {"type": "success", "pendingToolCallIds": ["c1"]}


async def test_a_cancelled_run_closes_what_is_open_then_finishes_cancelled() -> None:
    out = await translated([START, StepStarted(0), TextStarted("m1"), TextDelta("m1", "par"),
                            ToolCallStarted("c1", "t", "m1"),
                            RunFinished(None, freeze({}), outcome="cancelled")])
    assert out[-1]["outcome"] == {"type": "cancelled"}
    assert types(out)[-5:-2] == ["TEXT_MESSAGE_END", "TOOL_CALL_END", "STEP_FINISHED"]
    check_stream(out)


async def test_run_failed_closes_open_parts_then_sends_run_error_with_code() -> None:
    error = AgentError("model_error", "the provider answered 503")
    out = await translated([START, StepStarted(0), ReasoningStarted("m1"), TextStarted("m1"),
                            ToolCallStarted("c1", "t", "m1"), RunFailed(error)])
    assert out[-1] == {**out[-1], "type": "RUN_ERROR", "message": "the provider answered 503",
                       "code": "model_error"}
    assert types(out)[-6:-1] == ["REASONING_MESSAGE_END", "REASONING_END", "TEXT_MESSAGE_END",
                                 "TOOL_CALL_END", "STEP_FINISHED"]
    check_stream(out)


async def test_an_internal_error_is_reported_with_a_public_message() -> None:
    out = await translated([START, RunFailed(AgentError("internal_error",
                                                        "KeyError: 'secret_key'"))])
    assert out[-1]["message"] == INTERNAL_ERROR_MESSAGE and "secret" not in str(out)


async def test_a_stream_that_ends_without_a_terminal_event_gets_run_error() -> None:
    out = await translated([START, TextStarted("m1")])
    assert types(out)[-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert out[-1]["code"] == "incomplete"


async def test_a_failure_reading_the_runtime_events_ends_with_run_error() -> None:
    async def broken() -> AsyncIterator[RuntimeEvent]:
        yield START
        yield StepStarted(0)
        raise RuntimeError("disk on fire")

    out = [event.model_dump(by_alias=True, exclude_none=True)
           async for event in translate(run_input(), broken())]
    assert [e["type"] for e in out][-2:] == ["STEP_FINISHED", "RUN_ERROR"]
    assert out[-1]["message"] == INTERNAL_ERROR_MESSAGE


async def test_exactly_one_terminal_event_and_nothing_after_it() -> None:
    out = await translated([START, DONE, TextStarted("m9"), RunFailed(AgentError("x", "y"))])
    assert types(out)[-1] == "RUN_FINISHED"
    assert sum(t in ("RUN_FINISHED", "RUN_ERROR") for t in types(out)) == 1


async def test_a_run_error_without_run_started_still_opens_the_stream() -> None:
    out = await translated([RunFailed(AgentError("model_error", "down"))])
    assert types(out) == ["RUN_STARTED", "RUN_ERROR"]


async def test_subagent_events_are_bracketed_and_carry_subagent_run_id() -> None:
    sub = "b" * 64
    out = await translated([
        START, *call("c1", "researcher", "m1"), SubagentStarted(sub, "c1", "researcher", "child"),
        StepStarted(0, run_id=sub), *text("m2", "found", run_id=sub), StepFinished(0, run_id=sub),
        SubagentFinished(sub, "c1", answer="found"), ToolResult("c1", "researcher", result="found"),
        DONE])
    started = of_type(out, "SUBAGENT_STARTED")[0]
    assert started == {**started, "subagentRunId": sub, "name": "researcher",
                       "parentToolCallId": "c1", "parentMessageId": "m1"}
    inner = out[types(out).index("SUBAGENT_STARTED") + 1: types(out).index("SUBAGENT_FINISHED")]
    assert inner and all(e["subagentRunId"] == sub for e in inner)
    finished = of_type(out, "SUBAGENT_FINISHED")[0]
    assert finished == {**finished, "result": "found", "outcome": {"type": "success"}}
    check_stream(out)


async def test_a_failed_subagent_ends_with_subagent_error() -> None:
    sub = "b" * 64
    out = await translated([START, *call("c1", "r", "m1"), SubagentStarted(sub, "c1", "r", "ch"),
                            StepStarted(0, run_id=sub),
                            SubagentFinished(sub, "c1", error="model down"), DONE])
    error = of_type(out, "SUBAGENT_ERROR")[0]
    assert error == {**error, "subagentRunId": sub, "message": "model down"}
    check_stream(out)


async def test_a_nested_subagent_names_its_parent_subagent() -> None:
    sub, inner = "b" * 64, "c" * 64
    out = await translated([
        START, *call("c1", "r", "m1"), SubagentStarted(sub, "c1", "r", "ch"),
        *call("c2", "deep", "m2", run_id=sub), SubagentStarted(inner, "c2", "deep", "ch2"),
        SubagentFinished(inner, "c2", answer=1), SubagentFinished(sub, "c1", answer=2), DONE])
    nested = of_type(out, "SUBAGENT_STARTED")[1]
    assert nested["parentSubagentRunId"] == sub and nested["parentToolCallId"] == "c2"
    check_stream(out)


async def test_a_subagent_still_open_at_the_end_is_closed_with_subagent_error() -> None:
    sub = "b" * 64
    out = await translated([START, SubagentStarted(sub, "c1", "r", "ch"),
                            TextStarted("m2", run_id=sub),
                            RunFinished(None, freeze({}), outcome="cancelled")])
    assert types(out)[-4:] == ["TEXT_MESSAGE_END", "SUBAGENT_ERROR", "MESSAGES_SNAPSHOT",
                               "RUN_FINISHED"]
    check_stream(out)


async def test_usage_is_reported_on_run_finished() -> None:
    out = await translated([START, RunFinished("ok", freeze({}), usage=Usage(10, 5, 1))])
    assert out[-1]["usage"] == [{"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}]


async def test_parallel_subagents_finish_independently() -> None:
    one, two = "b" * 64, "c" * 64
    out = await translated([
        START, *call("c1", "r", "m1"), *call("c2", "r", "m1"),
        SubagentStarted(one, "c1", "r", "x"), SubagentStarted(two, "c2", "r", "y"),
        TextStarted("m2", run_id=two), SubagentFinished(one, "c1", answer="1"),
        TextDelta("m2", "still here", run_id=two), TextEnded("m2", "still here", run_id=two),
        SubagentFinished(two, "c2", answer="2"), DONE])
    assert [e["subagentRunId"] for e in of_type(out, "SUBAGENT_FINISHED")] == [one, two]
    assert not of_type(out, "SUBAGENT_ERROR")
    check_stream(out)


@given(st.text(), st.text(min_size=1), st.integers(0, 2**53 - 1))
def test_the_fast_encoding_of_deltas_equals_pydantics(delta: str, ident: str, stamp: int) -> None:
    from ag_ui.core import TextMessageContentEvent, ToolCallArgsEvent

    from pyox_agents.adapters.ag_ui import encode_event

    for event in (TextMessageContentEvent(message_id=ident, delta=delta or " ", timestamp=stamp),
                  ToolCallArgsEvent(tool_call_id=ident, delta=delta, timestamp=stamp)):
        assert encode_event(event) == event.model_dump_json(by_alias=True, exclude_none=False)


def _field_values(annotation: Any) -> st.SearchStrategy[Any]:
    """Values of a field of an ag_ui event, by its annotation (None where it may be None)."""
    import enum
    import typing

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Union:
        return st.one_of(*(_field_values(arg) for arg in args))
    if origin is typing.Literal:
        return st.sampled_from(args)
    if annotation is type(None):
        return st.none()
    if annotation is str:
        return st.text()
    if annotation is int:
        return st.integers(-(2**53), 2**53)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return st.sampled_from(list(annotation))
    json_leaf = st.none() | st.booleans() | st.integers(-99, 99) | st.text(max_size=5)
    return st.none() | st.dictionaries(st.text(max_size=5), json_leaf, max_size=3)


FLAT_EVENT_TYPES = [
    "TextMessageStartEvent", "TextMessageEndEvent", "ToolCallStartEvent", "ToolCallEndEvent",
    "StepStartedEvent", "StepFinishedEvent", "ReasoningStartEvent",
    "ReasoningMessageStartEvent", "ReasoningMessageContentEvent", "ReasoningMessageEndEvent",
    "ReasoningEndEvent", "RunErrorEvent", "TextMessageContentEvent", "ToolCallArgsEvent",
    "ToolCallResultEvent", "RunStartedEvent",
]


@st.composite
def ag_ui_events(draw: st.DrawFn) -> Any:
    import ag_ui.core

    kind = getattr(ag_ui.core, draw(st.sampled_from(FLAT_EVENT_TYPES)))
    values = {name: draw(_field_values(info.annotation))
              for name, info in kind.model_fields.items() if name != "type"}
    try:
        return kind.model_validate(values)
    except Exception:  # e.g. an empty delta: not an event that can be sent
        from hypothesis import reject

        reject()


@given(ag_ui_events())
def test_every_event_is_encoded_to_the_json_pydantic_gives(event: Any) -> None:
    """The direct encoding of flat events (and pydantic's for the rest) is pydantic's JSON."""
    from pyox_agents.adapters.ag_ui import encode_event

    assert encode_event(event) == event.model_dump_json(by_alias=True, exclude_none=False)


_JSON_LEAVES = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
                | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=6))
_JSON = st.recursive(_JSON_LEAVES, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)


def ag_ui_messages(text: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[Any]:
    """ag_ui messages of every role a client sends, with optional fields, tool calls, content
    parts and free-form metadata (`text` for their strings)."""
    import ag_ui.core as core

    text = st.text(max_size=6) if text is None else text
    ident = st.text(min_size=1, max_size=6)
    metadata = st.dictionaries(st.text(max_size=3), _JSON, max_size=2)
    calls = st.lists(st.builds(core.ToolCall, id=ident, function=st.builds(
        core.FunctionCall, name=ident, arguments=text), metadata=st.none() | metadata),
        max_size=2)
    parts = st.lists(st.builds(core.TextPart, text=text, id=st.none() | ident), max_size=2)
    return st.one_of(
        st.builds(core.UserMessage, id=ident, content=text | parts, name=st.none() | text,
                  metadata=st.none() | metadata),
        st.builds(core.AssistantMessage, id=ident, content=st.none() | text,
                  toolCalls=st.none() | calls, subagentRunId=st.none() | ident),
        st.builds(core.ToolMessage, id=ident, content=text, toolCallId=ident,
                  error=st.none() | text, encryptedValue=st.none() | text),
        st.builds(core.SystemMessage, id=ident, content=text),
        st.builds(core.DeveloperMessage, id=ident, content=text, name=st.none() | text),
    )


@st.composite
def final_events(draw: st.DrawFn) -> Any:
    """The events that end (and open) a run: nested ag_ui models and JSON values, some frozen."""
    import ag_ui.core as core

    from pyox_agents.state.frozen import freeze

    def json_value() -> Any:
        value = draw(_JSON)
        try:
            return freeze(value) if draw(st.booleans()) else value
        except (TypeError, ValueError):  # not JSON the state takes (nan, a lone surrogate)
            return value

    def maybe(strategy: st.SearchStrategy[Any]) -> Any:
        return draw(st.none() | strategy)

    ident = st.text(min_size=1, max_size=6)
    message = ag_ui_messages()
    stamp = maybe(st.integers(0, 2**53 - 1))
    kind = draw(st.sampled_from(["snapshot", "delta", "messages", "finished"]))
    if kind == "snapshot":
        return core.StateSnapshotEvent(snapshot=json_value(), timestamp=stamp)
    if kind == "delta":
        path = "/" + draw(st.text("ab~01", max_size=4)).replace("~", "~0")
        ops = [{"op": "add", "path": path, "value": json_value()},
               {"op": "remove", "path": "/a/0"}]
        return core.StateDeltaEvent(delta=ops[:draw(st.integers(0, 2))], timestamp=stamp)
    if kind == "messages":
        return core.MessagesSnapshotEvent(messages=draw(st.lists(message, max_size=4)),
                                          timestamp=stamp)
    usage = [core.TokenUsage(input_tokens=1, output_tokens=2, total_tokens=3)]
    return core.RunFinishedEvent(thread_id=draw(ident), run_id=draw(ident), result=json_value(),
                                 timestamp=stamp, usage=maybe(st.just(usage)),
                                 raw_event=maybe(_JSON))


@given(final_events())
def test_the_final_events_are_encoded_to_the_json_pydantic_gives(event: Any) -> None:
    """The run's final events (nested models, JSON values, frozen state) written directly are
    exactly pydantic's JSON; what only pydantic can write (1e+16, inf) is left to it."""
    from pyox_agents.adapters.ag_ui import encode_event

    assert encode_event(event) == event.model_dump_json(by_alias=True, exclude_none=False)


_HOSTILE = st.text(st.characters(exclude_categories=()), max_size=8)
"""Any code point: lone surrogates, control characters, quotes, backslashes, U+2028."""


@given(_HOSTILE, _HOSTILE, st.integers(0, 2**64 + 5))
def test_an_event_orjson_refuses_is_still_written_exactly(text: str, ident: str, big: int
                                                          ) -> None:
    """Rule: every event is written whatever its strings and numbers hold. orjson writes most
    in one call; what it refuses (a lone surrogate, an integer past 64 bits, a non-string key)
    is written the long way, and reads back as the same values."""
    import json

    from ag_ui.core import CustomEvent, StepStartedEvent, ToolCallResultEvent

    from pyox_agents.adapters.ag_ui import encode_event

    events = [StepStartedEvent(step_name=text or "s", timestamp=min(big, 2**53 - 1)),
              ToolCallResultEvent(message_id=ident or "m", tool_call_id="c", content=text),
              CustomEvent(name=ident, value={"n": [big, -big], "t": text})]
    for event in events:
        written = json.loads(encode_event(event))
        assert written == json.loads(json.dumps(event.model_dump(by_alias=True,
                                                                 exclude_none=True,
                                                                 mode="python"), default=str))


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), 2.5, 1e16])
def test_a_float_field_is_written_as_pydantic_writes_it(value: float) -> None:
    """Rule: a field that is a float is written as ag_ui's serializer writes it: an infinite
    one or NaN is left out (ag_ui drops a field whose JSON is null; orjson alone would write
    null), a finite one is written in full."""
    from ag_ui.core import CustomEvent, RunFinishedEvent

    from pyox_agents.adapters.ag_ui import encode_event

    for event in (RunFinishedEvent(thread_id="t", run_id="r", raw_event=value, result=value),
                  CustomEvent(name="n", value=value, timestamp=1)):
        assert encode_event(event) == event.model_dump_json(by_alias=True, exclude_none=False)


@given(messages=st.lists(ag_ui_messages(st.text(st.characters(exclude_categories=()), max_size=4)),
                         max_size=4, unique_by=lambda message: message.id))
@example(messages=[UserMessage(id="u1", content="a lone \ud800 surrogate")])
def test_the_final_snapshot_gives_the_clients_messages_back_as_they_were_sent(
        messages: list[Any]) -> None:
    """Rule: the final MESSAGES_SNAPSHOT gives the client's messages back first, each as the
    client sent it (the stream keeps them as their JSON while the run goes on, or as models
    where a text cannot be written so: a lone surrogate)."""
    import asyncio
    import json

    from ag_ui.core import MessagesSnapshotEvent

    from pyox_agents.adapters.ag_ui import encode_event

    sent = run_input(messages=[m.model_dump(by_alias=True) for m in messages])
    out = asyncio.run(translated([START, DONE], sent))
    expected = json.loads(encode_event(MessagesSnapshotEvent(messages=sent.messages)))
    assert of_type(out, "MESSAGES_SNAPSHOT")[-1]["messages"] == expected["messages"]
