"""`RunState` (seed 003): the record's rules, its JSON form and its checks."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyox_agents.state.messages import Usage
from pyox_agents.state.run import (
    SCHEMA_VERSION,
    AgentError,
    ApprovalRequest,
    RunState,
    RunStatus,
    Spent,
    StateError,
    Step,
    StopReason,
)

RUN_ID = "ab" * 32


def tool_step(index: int, decision: int, **kw: Any) -> Step:
    return Step(
        index, decision, "tool", tool="add", arguments={"x": index}, call_id=f"c{index}", **kw
    )


def completed() -> RunState:
    return RunState(
        RUN_ID,
        "plan a trip",
        status=RunStatus.COMPLETED,
        stop_reason=StopReason.ANSWERED,
        steps=[
            tool_step(0, 0),
            tool_step(1, 0),
            Step(2, 1, "answer", outcome="answer", result="done"),
        ],
        spent=Spent(steps=2, tool_calls=2),
        answer="done",
    )


def test_a_consistent_run_passes_check() -> None:
    completed().check()
    RunState(RUN_ID, "g").check()


def test_run_id_must_be_64_hex_digits() -> None:
    with pytest.raises(StateError, match="run_id must be 64 hexadecimal digits"):
        RunState("abc", "g").check()


def test_a_running_run_has_no_stop_reason() -> None:
    with pytest.raises(StateError, match="a running run has no stop reason"):
        RunState(RUN_ID, "g", stop_reason=StopReason.STEPS).check()


def test_status_and_stop_reason_must_agree() -> None:
    state = RunState(RUN_ID, "g", status=RunStatus.FAILED, stop_reason=StopReason.STEPS)
    with pytest.raises(StateError, match="status 'failed' needs a stop reason among error"):
        state.check()
    with pytest.raises(StateError, match="status 'stopped' needs a stop reason"):
        RunState(RUN_ID, "g", status=RunStatus.STOPPED).check()


def test_steps_must_be_numbered_from_zero() -> None:
    state = RunState(RUN_ID, "g", steps=[tool_step(1, 0)], spent=Spent(steps=1))
    with pytest.raises(StateError, match="step at position 0 has index 1"):
        state.check()


def test_a_pending_request_must_be_for_the_next_step() -> None:
    request = ApprovalRequest("a1", 5, "c1", "add", {}, "h", "ok?")
    state = RunState(
        RUN_ID, "g", status=RunStatus.PAUSED, stop_reason=StopReason.APPROVAL, pending=request
    )
    with pytest.raises(StateError, match="pending approval is for step 5, but the next step"):
        state.check()


def test_an_in_flight_call_must_be_for_the_next_step() -> None:
    in_flight = {
        "step": 3,
        "key": "k",
        "idempotent": False,
        "attempt": 1,
        "decision": {"index": 0, "calls": []},
        "gates": [],
    }
    state = RunState(RUN_ID, "g", in_flight=in_flight, spent=Spent(steps=1))
    with pytest.raises(StateError, match="in-flight call is for step 3"):
        state.check()


def test_a_completed_run_ends_with_its_accepted_answer() -> None:
    state = dataclasses.replace(completed(), answer="something else")
    with pytest.raises(StateError, match="must end with a step of kind 'answer'"):
        state.check()


def test_spent_steps_counts_the_decisions() -> None:
    state = dataclasses.replace(completed(), spent=Spent(steps=3))
    with pytest.raises(StateError, match=r"spent.steps is 3, but the steps account for 2"):
        state.check()


def test_done_is_true_for_completed_stopped_and_failed() -> None:
    assert completed().done
    assert not RunState(RUN_ID, "g").done
    paused = RunState(RUN_ID, "g", status=RunStatus.PAUSED, stop_reason=StopReason.APPROVAL)
    assert not paused.done


def test_to_dict_is_json_with_the_schema_version() -> None:
    data = completed().to_dict()
    assert data["schema_version"] == SCHEMA_VERSION
    assert json.loads(json.dumps(data)) == data


def test_from_dict_refuses_a_missing_key() -> None:
    data = completed().to_dict()
    del data["goal"]
    with pytest.raises(StateError, match="missing key"):
        RunState.from_dict(data)


def test_from_dict_refuses_an_unknown_key() -> None:
    data = completed().to_dict()
    data["steps"][0]["colour"] = "red"
    with pytest.raises(StateError, match=r"steps\[0\]: unknown key\(s\) colour"):
        RunState.from_dict(data)


def test_from_dict_refuses_another_schema_version() -> None:
    data = completed().to_dict() | {"schema_version": 99}
    with pytest.raises(StateError, match="version 99"):
        RunState.from_dict(data)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("status", "sleeping", "status: 'sleeping' is not one of"),
        (
            "spent",
            {
                "steps": -1,
                "tool_calls": 0,
                "input_tokens": 0,
                "output_tokens": 0,
                "cost": 0,
                "seconds": 0,
            },
            "spent.steps: expected an integer",
        ),
        ("error", {"code": 1, "message": "m"}, "error.code: expected a string"),
        ("audit_head", {"seq": 0}, "audit_head: missing key"),
        ("steps", "nope", "steps: expected a list"),
    ],
)
def test_from_dict_refuses_a_malformed_field(field: str, value: Any, message: str) -> None:
    data = completed().to_dict() | {field: value}
    with pytest.raises(StateError, match=message):
        RunState.from_dict(data)


def test_copy_is_independent() -> None:
    original = completed()
    duplicate = original.copy()
    assert duplicate == original
    duplicate.steps.append(Step(3, 2, "answer", outcome="answer"))
    assert len(original.steps) == 3


def test_observations_give_each_step_as_a_planner_reads_it() -> None:
    state = completed()
    state.steps[1] = tool_step(1, 0, outcome="error", error=AgentError("tool_error", "boom"))
    first, second, last = state.observations()
    assert first == {
        "index": 0,
        "kind": "tool",
        "tool": "add",
        "arguments": {"x": 0},
        "outcome": "ok",
        "result": None,
        "error": None,
    }
    assert second["error"] == {"code": "tool_error", "message": "boom"}
    assert last["kind"] == "answer" and last["result"] == "done"


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
ERRORS = st.none() | st.builds(AgentError, st.text(max_size=5), st.text(max_size=10))


@st.composite
def run_states(draw: st.DrawFn) -> RunState:
    count = draw(st.integers(0, 4))
    steps = [
        Step(
            i,
            i,
            draw(st.sampled_from(["tool", "answer"])),
            tool=draw(st.none() | st.text(max_size=4)),
            arguments=draw(
                st.none() | st.dictionaries(st.text(max_size=3), JSON_VALUES, max_size=2)
            ),
            call_id=draw(st.none() | st.text(max_size=4)),
            outcome=draw(st.sampled_from(["ok", "error", "denied", "cancelled", "answer"])),
            result=draw(JSON_VALUES),
            error=draw(ERRORS),
        )
        for i in range(count)
    ]
    pending = draw(
        st.none()
        | st.builds(
            ApprovalRequest,
            st.text(max_size=4),
            st.just(count),
            st.text(max_size=4),
            st.text(max_size=4),
            st.dictionaries(st.text(max_size=3), JSON_VALUES, max_size=2),
            st.text(max_size=8),
            st.text(max_size=8),
            st.none() | st.just({"type": "object"}),
        )
    )
    status = draw(st.sampled_from(list(RunStatus)))
    return RunState(
        run_id=draw(st.text("0123456789abcdef", min_size=64, max_size=64)),
        goal=draw(st.text(max_size=10)),
        status=status,
        stop_reason=draw(st.none() | st.sampled_from(list(StopReason))),
        steps=steps,
        spent=Spent(
            count,
            draw(st.integers(0, 9)),
            draw(st.integers(0, 999)),
            draw(st.integers(0, 999)),
            draw(st.floats(0, 5)),
            draw(st.floats(0, 60)),
        ),
        answer=draw(JSON_VALUES),
        pending=pending,
        in_flight=draw(
            st.none()
            | st.just(
                {
                    "step": count,
                    "key": "k" * 8,
                    "idempotent": True,
                    "attempt": 2,
                    "decision": {"index": count},
                    "gates": ["approved:c1"],
                }
            )
        ),
        error=draw(ERRORS),
        audit_head=draw(
            st.none()
            | st.builds(
                lambda s, d: {"seq": s, "digest": d}, st.integers(0, 99), st.text(max_size=8)
            )
        ),
    )


@given(run_states())
def test_json_round_trip_gives_an_equal_state(state: RunState) -> None:
    assert RunState.from_dict(json.loads(json.dumps(state.to_dict()))) == state


_COUNT = st.integers(0, 10**6)
_SPENT = st.builds(Spent, _COUNT, _COUNT, _COUNT, _COUNT,
                   st.floats(0, 1e6, allow_nan=False), st.floats(0, 1e6, allow_nan=False))


@given(_SPENT, st.none() | _SPENT | st.builds(Usage, _COUNT, _COUNT,
                                                 cost=st.floats(0, 1e3, allow_nan=False)),
       st.integers(0, 3), st.integers(0, 3))
def test_spent_plus_adds_tokens_cost_steps_and_calls_but_keeps_the_seconds(
        spent: Spent, more: Spent | Usage | None, steps: int, calls: int) -> None:
    """What a run used, plus a reply's (or a subagent's) tokens and cost: its own steps and
    seconds only (a subagent's seconds are the parent's too)."""
    from pyox_agents.runtime._records import spent_plus

    extra = more.tool_calls if isinstance(more, Spent) else 0
    assert spent_plus(spent, more, steps=steps, tool_calls=calls) == dataclasses.replace(
        spent, steps=spent.steps + steps, tool_calls=spent.tool_calls + calls + extra,
        input_tokens=spent.input_tokens + (more.input_tokens if more else 0),
        output_tokens=spent.output_tokens + (more.output_tokens if more else 0),
        cost=spent.cost + (more.cost if more else 0.0))
