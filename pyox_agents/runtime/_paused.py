"""The runs an Agent without a store keeps in memory while they wait for a person, so that
`resume` can continue them: bounded in number and in time, since each holds its whole
conversation (a server that keeps every paused run for ever is a memory leak any client can
fill)."""

from __future__ import annotations

import collections
import json
import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from pyox_agents.state.conversation import State
from pyox_agents.state.run import RunState

__all__ = ["PAUSED_BYTES", "PAUSED_RUNS", "PAUSED_SECONDS", "Paused", "PausedRuns"]

PAUSED_RUNS = 1_000
"""How many paused runs an Agent without a store keeps, by default (the oldest go first)."""
PAUSED_SECONDS = 86_400.0
"""How long an Agent without a store keeps a paused run, by default: a day."""
PAUSED_BYTES = 64_000_000
"""How much an Agent without a store keeps of paused runs at most, by default, as the JSON of
their conversations and states (the oldest go first; the newest is always kept)."""


@dataclass
class Paused:
    """One paused run: its record, its conversation, the shared state it resumes with, and the
    principal its thread belongs to (a server's; None for everyone)."""

    run: RunState
    conversation: State
    state: Any = None
    owner: str | None = None
    until: float = field(default=0.0, repr=False)
    size: int = field(default=0, repr=False)


class PausedRuns:
    """Paused runs by run id, at most `limit` of them and `max_bytes` of their conversations'
    and states' JSON, each for at most `seconds`.

    A run kept past its time, or pushed out by newer ones, is gone: `resume` says it is not
    found. Each thread has at most one paused run (its latest), found in O(1).
    """

    def __init__(self, limit: int = PAUSED_RUNS, seconds: float = PAUSED_SECONDS,
                 max_bytes: int = PAUSED_BYTES) -> None:
        if limit < 1 or not seconds > 0 or max_bytes < 1:
            raise ValueError(f"paused runs need a limit >= 1, seconds > 0 and max_bytes >= 1, "
                             f"got {limit}, {seconds} and {max_bytes}")
        self.limit = limit
        self.seconds = seconds
        self.max_bytes = max_bytes
        self._bytes = 0
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
        self.pop(run_id)
        paused.until = time.monotonic() + self.seconds
        paused.size = _size(paused)
        self._runs[run_id] = paused
        self._bytes += paused.size
        self._of_thread[paused.conversation.id] = run_id
        while len(self._runs) > self.limit or (self._bytes > self.max_bytes
                                               and len(self._runs) > 1):
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
        if paused is None:
            return None
        self._bytes -= paused.size
        if self._of_thread.get(paused.conversation.id) == run_id:
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


def _size(paused: Paused) -> int:
    """What a paused run holds, as the JSON text of its conversation's history and its state
    (measured once, when it is kept)."""
    history = sum(_json_length(entry.to_json()) for entry in paused.conversation.history)
    return history + _json_length(paused.state)


def _json_length(value: Any) -> int:
    try:
        return len(orjson.dumps(value, default=str))
    except orjson.JSONEncodeError:  # a lone surrogate, an integer past 64 bits
        return len(json.dumps(value, default=str))
