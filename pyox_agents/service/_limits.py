"""What one server lets a request or a run take."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ServerLimits"]


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """What one server lets a request or a run take; None means no limit.

    `state_bytes` and `messages` bound what a request may carry (413 beyond); `state_bytes`
    also bounds what a run's tools may make of the state (a commit past it is refused with an
    error result), so a state the server sent is always accepted back; `run_seconds` is
    a hard deadline (the run is stopped and fails with code "run_timeout"); `runs_total` and
    `runs_per_principal` bound concurrent runs (429 with Retry-After beyond).
    """

    state_bytes: int | None = 1_000_000
    messages: int | None = 1_000
    run_seconds: float | None = 600.0
    runs_total: int | None = 1_000
    runs_per_principal: int | None = 50
    retry_after: int = 2
