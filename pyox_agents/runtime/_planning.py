"""Planners: deterministic agents that decide from the run's record instead of asking a model.

`Agent(planner=fn)` calls `fn(run_state)` for every decision, where `run_state` is a copy of
the run's `RunState` rebuilt from its JSON form (so the planner reads exactly what was saved and
cannot change the run), and `fn` returns `CallTool(name, arguments)`, a list of those (parallel
calls), or `Answer(value)`. `run_state.observations()` gives what the earlier steps did.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from pyox_agents.models._streaming import stream_reply
from pyox_agents.models.base import ModelChunk, ModelRequest
from pyox_agents.state.messages import Reply, ToolCall
from pyox_agents.state.run import RunState

__all__ = ["Answer", "CallTool", "Decision", "Planner", "PlannerModel"]


@dataclass(frozen=True, slots=True)
class CallTool:
    """Call tool `name` with `arguments`."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Answer:
    """End the run with `value` as its answer (any JSON value)."""

    value: Any


Decision: TypeAlias = Answer | CallTool | Sequence[CallTool]
Planner: TypeAlias = Callable[[RunState], Any]


class PlannerModel:
    """A `Model` whose replies are a planner's decisions (the agent loop stays the same)."""

    def __init__(self, planner: Planner, run_state: Callable[[], RunState]) -> None:
        self._planner = planner
        self._run_state = run_state
        self.answer: Answer | None = None
        """The last `Answer` the planner gave, so the run can keep its value as it is."""

    @property
    def name(self) -> str:
        """ "planner:" and the planner's name."""
        return "planner:" + getattr(self._planner, "__name__", type(self._planner).__name__)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Ask the planner, and stream its decision as a reply."""
        decision = self._planner(self._run_state().copy())
        if inspect.isawaitable(decision):
            decision = await decision
        async for chunk in stream_reply(self._reply(decision), request):
            yield chunk

    def _reply(self, decision: Any) -> Reply:
        if isinstance(decision, Answer):
            self.answer = decision
            text = decision.value if isinstance(decision.value, str) else json.dumps(decision.value)
            return Reply(text=text)
        calls = [decision] if isinstance(decision, CallTool) else decision
        if not isinstance(calls, Sequence) or not calls or not all(
            isinstance(call, CallTool) for call in calls
        ):
            raise TypeError(
                f"a planner returns Answer(value), CallTool(name, arguments) or a non-empty list "
                f"of CallTool, got {decision!r}")
        return Reply(tool_calls=tuple(ToolCall(c.name, dict(c.arguments)) for c in calls))
