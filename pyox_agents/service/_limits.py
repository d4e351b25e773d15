"""What one server lets a request or a run take, and the check of a request against it."""

from __future__ import annotations

from dataclasses import dataclass

from pyox_agents._run_request import RequestError, RunRequest
from pyox_agents.state._size_bound import json_size_over

__all__ = ["ServerLimits", "check_followers", "check_limits"]


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """What one server lets a request or a run take; None means no limit.

    `state_bytes` and `messages` bound what a request may carry (413 beyond); `state_bytes`
    also bounds what a run's tools may make of the state (a commit past it is refused with an
    error result), so a state the server sent is always accepted back; `run_seconds` is
    a hard deadline (the run is stopped and fails with code "run_timeout"); `runs_total` and
    `runs_per_principal` bound concurrent runs (429 with Retry-After beyond);
    `followers_per_run` bounds the streams that read one run at once in a process, its own
    response included: one more (an AG-UI connect, an AI SDK resume) is refused 429. Without a
    store, the agents keep at most `paused_runs` runs paused for a person in memory, and at most
    `paused_bytes` of their conversations and states, each for at most `paused_seconds` (the
    oldest go first; one let go can no longer be answered). `edits_per_second` paces a
    principal's edits of threads' states.
    """

    state_bytes: int | None = 1_000_000
    messages: int | None = 1_000
    run_seconds: float | None = 600.0
    runs_total: int | None = 1_000
    runs_per_principal: int | None = 50
    followers_per_run: int | None = 32
    retry_after: int = 2
    paused_runs: int = 1_000
    paused_seconds: float = 86_400.0
    paused_bytes: int = 64_000_000
    edits_per_second: float | None = 20.0
    """How many edits of a thread's state (`PATCH .../state`) one principal may send a second,
    on average, in bursts of up to twice that (429 with Retry-After beyond)."""


def check_limits(limits: ServerLimits, request: RunRequest, *, running: int,
                 running_for_principal: int) -> None:
    """Refuse `request` where it is over a limit: 413 for its messages or its state's size, 429
    (with Retry-After) when the server, or the principal, runs as many runs as allowed."""
    if limits.messages is not None and len(request.messages) > limits.messages:
        raise RequestError(413, f"the request has {len(request.messages)} messages; the "
                                f"limit is {limits.messages}", "messages")
    if limits.state_bytes is not None and request.state is not None:
        size = json_size_over(request.state, limits.state_bytes)
        if size is not None:
            raise RequestError(413, f"the shared state is {size} bytes of JSON; the limit "
                                    f"is {limits.state_bytes}", "state")
    retry = {"Retry-After": str(limits.retry_after)}
    if limits.runs_total is not None and running >= limits.runs_total:
        raise RequestError(429, f"the server runs {running} runs, its limit; try "
                                "again shortly", headers=retry)
    if limits.runs_per_principal is not None and running_for_principal >= (
            limits.runs_per_principal):
        raise RequestError(429, f"you have {running_for_principal} runs going, the limit per "
                                "user; try again when one ends", headers=retry)


def check_followers(limits: ServerLimits, following: int) -> None:
    """Refuse one more reader of a run that `following` readers follow now, at the limit: 429
    with Retry-After (a reader that leaves makes room)."""
    if limits.followers_per_run is not None and following >= limits.followers_per_run:
        raise RequestError(429, f"{following} streams follow this run, the limit per run; "
                                "close one (another tab) or try again when one ends",
                           headers={"Retry-After": str(limits.retry_after)})
