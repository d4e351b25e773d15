"""Whether a run is over before its next step (answered, finished, stopped by a permission or an
until function, or out of its budget), and its record saying so."""

from __future__ import annotations

from pyox_agents.runtime._journal import Journal
from pyox_agents.runtime._limits import Limits
from pyox_agents.state.conversation import State
from pyox_agents.state.run import StopReason
from pyox_agents.state.stopped import StoppedByLimit, StoppedByPermission, StoppedByUntil

__all__ = ["run_over"]


async def run_over(conversation: State, journal: Journal, limits: Limits | None) -> bool:
    """Whether the run of `journal` on `conversation` is over; if so, its end is recorded and
    saved."""
    stopped = conversation.stopped
    if conversation.finished or (stopped is None and _answered(conversation, journal)):
        journal.answer(conversation.answer)
    elif isinstance(stopped, StoppedByPermission):
        journal.stop(StopReason.PERMISSION, f"denied by permission {stopped.permission}")
    elif isinstance(stopped, StoppedByUntil | StoppedByLimit):
        journal.stop(StopReason.UNTIL, f"stopped by {stopped}")
    elif stopped is None and limits is not None and (
            reached := limits.reached(journal.run.spent, journal.elapsed())) is not None:
        reason, message = reached
        conversation._stop(StoppedByLimit(journal.run.spent.steps))
        journal.stop(reason, message)
    else:
        return False
    await journal.save()
    return True


def _answered(conversation: State, journal: Journal) -> bool:
    """The last decision gave an answer (a reply without tool calls)."""
    messages = conversation.messages
    return (bool(messages) and messages[-1].role == "assistant" and not messages[-1].tool_calls
            and not conversation.pending_calls and journal.run.spent.steps > 0)
