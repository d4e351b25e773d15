"""`RunState`: the whole of one run, saved after every step (seed 003).

A run is a sequence of decisions (a model reply, or a planner's choice); each decision asks for
tool calls or gives the answer, and each of those is one `Step`. The record says where the run
is (`status`, `stop_reason`), what it did (`steps`), what it cost (`spent`), what it waits for
(`pending`), which tool call was running when it was saved (`in_flight`) and where its audit
chain ends (`audit_head`). `to_dict`/`from_dict` give its JSON form; `check` says whether a run
can be in this state.
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from pyox_agents.state._run_parts import LIMIT_REASONS as LIMIT_REASONS
from pyox_agents.state._run_parts import (
    REASONS,
    RUN_ID_PATTERN,
    SCHEMA_VERSION,
    AgentError,
    ApprovalRequest,
    RunStatus,
    Spent,
    StateError,
    Step,
    StopReason,
)
from pyox_agents.state.run_json import run_state_fields

__all__ = ["SCHEMA_VERSION", "AgentError", "ApprovalRequest", "RunState", "RunStatus", "Spent",
           "StateError", "Step", "StopReason"]

@dataclass(slots=True)
class RunState:
    """The whole of one run, saved after every step.

    A planner receives a copy of the state rebuilt from its JSON form, so it reads exactly what
    was saved and cannot change the run.
    """

    run_id: str
    goal: str
    status: RunStatus = RunStatus.RUNNING
    stop_reason: StopReason | None = None
    steps: list[Step] = field(default_factory=list)
    spent: Spent = field(default_factory=Spent)
    answer: Any = None
    pending: ApprovalRequest | None = None
    in_flight: dict[str, Any] | None = None
    error: AgentError | None = None
    audit_head: dict[str, Any] | None = None

    @property
    def done(self) -> bool:
        """Whether the run has ended (completed, stopped or failed)."""
        return self.status in (RunStatus.COMPLETED, RunStatus.STOPPED, RunStatus.FAILED)

    def check(self) -> None:
        """Check that the state is one a run can be in.

        Raises:
            StateError: the run id is not 64 hexadecimal digits; the status and the stop reason
                disagree; the steps are not numbered 0, 1, ...; a pending request or an
                in-flight call is not for the next step of this run; a completed run does not
                end with its accepted answer; or `spent.steps` is not the number of decisions
                the steps account for.
        """
        if not isinstance(self.run_id, str) or not RUN_ID_PATTERN.fullmatch(self.run_id):
            raise StateError(f"run_id must be 64 hexadecimal digits, got {self.run_id!r}")
        if self.status is RunStatus.RUNNING and self.stop_reason is not None:
            raise StateError(f"a running run has no stop reason, but stop_reason is "
                             f"{self.stop_reason.value!r}")
        if self.status is not RunStatus.RUNNING and self.stop_reason not in REASONS[self.status]:
            allowed = ", ".join(sorted(r.value for r in REASONS[self.status]))
            got = self.stop_reason.value if self.stop_reason else None
            raise StateError(f"status {self.status.value!r} needs a stop reason among {allowed}, "
                             f"got {got!r}")
        for position, step in enumerate(self.steps):
            if step.index != position:
                raise StateError(f"steps must be numbered 0, 1, ...: step at position {position} "
                                 f"has index {step.index}")
        following = len(self.steps)
        if self.pending is not None and self.pending.step != following:
            raise StateError(f"the pending approval is for step {self.pending.step}, but the next "
                             f"step of this run is {following}")
        if self.in_flight is not None and self.in_flight.get("step") != following:
            raise StateError(f"the in-flight call is for step {self.in_flight.get('step')}, but "
                             f"the next step of this run is {following}")
        if self.status is RunStatus.COMPLETED:
            last = self.steps[-1] if self.steps else None
            if last is None or last.kind != "answer" or last.result != self.answer:
                raise StateError("a completed run must end with a step of kind 'answer' whose "
                                 "result is the accepted answer")
        decisions = self.decisions()
        if self.spent.steps != decisions:
            raise StateError(f"spent.steps is {self.spent.steps}, but the steps account for "
                             f"{decisions} decisions")

    def decisions(self) -> int:
        """How many decisions the steps (and the pending or in-flight call) account for."""
        seen = {step.decision for step in self.steps}
        if self.in_flight is not None:
            seen.add(_decision_index(self.in_flight.get("decision")))
        return len(seen)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-compatible mapping (schema version `SCHEMA_VERSION`)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "run_id": self.run_id,
            "goal": self.goal,
            "status": self.status.value,
            "stop_reason": self.stop_reason.value if self.stop_reason else None,
            "steps": [_step_to_dict(step) for step in self.steps],
            "spent": asdict(self.spent),
            "answer": _copy.deepcopy(self.answer),
            "pending": _approval_to_dict(self.pending) if self.pending else None,
            "in_flight": _copy.deepcopy(self.in_flight),
            "error": self.error.to_dict() if self.error else None,
            "audit_head": dict(self.audit_head) if self.audit_head else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunState:
        """Rebuild a state written by `to_dict`.

        Raises:
            StateError: a key is missing or unknown, the schema version is not
                `SCHEMA_VERSION`, or a field is malformed.
        """
        return RunState(**run_state_fields(data))

    def copy(self) -> RunState:
        """Return an independent copy, rebuilt from `to_dict`."""
        return RunState.from_dict(self.to_dict())

    def observations(self) -> list[dict[str, Any]]:
        """Return each step as a planner reads it, in order.

        Returns:
            `{"index", "kind", "tool", "arguments", "outcome", "result", "error"}` per step;
            `error` is `{"code", "message"}` or None.
        """
        return [{key: value for key, value in _step_to_dict(step).items()
                 if key not in ("decision", "call_id")} for step in self.steps]


def _decision_index(decision: Any) -> int:
    if isinstance(decision, Mapping):
        return int(decision.get("index", -1))
    return int(decision) if isinstance(decision, int) else -1


def _step_to_dict(step: Step) -> dict[str, Any]:
    return {
        "index": step.index,
        "decision": step.decision,
        "kind": step.kind,
        "tool": step.tool,
        "arguments": _copy.deepcopy(dict(step.arguments)) if step.arguments is not None else None,
        "call_id": step.call_id,
        "outcome": step.outcome,
        "result": _copy.deepcopy(step.result),
        "error": step.error.to_dict() if step.error else None,
    }


def _approval_to_dict(request: ApprovalRequest) -> dict[str, Any]:
    return {
        "id": request.id,
        "step": request.step,
        "call_id": request.call_id,
        "tool": request.tool,
        "arguments": _copy.deepcopy(dict(request.arguments)),
        "arguments_hash": request.arguments_hash,
        "prompt": request.prompt,
        "schema": _copy.deepcopy(dict(request.schema)) if request.schema is not None else None,
    }
