"""Why a run is set to stop: the `Stopped` values of `State.stopped` and their JSON rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

from pyox_agents.state.frozen import JSON
from pyox_agents.state.jsonvalue import call_from_json, call_to_json, frozen_call, to_json_value
from pyox_agents.state.messages import ToolCall

__all__ = [
    "Stopped",
    "StoppedByFinish",
    "StoppedByLimit",
    "StoppedByPermission",
    "StoppedByUntil",
    "stopped_from_json",
    "stopped_to_json",
]


@dataclass(frozen=True)
class StoppedByFinish:
    """finish() was called: `answer` is the State's answer then (JSON form)."""

    answer: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "answer", to_json_value(self.answer, "answer"))


@dataclass(frozen=True)
class StoppedByPermission:
    """A permission denied `call` with stop=True; `permission` names it (JSON form)."""

    call: ToolCall
    permission: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "call", frozen_call(self.call, "StoppedByPermission.call"))
        object.__setattr__(self, "permission", to_json_value(self.permission, "permission"))


@dataclass(frozen=True)
class StoppedByUntil:
    """An until function returned true; `name` is its name, e.g. "waiting_for_user"."""

    name: str


@dataclass(frozen=True)
class StoppedByLimit:
    """The loop ran `turns` turns in this call: `turns` is the limit."""

    turns: int


Stopped: TypeAlias = StoppedByFinish | StoppedByPermission | StoppedByUntil | StoppedByLimit
"""Why a run is set to stop (`State.stopped`)."""


def stopped_to_json(stopped: Stopped) -> dict[str, JSON]:
    match stopped:
        case StoppedByFinish(answer=answer):
            return {"reason": "finish", "answer": answer}
        case StoppedByPermission(call=call, permission=permission):
            return {"reason": "permission", "call": call_to_json(call), "permission": permission}
        case StoppedByUntil(name=name):
            return {"reason": "until", "name": name}
        case StoppedByLimit(turns=turns):
            return {"reason": "limit", "turns": turns}


def stopped_from_json(row: Any) -> Stopped:
    reason = row.get("reason") if isinstance(row, dict) else None
    if reason == "finish":
        return StoppedByFinish(row.get("answer"))
    if reason == "permission":
        return StoppedByPermission(call_from_json(row.get("call")), row.get("permission"))
    if reason == "until" and isinstance(row.get("name"), str):
        return StoppedByUntil(row["name"])
    if reason == "limit" and type(row.get("turns")) is int:
        return StoppedByLimit(row["turns"])
    raise ValueError(f"a stop reason must be finish, permission, until or limit, got {row!r}")
