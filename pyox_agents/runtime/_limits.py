"""Budgets: `Agent(limits=Limits(...))` stops a run when it has spent enough.

Limits are checked before every decision against the run's `Spent`, which is saved with the run:
spend survives a resume (nothing resets it), and what a subagent spends counts for its parent.
A run that reaches a limit stops with `status="stopped"`, a stop reason naming the limit, and
`StoppedByLimit` on the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from pyox_agents.state.run import Spent, StopReason

__all__ = ["Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    """The most a run may spend; None means no limit.

    `steps` counts decisions (model replies or planner choices), `tool_calls` tool calls,
    `input_tokens`/`output_tokens` tokens, `cost` money (as the model reports it), `seconds`
    the time spent running (not waiting for a person).
    """

    steps: int | None = None
    tool_calls: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    seconds: float | None = None

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                      or value < 0):
                raise ValueError(f"Limits({item.name}=...) must be a number >= 0, got {value!r}")

    def reached(self, spent: Spent, seconds: float) -> tuple[StopReason, str] | None:
        """The first limit `spent` has reached (with a message), or None."""
        checks = (
            (self.steps, spent.steps, StopReason.STEPS, "decisions"),
            (self.tool_calls, spent.tool_calls, StopReason.TOOL_CALLS, "tool calls"),
            (self.input_tokens, spent.input_tokens, StopReason.INPUT_TOKENS, "input tokens"),
            (self.output_tokens, spent.output_tokens, StopReason.OUTPUT_TOKENS, "output tokens"),
            (self.cost, spent.cost, StopReason.COST, "cost"),
            (self.seconds, seconds, StopReason.SECONDS, "seconds"),
        )
        for limit, used, reason, what in checks:
            if limit is not None and used >= limit:
                return reason, f"the run reached its limit of {limit} {what} (spent {used:g})"
        return None
