"""Permissions: functions that decide, before a tool runs, whether it may.

`Agent(permissions=[...])` takes callables `(call, ctx) -> decision`, sync or async, asked in
order for every tool call; the first that does not allow decides. A decision is `Allow()` (or
True/None), `Deny(reason, stop=False)` (or False), or `Ask(prompt)` to wait for a person. A
denied call gets a "denied" tool result the model reads; `stop=True` also stops the run with
`StoppedByPermission(call, permission)`, leaving the conversation unfinished.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from pyox_agents.state.messages import ToolCall

__all__ = ["Allow", "Ask", "Decision", "Deny", "Permission", "decide", "permission_name"]


@dataclass(frozen=True, slots=True)
class Allow:
    """The call may run."""


@dataclass(frozen=True, slots=True)
class Deny:
    """The call may not run: the model reads `reason`; `stop=True` also stops the run."""

    reason: str = ""
    stop: bool = False


@dataclass(frozen=True, slots=True)
class Ask:
    """A person must approve the call first; `prompt` is what they are asked."""

    prompt: str = ""


Decision: TypeAlias = Allow | Deny | Ask
Permission: TypeAlias = Callable[[ToolCall, Any], Any | Awaitable[Any]]


def permission_name(permission: Permission) -> str:
    """How a permission is named in results and in `StoppedByPermission`."""
    return str(getattr(permission, "__name__", None) or type(permission).__name__)


async def decide(permissions: tuple[Permission, ...], call: ToolCall, ctx: Any
                 ) -> tuple[Decision, Permission | None]:
    """The first decision that is not Allow, with the permission that made it.

    Raises:
        TypeError: a permission returned something that is not a decision.
    """
    for permission in permissions:
        answer = permission(call, ctx)
        if inspect.isawaitable(answer):
            answer = await answer
        decision = _as_decision(answer, permission)
        if not isinstance(decision, Allow):
            return decision, permission
    return Allow(), None


def _as_decision(answer: Any, permission: Permission) -> Decision:
    if answer is None or answer is True:
        return Allow()
    if answer is False:
        return Deny()
    if answer == "ask":
        return Ask()
    if isinstance(answer, Allow | Deny | Ask):
        return answer
    raise TypeError(
        f"permission {permission_name(permission)} returned {answer!r}; return Allow(), "
        "Deny(reason, stop=...), Ask(prompt), True or False")
