"""Reading a `RunState` back from its JSON form, refusing anything `to_dict` would not write.

Every error is a `StateError` naming the field (`steps[2].outcome`) and what was wrong, so a
corrupted or foreign record is caught when it is loaded, not halfway through a resumed run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import fields
from typing import Any, NoReturn

from pyox_agents.state._run_parts import (
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

_RUN_KEYS = frozenset({"schema_version", "run_id", "goal", "status", "stop_reason", "steps",
                       "spent", "answer", "pending", "in_flight", "error", "audit_head"})
_STEP_KEYS = frozenset(f.name for f in fields(Step))
_SPENT_KEYS = frozenset(f.name for f in fields(Spent))
_APPROVAL_KEYS = frozenset(f.name for f in fields(ApprovalRequest))
_IN_FLIGHT_KEYS = frozenset({"step", "key", "idempotent", "attempt", "decision", "gates"})
_ERROR_KEYS = frozenset({"code", "message"})
_HEAD_KEYS = frozenset({"seq", "digest"})
_STEP_KINDS = frozenset({"tool", "answer"})
_OUTCOMES = frozenset({"ok", "error", "denied", "cancelled", "client", "answer"})


def _fail(where: str, problem: str) -> NoReturn:
    raise StateError(f"{where}: {problem}")


def _keys(data: Any, expected: frozenset[str], where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        _fail(where, f"expected an object, got {type(data).__name__}")
    missing = sorted(expected - data.keys())
    if missing:
        _fail(where, f"missing key(s) {', '.join(missing)}")
    unknown = sorted(str(k) for k in data.keys() - expected)
    if unknown:
        _fail(where, f"unknown key(s) {', '.join(unknown)}")
    return data


def _int(value: Any, where: str, *, minimum: int = 0) -> int:
    if type(value) is not int or value < minimum:
        _fail(where, f"expected an integer >= {minimum}, got {value!r}")
    return value


def _number(value: Any, where: str) -> float:
    if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
        _fail(where, f"expected a finite number >= 0, got {value!r}")
    return float(value)


def _str(value: Any, where: str, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        _fail(where, f"expected a string, got {value!r}")
    return value


def _json(value: Any, where: str) -> Any:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        _fail(where, f"not JSON ({exc})")
    return value


def _object(value: Any, where: str, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, Mapping):
        _fail(where, f"expected an object, got {type(value).__name__}")
    return dict(_json(value, where))


def _error(value: Any, where: str) -> AgentError | None:
    if value is None:
        return None
    data = _keys(value, _ERROR_KEYS, where)
    return AgentError(_str(data["code"], f"{where}.code"),
                      _str(data["message"], f"{where}.message"))


def _enum(kind: type[Any], value: Any, where: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(member.value for member in kind)
        _fail(where, f"{value!r} is not one of {allowed}")


def _step(value: Any, where: str) -> Step:
    data = _keys(value, _STEP_KEYS, where)
    kind = data["kind"]
    if kind not in _STEP_KINDS:
        _fail(f"{where}.kind", f"{kind!r} is not one of answer, tool")
    outcome = data["outcome"]
    if outcome not in _OUTCOMES:
        _fail(f"{where}.outcome", f"{outcome!r} is not one of {', '.join(sorted(_OUTCOMES))}")
    return Step(
        index=_int(data["index"], f"{where}.index"),
        decision=_int(data["decision"], f"{where}.decision"),
        kind=kind,
        tool=_str(data["tool"], f"{where}.tool", optional=True),
        arguments=_object(data["arguments"], f"{where}.arguments", optional=True),
        call_id=_str(data["call_id"], f"{where}.call_id", optional=True),
        outcome=outcome,
        result=_json(data["result"], f"{where}.result"),
        error=_error(data["error"], f"{where}.error"))


def _spent(value: Any) -> Spent:
    data = _keys(value, _SPENT_KEYS, "spent")
    return Spent(
        steps=_int(data["steps"], "spent.steps"),
        tool_calls=_int(data["tool_calls"], "spent.tool_calls"),
        input_tokens=_int(data["input_tokens"], "spent.input_tokens"),
        output_tokens=_int(data["output_tokens"], "spent.output_tokens"),
        cost=_number(data["cost"], "spent.cost"),
        seconds=_number(data["seconds"], "spent.seconds"))


def _approval(value: Any) -> ApprovalRequest | None:
    if value is None:
        return None
    data = _keys(value, _APPROVAL_KEYS, "pending")
    return ApprovalRequest(
        id=_str(data["id"], "pending.id"),
        step=_int(data["step"], "pending.step"),
        call_id=_str(data["call_id"], "pending.call_id"),
        tool=_str(data["tool"], "pending.tool"),
        arguments=_object(data["arguments"], "pending.arguments"),
        arguments_hash=_str(data["arguments_hash"], "pending.arguments_hash"),
        prompt=_str(data["prompt"], "pending.prompt"),
        schema=_object(data["schema"], "pending.schema", optional=True))


def _in_flight(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    data = _keys(value, _IN_FLIGHT_KEYS, "in_flight")
    _int(data["step"], "in_flight.step")
    _str(data["key"], "in_flight.key")
    if not isinstance(data["idempotent"], bool):
        _fail("in_flight.idempotent", f"expected true or false, got {data['idempotent']!r}")
    _int(data["attempt"], "in_flight.attempt", minimum=1)
    _object(data["decision"], "in_flight.decision")
    if not isinstance(data["gates"], list):
        _fail("in_flight.gates", f"expected a list, got {data['gates']!r}")
    result: dict[str, Any] = json.loads(json.dumps(_json(dict(data), "in_flight")))
    return result


def _audit_head(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    data = _keys(value, _HEAD_KEYS, "audit_head")
    return {"seq": _int(data["seq"], "audit_head.seq"),
            "digest": _str(data["digest"], "audit_head.digest")}


def run_state_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of the `RunState` that `to_dict` wrote as `data` (`RunState.from_dict` builds
    it from them); `StateError` for anything else."""
    data = _keys(data, _RUN_KEYS, "run state")
    version = data["schema_version"]
    if type(version) is not int or version != SCHEMA_VERSION:  # true == 1, but is no version
        _fail("schema_version", f"this record has version {version!r}; this pyox-agents reads "
                                f"version {SCHEMA_VERSION}")
    steps = data["steps"]
    if not isinstance(steps, list):
        _fail("steps", f"expected a list, got {type(steps).__name__}")
    stop_reason = data["stop_reason"]
    run_id = _str(data["run_id"], "run_id")
    if not RUN_ID_PATTERN.fullmatch(run_id):
        _fail("run_id", f"expected 64 hexadecimal digits, got {run_id!r}")
    return dict(
        run_id=run_id,
        goal=_str(data["goal"], "goal"),
        status=_enum(RunStatus, data["status"], "status"),
        stop_reason=None if stop_reason is None else _enum(StopReason, stop_reason, "stop_reason"),
        steps=[_step(step, f"steps[{i}]") for i, step in enumerate(steps)],
        spent=_spent(data["spent"]),
        answer=json.loads(json.dumps(_json(data["answer"], "answer"))),
        pending=_approval(data["pending"]),
        in_flight=_in_flight(data["in_flight"]),
        error=_error(data["error"], "error"),
        audit_head=_audit_head(data["audit_head"]))
