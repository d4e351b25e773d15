"""The shapes of what a run records, in one place: the in-flight decision and its calls, a
person's answer to a call (its gate), a closed call, what one save writes, the sum of two
spends, and the keys and requests a call is given (its idempotency key, an approval request
bound to its arguments).

`RunState.in_flight` stays a dict at runtime (seed 003: it is JSON in the run's record); these
`TypedDict`s name its keys once, for every module that reads or writes them.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from typing import Any, NamedTuple, TypedDict

from pyox_agents.state.audit import canonical_json
from pyox_agents.state.messages import ToolCall, Usage
from pyox_agents.state.run import AgentError, ApprovalRequest, Spent

__all__ = [
    "ClosedCall", "DecisionCall", "Gate", "InFlight", "InFlightDecision", "Saved", "arguments_hash",
    "idempotency_key", "new_request", "spent_plus",
]


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


class Saved(NamedTuple):
    """What one save writes, taken when it is asked for: the run's record, the shared state
    and its version, how many of the conversation's entries and of the run's audit records."""

    run: dict[str, Any]
    shared: Any
    version: int
    entries: int
    audited: int


def arguments_hash(arguments: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a call's arguments: what an approval is bound to."""
    return hashlib.sha256(canonical_json(dict(arguments)).encode()).hexdigest()


def idempotency_key(run_id: str, step: int, call_id: str, arguments: Mapping[str, Any]) -> str:
    """The key a tool reads as `ctx.idempotency_key`: the same on every attempt of one call."""
    text = canonical_json([run_id, step, call_id, dict(arguments)])
    return hashlib.sha256(text.encode()).hexdigest()


def new_request(call: ToolCall, prompt: str, schema: Mapping[str, Any] | None = None
                ) -> ApprovalRequest:
    """An approval request for `call` (its `step` is set when the run pauses)."""
    return ApprovalRequest(id="apr_" + secrets.token_hex(12), step=0, call_id=call.id,
                           tool=call.name, arguments=dict(call.arguments),
                           arguments_hash=arguments_hash(call.arguments), prompt=prompt,
                           schema=dict(schema) if schema is not None else None)
