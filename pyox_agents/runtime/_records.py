"""The shapes of what a run records, in one place: the in-flight decision and its calls, a
person's answer to a call (its gate), a closed call, and the sum of two spends.

`RunState.in_flight` stays a dict at runtime (seed 003: it is JSON in the run's record); these
`TypedDict`s name its keys once, for every module that reads or writes them.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypedDict

from pyox_agents.state.messages import Usage
from pyox_agents.state.run import AgentError, Spent

__all__ = ["ClosedCall", "DecisionCall", "Gate", "InFlight", "InFlightDecision", "spent_plus"]


class DecisionCall(TypedDict, total=False):
    """One call of the decision in flight: its id, tool, arguments, idempotency key, whether the
    tool is idempotent, and (when it waits on a paused subagent run) where that run is."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    key: str
    idempotent: bool
    subagent: dict[str, str]


class InFlightDecision(TypedDict):
    """The decision whose calls are running: its index and its calls, in request order."""

    index: int
    calls: list[DecisionCall]


class Gate(TypedDict):
    """A person's answer to the approval request of call `call_id`."""

    call_id: str
    approved: bool
    answer: Any
    arguments: dict[str, Any] | None


class InFlight(TypedDict):
    """`RunState.in_flight`: the next step's call (`step`, `key`, `idempotent`), how often the
    decision was attempted (crashes make it more than 1), the decision, and the gates."""

    step: int
    key: str
    idempotent: bool
    attempt: int
    decision: InFlightDecision
    gates: list[Gate]


class ClosedCall(NamedTuple):
    """A call that has its result: its outcome, result and error, for its step."""

    outcome: str
    result: Any
    error: AgentError | None


def spent_plus(spent: Spent, more: Spent | Usage | None = None, *, steps: int = 0,
               tool_calls: int = 0) -> Spent:
    """`spent` with `more` added (a reply's tokens and cost, or another run's spend with its
    tool calls), and `steps` and `tool_calls` more. Steps and seconds of `more` do not count:
    a subagent's steps are its own, and its seconds are the parent's too."""
    extra_calls = more.tool_calls if isinstance(more, Spent) else 0
    return Spent(  # not dataclasses.replace (1.6x the cost), called several times per step
        steps=spent.steps + steps,
        tool_calls=spent.tool_calls + tool_calls + extra_calls,
        input_tokens=spent.input_tokens + (more.input_tokens if more else 0),
        output_tokens=spent.output_tokens + (more.output_tokens if more else 0),
        cost=spent.cost + (more.cost if more else 0.0),
        seconds=spent.seconds,
    )
