"""What a client reads of a failed run: the same public message and code on every protocol.

An `internal_error` (a bug in a hook or in pyox-agents) carries the exception text; that text
stays on the server (its log and the run's record, `GET /runs/{run_id}`), and the client reads
`INTERNAL_ERROR_MESSAGE` instead. Every other code's message is written for the client already
(a provider's answer, a limit, a missing script step).
"""

from __future__ import annotations

from pyox_agents.state.run import AgentError

__all__ = ["INTERNAL_ERROR_MESSAGE", "public_message"]

INTERNAL_ERROR_MESSAGE = (
    "the agent failed because of an internal error (a bug in a hook or in pyox-agents); "
    "the run's record (GET /runs/{run_id}) has the details"
)
"""What a client reads for a run that failed with `internal_error` (never the exception text)."""


def public_message(error: AgentError) -> str:
    """The message a client reads for `error`: never an internal error's exception text."""
    return INTERNAL_ERROR_MESSAGE if error.code == "internal_error" else error.message
