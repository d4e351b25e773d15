"""Runtime events -> UI message stream chunks, one rule per test (hand-made event lists)."""

from __future__ import annotations

import json

import pytest

from pyox_agents import (
    AgentError,
    ApprovalRequest,
    ApprovalRequested,
    ReasoningDelta,
    ReasoningEnded,
    ReasoningStarted,
    RunFailed,
    RunFinished,
    RunStarted,
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
    ai_sdk,
)
from pyox_agents.adapters.ai_sdk import Chat
from pyox_agents.state._run_parts import INTERNAL_ERROR_MESSAGE
from pyox_agents.state.stopped import StoppedByLimit

from .helpers import bare, check_stream_rules, events_of, snapshots, translate, types

pytestmark = pytest.mark.anyio

RUN = "a" * 64
SUB = "b" * 64


def tool_call(call_id: str = "c1", args: str = '{"n":1}', run_id: str | None = None) -> list:
    return [
        ToolCallStarted(call_id, "inc", "m1", run_id=run_id),
        ToolCallArgsDelta(call_id, args, run_id=run_id),
        ToolCallEnded(call_id, "inc", json.loads(args) if args.startswith("{") else {},
                      run_id=run_id),
    ]


def approval(call_id: str = "c1", prompt: str = "allow inc?") -> ApprovalRequested:
    return ApprovalRequested(ApprovalRequest("apr_1", 0, call_id, "inc", {"n": 1}, "h", prompt))


def run(*middle: object, state: object = None, end: object = None) -> list:
    final = end or RunFinished(answer="ok", state=state if state is not None else {"n": 0})
    return [RunStarted(RUN, "chat-1", {"n": 0}), StepStarted(0), *middle, StepFinished(0), final]


async def test_start_message_id_is_derived_from_the_run() -> None:
    first = await translate(run())
    again = await translate(run())
    assert first[0] == {"type": "start", "messageId": "msg_" + RUN[:32]}
    assert first == again


async def test_continuation_keeps_the_assistant_message_id() -> None:
    chunks = await translate(run(), Chat("chat-1", message_id="msg_client"))
    assert chunks[0] == {"type": "start", "messageId": "msg_client"}


async def test_state_snapshot_at_start_and_not_again_when_nothing_changed() -> None:
    """A run that changes nothing sends the whole state once: the message already ends with
    a `data-state` part equal to the final state."""
    chunks = await translate(run(state={"n": 0}))
    assert types(chunks) == ["start", "data-state", "start-step", "finish-step", "finish"]
    assert snapshots(chunks) == [{"n": 0}]


async def test_state_snapshot_follows_the_tool_output_that_changed_it() -> None:
    change = StateChanged([{"op": "replace", "path": "/n", "value": 1}], {"n": 1}, "c1", 1)
    chunks = await translate(run(*tool_call(), ToolResult("c1", "inc", result=1), change,
                                 state={"n": 1}))
    kinds = types(chunks)
    at = kinds.index("tool-output-available")
    assert kinds[at + 1: at + 3] == ["data-state-delta", "data-state"]
    assert chunks[at + 2]["data"] == {"n": 1}


async def test_state_delta_is_a_transient_patch() -> None:
    change = StateChanged([{"op": "replace", "path": "/n", "value": 1}], {"n": 1}, "c1", 1)
    chunks = await translate(run(*tool_call(), ToolResult("c1", "inc", result=1), change))
    (delta,) = [c for c in chunks if c["type"] == "data-state-delta"]
    assert delta == {"type": "data-state-delta", "transient": True,
                     "data": [{"op": "replace", "path": "/n", "value": 1}]}


async def test_text_maps_to_text_start_delta_end() -> None:
    chunks = await translate(run(TextStarted("m1"), TextDelta("m1", "Hi"), TextEnded("m1", "Hi")))
    assert chunks[3:6] == [{"type": "text-start", "id": "m1"},
                           {"type": "text-delta", "id": "m1", "delta": "Hi"},
                           {"type": "text-end", "id": "m1"}]


async def test_reasoning_maps_to_reasoning_start_delta_end() -> None:
    chunks = await translate(run(ReasoningStarted("m1"), ReasoningDelta("m1", "hm"),
                                 ReasoningEnded("m1", "hm")))
    assert types(chunks)[3:6] == ["reasoning-start", "reasoning-delta", "reasoning-end"]
    assert chunks[4]["delta"] == "hm"


async def test_tool_call_maps_to_tool_input_start_delta_available() -> None:
    chunks = await translate(run(*tool_call(), ToolResult("c1", "inc", result=1)))
    assert chunks[3:7] == [
        {"type": "tool-input-start", "toolCallId": "c1", "toolName": "inc"},
        {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"n":1}'},
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "inc", "input": {"n": 1}},
        {"type": "tool-output-available", "toolCallId": "c1", "output": 1},
    ]


async def test_invalid_arguments_give_tool_input_error_once() -> None:
    result = ToolResult("c1", "inc", error="the arguments of 'inc' are not a JSON object")
    chunks = await translate(run(*tool_call(args="nope"), result))
    errors = [c for c in chunks if c["type"].startswith("tool-") and "error" in c["type"]]
    assert errors == [{"type": "tool-input-error", "toolCallId": "c1", "toolName": "inc",
                       "input": "nope",
                       "errorText": "the arguments of 'inc' are not a JSON object: 'nope'"}]


async def test_tool_error_gives_tool_output_error() -> None:
    chunks = await translate(run(*tool_call(), ToolResult("c1", "inc", error="ValueError: no")))
    assert {"type": "tool-output-error", "toolCallId": "c1", "errorText": "ValueError: no"} \
        in chunks


@pytest.mark.parametrize("v", [6, 7])
async def test_denied_call_gives_tool_output_denied(v: int) -> None:
    chat = Chat("chat-1", message_id="m", denied_calls=frozenset({"c1"}))
    events = run(ToolResult("c1", "inc", error="denied by a person"))
    chunks = await translate(events, chat, v=v)
    assert {"type": "tool-output-denied", "toolCallId": "c1"} in chunks


async def test_denied_call_gives_tool_output_error_on_5() -> None:
    chat = Chat("chat-1", message_id="m", denied_calls=frozenset({"c1"}))
    chunks = await translate(run(ToolResult("c1", "inc", error="denied by a person")), chat, v=5)
    assert {"type": "tool-output-error", "toolCallId": "c1",
            "errorText": "denied by a person"} in chunks


@pytest.mark.parametrize("v", [6, 7])
async def test_approval_request_names_the_approval_and_the_call(v: int) -> None:
    end = RunFinished(answer=None, state={"n": 0}, outcome="interrupt")
    chunks = await translate([*run(*tool_call(), end=end)[:-1], approval(), end], v=v)
    (request,) = [c for c in chunks if c["type"] == "tool-approval-request"]
    assert request["approvalId"] == "apr_1" and request["toolCallId"] == "c1"


async def test_approval_request_on_7_carries_the_prompt_as_reason() -> None:
    end = RunFinished(answer=None, state={"n": 0}, outcome="interrupt")
    chunks = await translate([*run(*tool_call())[:-1], approval(prompt="sure?"), end])
    (request,) = [c for c in chunks if c["type"] == "tool-approval-request"]
    assert request["reason"] == "sure?"


async def test_approval_request_on_6_has_no_7_only_field() -> None:
    end = RunFinished(answer=None, state={"n": 0}, outcome="interrupt")
    chunks = await translate([*run(*tool_call())[:-1], approval(), end], v=6)
    (request,) = [c for c in chunks if c["type"] == "tool-approval-request"]
    assert set(request) == {"type", "approvalId", "toolCallId"}


async def test_approval_request_on_5_is_a_data_part() -> None:
    end = RunFinished(answer=None, state={"n": 0}, outcome="interrupt")
    chunks = await translate([*run(*tool_call())[:-1], approval(), end], v=5)
    assert "tool-approval-request" not in types(chunks)
    (part,) = [c for c in chunks if c["type"] == "data-approval-request"]
    assert part == {"type": "data-approval-request", "id": "apr_1", "data": {
        "approvalId": "apr_1", "toolCallId": "c1", "toolName": "inc", "input": {"n": 1},
        "prompt": "allow inc?"}}


@pytest.mark.parametrize("v", [5, 6, 7])
async def test_paused_run_finishes_with_tool_calls(v: int) -> None:
    end = RunFinished(answer=None, state={"n": 0}, outcome="interrupt")
    chunks = await translate([*run(*tool_call())[:-1], approval(), end], v=v)
    assert bare(chunks[-1]) == {"type": "finish", "finishReason": "tool-calls"}
    check_stream_rules(chunks, v)


async def test_client_tool_handover_finishes_with_tool_calls() -> None:
    end = RunFinished(answer=None, state={"n": 0}, pending_call_ids=("c1",))
    chunks = await translate(run(*tool_call(), end=end))
    assert bare(chunks[-1]) == {"type": "finish", "finishReason": "tool-calls"}
    assert "tool-output-error" not in types(chunks)


async def test_run_stopped_by_a_limit_finishes_with_other() -> None:
    end = RunFinished(answer=None, state={"n": 0}, stopped=StoppedByLimit(3))
    chunks = await translate(run(end=end))
    assert bare(chunks[-1]) == {"type": "finish", "finishReason": "other"}


@pytest.mark.parametrize(("v", "reason"), [(5, "other"), (6, "other"), (7, "interrupted")])
async def test_cancelled_run_finishes_per_version(v: int, reason: str) -> None:
    end = RunFinished(answer=None, state={"n": 0}, outcome="cancelled")
    chunks = await translate([RunStarted(RUN, "chat-1", {"n": 0}), StepStarted(0), end], v=v)
    assert bare(chunks[-1]) == {"type": "finish", "finishReason": reason}


async def test_cancelled_run_closes_open_parts_before_abort() -> None:
    end = RunFinished(answer=None, state={"n": 0}, outcome="cancelled")
    events = [RunStarted(RUN, "chat-1", {"n": 0}), StepStarted(0), TextStarted("m1"),
              TextDelta("m1", "Hel"), ToolCallStarted("c1", "inc", "m1"),
              ToolCallArgsDelta("c1", '{"n"'), end]
    chunks = await translate(events)
    check_stream_rules(chunks)
    assert types(chunks)[-5:] == ["text-end", "tool-input-error", "finish-step", "abort",
                                  "finish"]


async def test_cancelled_run_ends_running_tools_with_an_error() -> None:
    end = RunFinished(answer=None, state={"n": 0}, outcome="cancelled")
    chunks = await translate([RunStarted(RUN, "chat-1", {}), StepStarted(0), *tool_call(), end])
    assert {"type": "tool-output-error", "toolCallId": "c1",
            "errorText": "cancelled: the run was stopped"} in chunks


@pytest.mark.parametrize(("v", "abort"), [
    (5, {"type": "abort"}),
    (6, {"type": "abort", "reason": "the run was stopped"}),
    (7, {"type": "abort", "reason": "the run was stopped"}),
])
async def test_abort_reason_is_sent_from_6_on(v: int, abort: dict) -> None:
    end = RunFinished(answer=None, state={}, outcome="cancelled")
    chunks = await translate([RunStarted(RUN, "chat-1", {}), end], v=v)
    assert abort in chunks


async def test_failed_run_sends_error_then_finish_error() -> None:
    failed = RunFailed(AgentError("model_error", "the provider answered 500"))
    chunks = await translate([RunStarted(RUN, "chat-1", {}), StepStarted(0), failed])
    assert chunks[-3:] == [{"type": "data-run-error", "transient": True, "data": {
                               "code": "model_error", "message": "the provider answered 500"}},
                           {"type": "error", "errorText": "the provider answered 500"},
                           {"type": "finish", "finishReason": "error"}]
    check_stream_rules(chunks)


async def test_failure_closes_open_text_and_tools_before_the_error() -> None:
    failed = RunFailed(AgentError("internal_error", "RuntimeError: boom"))
    events = [RunStarted(RUN, "chat-1", {}), StepStarted(0), TextStarted("m1"), *tool_call(),
              failed]
    chunks = await translate(events)
    check_stream_rules(chunks)
    assert {"type": "tool-output-error", "toolCallId": "c1",
            "errorText": f"the run failed: {INTERNAL_ERROR_MESSAGE}"} in chunks
    assert "boom" not in json.dumps(chunks)  # the exception text stays on the server


async def test_run_failed_before_it_started_still_opens_a_message() -> None:
    chunks = await translate([RunFailed(AgentError("internal_error", "boom"))],
                             Chat("chat-1", message_id="m9"))
    # no snapshot of a state never seen
    assert types(chunks) == ["start", "data-run-error", "error", "finish"]
    assert chunks[0] == {"type": "start", "messageId": "m9"}


@pytest.mark.parametrize("v", [5, 6, 7])
@pytest.mark.parametrize("end", [
    RunFinished(None, {}), RunFinished(None, {}, outcome="interrupt"),
    RunFinished(None, {}, outcome="cancelled"), RunFinished(None, {}, stopped=StoppedByLimit(1)),
    RunFinished(None, {}, pending_call_ids=("x",)), RunFailed(AgentError("x", "y")),
])
async def test_finish_reason_is_one_the_client_major_accepts(v: int, end: object) -> None:
    chunks = await translate([RunStarted(RUN, "chat-1", {}), end], v=v)
    reason = chunks[-1]["finishReason"]
    assert reason in ai_sdk.FINISH_REASONS[v] and reason != "unknown"


async def test_subagent_calls_are_nested_backend_run_parts() -> None:
    events = run(*tool_call("c1"), SubagentStarted(SUB, "c1", "helper", "t2"),
                 StepStarted(0, run_id=SUB), TextStarted("m2", run_id=SUB),
                 TextDelta("m2", "inner", run_id=SUB), TextEnded("m2", "inner", run_id=SUB),
                 *tool_call("c2", run_id=SUB), ToolResult("c2", "inc", result=2, run_id=SUB),
                 StepFinished(0, run_id=SUB), SubagentFinished(SUB, "c1", answer="fine"),
                 ToolResult("c1", "inc", result="fine"))
    chunks = await translate(events)
    check_stream_rules(chunks)
    nested = [c for c in chunks if c.get("toolCallId") == "c2"]
    assert [c["type"] for c in nested] == ["tool-input-start", "tool-input-delta",
                                          "tool-input-available", "tool-output-available"]
    assert all(c.get("providerExecuted") is True for c in nested if c["type"] != "tool-input-delta")
    assert "inner" not in json.dumps(chunks)  # the subagent's answer is its tool's output
    assert types(chunks).count("start-step") == 1


async def test_subagent_state_change_is_sent_as_a_snapshot() -> None:
    change = StateChanged([{"op": "add", "path": "/x", "value": 1}], {"x": 1}, "c2", 1,
                          run_id=SUB)
    chunks = await translate(run(*tool_call("c2", run_id=SUB),
                                 ToolResult("c2", "inc", result=1, run_id=SUB), change))
    assert {"type": "data-state", "id": "state", "data": {"x": 1}} in chunks


async def test_nothing_is_written_after_the_run_ends() -> None:
    chunks = await translate([*run(), TextStarted("late")])
    assert chunks[-1]["type"] == "finish"


async def test_translate_refuses_an_unknown_sdk_version() -> None:
    with pytest.raises(ValueError, match="5, 6 or 7"):
        [c async for c in ai_sdk.translate(Chat("c"), events_of(run()), sdk_version=4)]


def test_encode_chunk_is_compact_json() -> None:
    assert ai_sdk.encode_chunk({"type": "text-delta", "id": "m", "delta": "é"}) == \
        '{"type":"text-delta","id":"m","delta":"é"}'


async def test_encode_writes_sse_frames_ending_with_done() -> None:
    async def chunks():  # type: ignore[no-untyped-def]
        yield {"type": "start"}
        yield {"type": "finish", "finishReason": "stop"}

    frames = [f async for f in ai_sdk.encode(chunks())]
    assert frames == [b'data: {"type":"start"}\n\n',
                      b'data: {"type":"finish","finishReason":"stop"}\n\n', b"data: [DONE]\n\n"]
