"""The parts of a `RunState`: its status and stop reason, its steps, what it spent, what it waits
for, its error, and `StateError` for a state no run can be in; re-exported by
`pyox_agents.state.run`."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyox_agents._errors import PyoxError

SCHEMA_VERSION = 1
"""The version of `RunState.to_dict`'s form; `from_dict` refuses any other."""

RUN_ID_PATTERN = re.compile(r"[0-9a-fA-F]{64}")
"""A run id: 64 hexadecimal digits, in either case."""


class StateError(PyoxError, ValueError):
    """A `RunState` that no run can be in, or a saved form that cannot be read."""


class RunStatus(enum.StrEnum):
    """Where a run is."""

    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    STOPPED = "stopped"
    FAILED = "failed"


class StopReason(enum.StrEnum):
    """Why a run is not running. Each belongs to one status (see `REASONS`)."""

    ANSWERED = "answered"
    APPROVAL = "approval"
    STEPS = "steps"
    TOOL_CALLS = "tool_calls"
    INPUT_TOKENS = "input_tokens"
    OUTPUT_TOKENS = "output_tokens"
    COST = "cost"
    SECONDS = "seconds"
    PERMISSION = "permission"
    UNTIL = "until"
    CANCELLED = "cancelled"
    CLIENT_TOOLS = "client_tools"
    ERROR = "error"


LIMIT_REASONS = frozenset(
    {StopReason.STEPS, StopReason.TOOL_CALLS, StopReason.INPUT_TOKENS, StopReason.OUTPUT_TOKENS,
     StopReason.COST, StopReason.SECONDS})

REASONS: Mapping[RunStatus, frozenset[StopReason]] = {
    RunStatus.RUNNING: frozenset(),
    RunStatus.PAUSED: frozenset({StopReason.APPROVAL}),
    RunStatus.COMPLETED: frozenset({StopReason.ANSWERED}),
    RunStatus.STOPPED: LIMIT_REASONS
    | {StopReason.PERMISSION, StopReason.UNTIL, StopReason.CANCELLED, StopReason.CLIENT_TOOLS},
    RunStatus.FAILED: frozenset({StopReason.ERROR}),
}
"""The stop reasons each status allows (none for a running run)."""


INTERNAL_ERROR_MESSAGE = (
    "the agent failed because of an internal error (a bug in a hook or in pyox-agents); "
    "the run's record (GET /runs/{run_id}) has the details")
"""What a client reads for a run that failed with `internal_error` (never the exception text)."""


@dataclass(frozen=True, slots=True)
class AgentError:
    """Why a run failed or stopped, or why a step failed: a stable `code` and a `message`.

    Codes include "model_error" (the model failed mid-stream), "no_api_key", "auth",
    "not_found", "bad_request", "rate_limited", "provider_unavailable", "timeout", "connection"
    (a provider's answers), "no_provider", "script_exhausted", "internal_error" (a bug in
    pyox-agents or in a hook), "store_error" (the run's record could not be saved),
    "run_timeout", "run_lost" (a server's limits and processes), and for steps "tool_error",
    "denied", "cancelled" and the stop reasons of `StopReason`.

    `message` is the whole account, for the run's record and the server's log. When it holds
    what must stay on the server (a URL, a store's or provider's words, an exception's text),
    `public` is what a client is shown instead: `public_message` gives what a client reads.
    """

    code: str
    message: str
    public: str | None = None
    """What a client is shown instead of `message`; None: `message` is written for clients
    (an internal error's never is)."""

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    @property
    def public_message(self) -> str:
        """What a client reads: `public`, else `message`, except an internal error's, which
        stays on the server (`INTERNAL_ERROR_MESSAGE` instead)."""
        if self.public is not None:
            return self.public
        return INTERNAL_ERROR_MESSAGE if self.code == "internal_error" else self.message

    def to_dict(self) -> dict[str, str]:
        """`{"code", "message"}`."""
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class Spent:
    """What a run has used so far; budgets (`Limits`) are checked against it."""

    steps: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Step:
    """One thing a run did: a tool call (`kind="tool"`) or the answer (`kind="answer"`).

    `decision` numbers the decision that asked for it; several tool calls of one model reply are
    several steps of one decision. `outcome` is "ok", "error", "denied" or "cancelled" for a tool
    call, "client" for a call handed to the client's own tools (its result comes with the next
    run), "answer" for the answer.
    """

    index: int
    decision: int
    kind: str
    tool: str | None = None
    arguments: Mapping[str, Any] | None = None
    call_id: str | None = None
    outcome: str = "ok"
    result: Any = None
    error: AgentError | None = None


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """An action waiting for a person: the tool call of step `step`, or a question a tool asked.

    `arguments_hash` binds the answer to these exact arguments: an answer for other arguments is
    refused. `schema` is the JSON schema of the answer a person gives (None for yes/no).
    """

    id: str
    step: int
    call_id: str
    tool: str
    arguments: Mapping[str, Any]
    arguments_hash: str
    prompt: str
    schema: Mapping[str, Any] | None = None
