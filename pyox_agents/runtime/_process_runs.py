"""The runs executing in this process, and those its shutdown stops: before their next step
(`stop_at_step_boundary`), or where they are (`leave_for_recovery`). Either way a stopped run's
record stays as last saved (status running), so the thread's next request, on any process,
continues it as after a crash."""

from __future__ import annotations

from pyox_agents.state.run import AgentError

__all__ = [
    "SHUTDOWN", "Interrupted", "StoppedForShutdown", "executing", "interrupt_at_step_boundary",
    "interrupting", "leave_for_recovery", "left_for_recovery", "running_here",
    "stop_at_step_boundary", "stopping",
]

_RUNNING: set[str] = set()
"""The ids of the runs executing in this process now."""

_LEFT: set[str] = set()
"""The ids of the runs about to be cancelled because their process shuts down."""

_STOPPING: set[str] = set()
"""The ids of the runs to stop before their next step, because their process shuts down."""

_INTERRUPTING: set[str] = set()
"""The ids of the runs to stop before their next step, for a newer message on their thread."""

SHUTDOWN = AgentError("server_shutdown", "the server is shutting down; the run stopped after "
                      "its last saved step: send a message (or reload) to continue it")
"""Why a run stopped for its process's shutdown (it is left for recovery, not failed)."""


class StoppedForShutdown(Exception):
    """The run stopped at a step boundary for a shutdown: its record stays as saved."""


class Interrupted(Exception):
    """The run stopped at a step boundary because a newer message interrupts it."""


class executing:  # (a function to its callers: `with executing(run_id):`)
    """Count run `run_id` as executing in this process while the block runs.

    A class, not a `contextmanager` generator: a run holds it open as long as it runs (48 bytes,
    against some 450 for the generator and its wrapper, per open run)."""

    __slots__ = ("run_id",)

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id

    def __enter__(self) -> None:
        _RUNNING.add(self.run_id)

    def __exit__(self, *exc: object) -> None:
        run_id = self.run_id
        _RUNNING.discard(run_id)
        _LEFT.discard(run_id)
        _STOPPING.discard(run_id)
        _INTERRUPTING.discard(run_id)


def running_here(run_id: str) -> bool:
    """Whether run `run_id` is executing in this process now."""
    return run_id in _RUNNING


def stop_at_step_boundary(run_id: str) -> None:
    """Have run `run_id` stop before its next step because its process shuts down: it ends
    with `RunFailed(SHUTDOWN)`, its record as saved after its last step."""
    if run_id in _RUNNING:
        _STOPPING.add(run_id)


def interrupt_at_step_boundary(run_id: str) -> bool:
    """Have run `run_id` stop before its next step, ended "cancelled" (its last step's work
    kept), because a newer message on its thread interrupts it. Whether it runs here."""
    if run_id in _RUNNING:
        _INTERRUPTING.add(run_id)
        return True
    return False


def interrupting(run_id: str) -> bool:
    """Whether run `run_id` is to stop before its next step for a newer message."""
    return run_id in _INTERRUPTING


def stopping(run_id: str) -> bool:
    """Whether run `run_id` is to stop before its next step."""
    return run_id in _STOPPING


def leave_for_recovery(run_id: str) -> None:
    """Have run `run_id`, about to be cancelled because its process shuts down, leave its
    record as last saved instead of recording it "cancelled" (a call whose outcome is then
    unknown is asked about when the run continues)."""
    if run_id in _RUNNING:
        _LEFT.add(run_id)


def left_for_recovery(run_id: str) -> bool:
    """Whether run `run_id` is cancelled for a shutdown (its record is to stay as saved)."""
    return run_id in _LEFT
