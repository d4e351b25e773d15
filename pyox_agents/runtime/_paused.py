"""The runs an Agent without a store keeps in memory while they wait for a person, so that
`resume` can continue them: bounded in number and in time, since each holds its whole
conversation (a server that keeps every paused run for ever is a memory leak any client can
fill)."""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from typing import Any

from pyox_agents.state.conversation import State
from pyox_agents.state.run import RunState

__all__ = ["PAUSED_RUNS", "PAUSED_SECONDS", "Paused", "PausedRuns"]

PAUSED_RUNS = 1_000
"""How many paused runs an Agent without a store keeps, by default (the oldest go first)."""
PAUSED_SECONDS = 86_400.0
"""How long an Agent without a store keeps a paused run, by default: a day."""


@dataclass
class Paused:
    """One paused run: its record, its conversation, the shared state it resumes with, and the
    principal its thread belongs to (a server's; None for everyone)."""

    run: RunState
    conversation: State
    state: Any = None
    owner: str | None = None
    until: float = field(default=0.0, repr=False)


class PausedRuns:
    """Paused runs by run id, at most `limit` of them, each for at most `seconds`.

    A run kept past its time, or pushed out by newer ones, is gone: `resume` says it is not
    found. Each thread has at most one paused run (its latest), found in O(1).
    """

    def __init__(self, limit: int = PAUSED_RUNS, seconds: float = PAUSED_SECONDS) -> None:
        if limit < 1 or not seconds > 0:
            raise ValueError(f"paused runs need a limit >= 1 and seconds > 0, got {limit} and "
                             f"{seconds}")
        self.limit = limit
        self.seconds = seconds
        self._runs: collections.OrderedDict[str, Paused] = collections.OrderedDict()
        self._of_thread: dict[str, str] = {}  # thread id -> its paused run's id

    def keep(self, paused: Paused) -> None:
        """Keep `paused` (replacing its thread's earlier paused run), the oldest beyond `limit`
        let go."""
        self._expire()
        run_id = paused.run.run_id
        earlier = self._of_thread.get(paused.conversation.id)
        if earlier is not None and earlier != run_id:
            self.pop(earlier)
        paused.until = time.monotonic() + self.seconds
        self._runs[run_id] = paused
        self._runs.move_to_end(run_id)
        self._of_thread[paused.conversation.id] = run_id
        while len(self._runs) > self.limit:
            self.pop(next(iter(self._runs)))

    def get(self, run_id: str) -> Paused | None:
        """The paused run `run_id`, or None (never kept, resumed, or let go)."""
        self._expire()
        return self._runs.get(run_id)

    def of_thread(self, thread_id: str) -> Paused | None:
        """The paused run of thread `thread_id`, or None."""
        self._expire()
        run_id = self._of_thread.get(thread_id)
        return None if run_id is None else self._runs.get(run_id)

    def pop(self, run_id: str) -> Paused | None:
        """Take the paused run `run_id` out (it resumes, or is let go); None if not kept."""
        paused = self._runs.pop(run_id, None)
        if paused is not None and self._of_thread.get(paused.conversation.id) == run_id:
            del self._of_thread[paused.conversation.id]
        return paused

    def __len__(self) -> int:
        self._expire()
        return len(self._runs)

    def _expire(self) -> None:
        """Let go of the runs kept past their time (the oldest first: kept in time order)."""
        now = time.monotonic()
        while self._runs:
            run_id, oldest = next(iter(self._runs.items()))
            if oldest.until > now:
                return
            self.pop(run_id)
