"""What a runner is given: its agent's setup, its access to the shared state, where its events
go, and the pause a subagent's call raises."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyox_agents.events import RuntimeEvent
from pyox_agents.models.base import Model
from pyox_agents.runtime._in_order import Emit, InOrder
from pyox_agents.runtime._limits import Limits
from pyox_agents.runtime._permissions import Permission
from pyox_agents.state.conversation import State
from pyox_agents.state.patch import Op
from pyox_agents.state.run import ApprovalRequest
from pyox_agents.state.shared import SharedState
from pyox_agents.stores.base import Store
from pyox_agents.tools import PersonNeeded, RunContext, Tool

__all__ = ["NO_ACCESS", "Access", "Emit", "Instructions", "Setup", "SubagentPaused", "discard"]

Instructions = str | Callable[[RunContext], Any] | None

NO_ACCESS = (
    "this subagent has no access to the shared state: give it with "
    'as_tool(..., state="read") or state="write"')


def discard(events: Sequence[RuntimeEvent]) -> None:
    """An `Emit` for turns nobody streams (custom loops, ask, compact)."""

@dataclass(frozen=True, slots=True)
class Setup:
    """What a runner needs of its agent."""

    model: Model | None
    tools: Mapping[str, Tool]
    instructions: Instructions = None
    reporters: Sequence[Any] = ()
    permissions: tuple[Permission, ...] = ()
    store: Store | None = None
    limits: Limits | None = None
    planner: Any = None
    tool_timeout: float | None = None
    name: str | None = None
    state_note: Any = True

    async def report(self, hook: str, *args: Any) -> None:
        """Call method `hook` of each reporter that has one (awaited if it is async)."""
        for reporter in self.reporters:
            method = getattr(reporter, hook, None)
            if method is not None and inspect.isawaitable(outcome := method(*args)):
                await outcome


@dataclass(slots=True)
class Access:
    """How this run reaches the shared state: its own, its parent's, or none.

    `owner` is the conversation whose history records the changes (a "write" subagent records
    them in its parent's).
    """

    shared: SharedState
    owner: State
    writable: bool = True
    denied: str | None = None
    undo: list[tuple[int, list[Op]]] | None = None
    """A "write" subagent's commits, as (version, the ops that take it back), to take them
    back if it fails (a tool that fails changes nothing, seed 004)."""
    in_order: InOrder = field(default_factory=InOrder)
    """How the versions of `shared` are shown in the order they were committed (one for a
    run and its subagents)."""


class SubagentPaused(PersonNeeded):
    """Raised by a subagent's tool call when the subagent's run paused for a person: the
    parent pauses with the same `request`, and `link` says where the subagent's run is
    (`{"thread_id", "run_id", "call_id"}`), so the answer resumes it in place."""

    def __init__(self, request: ApprovalRequest, link: Mapping[str, str]) -> None:
        super().__init__(request.prompt, request.schema)
        self.request = request
        self.link = dict(link)
