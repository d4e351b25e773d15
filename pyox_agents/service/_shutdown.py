"""A graceful shutdown of the runs of a process: each finishes the step it is in, then stops at
the step boundary with its record left for recovery; a deadline stops the rest."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from pyox_agents.runtime._process_runs import leave_for_recovery, stop_at_step_boundary
from pyox_agents.service._live import LiveRun

__all__ = ["drain", "leave"]


def leave(live: LiveRun) -> None:
    """Cancel `live`'s run for a shutdown, its record left as last saved (for recovery)."""
    if live.run_id is not None:
        leave_for_recovery(live.run_id)
    if live.task is not None:
        live.task.cancel()


async def drain(active: Mapping[str, LiveRun], grace: float) -> None:
    """Have every run in `active` stop before its next step, wait up to `grace` seconds for
    them, then stop those still going where they are (`leave`), and wait for them to end."""
    for live in active.values():
        live.shutdown = True
        if live.run_id is not None:
            stop_at_step_boundary(live.run_id)
    tasks = [live.task for live in active.values() if live.task is not None]
    if not tasks:
        return
    _, going = await asyncio.wait(tasks, timeout=grace)
    for live in list(active.values()):
        leave(live)
    if going:
        await asyncio.wait(going)
