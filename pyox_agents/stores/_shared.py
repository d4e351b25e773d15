"""`SharedRuns`: the companion of the `Store` protocol for a store that several server processes
share (a thread's lease, its active run, each run's event log), and the checks of an event-log
append that such stores share."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from pyox_agents.stores._records import StepRecord


@runtime_checkable
class SharedRuns(Protocol):
    """A store that lets several server processes share runs (`RedisStore`): a per-thread lease
    with a fencing token, the thread's active run, and each run's event log, which any process
    can follow as it grows (a push, never polling). `isinstance(store, SharedRuns)` tells."""

    def write_fenced(self, record: StepRecord, thread_id: str, token: int) -> None:
        """`write`, refused unless `token` is the thread's current lease token."""

    def lease_holder(self, thread_id: str) -> tuple[str, int] | None:
        """The owner and token of the thread's lease, or None when nobody holds it."""

    async def aacquire_lease(self, thread_id: str, owner: str, ttl: float) -> int | None:
        """Take the thread's lease for `ttl` seconds: its new fencing token, or None if held."""

    async def arenew_lease(self, thread_id: str, owner: str, token: int, ttl: float) -> bool:
        """Extend a lease this owner holds with `token`; False if it was lost."""

    async def arelease_lease(self, thread_id: str, owner: str, token: int) -> bool:
        """Give the lease back; False if it was no longer this owner's."""

    async def aset_active(self, thread_id: str, run_key: str, ttl: float) -> None:
        """Record `run_key` as the run active on the thread, for `ttl` seconds."""

    async def aget_active(self, thread_id: str) -> str | None:
        """The run key active on the thread, or None."""

    async def aclear_active(self, thread_id: str, run_key: str) -> bool:
        """Clear the thread's active run if it is still `run_key`."""

    async def aappend_events(self, run_key: str, events_json: Sequence[str],
                             keep: int | None = None) -> list[str]:
        """Append events (JSON texts) to the run's log; their ids. With `keep`, the log keeps
        only its latest `keep` events (a feed's log, which no reader needs further back)."""

    async def aread_events(self, run_key: str, after_id: str = "0") -> list[tuple[str, str]]:
        """The run's logged events after `after_id`, as (id, JSON text)."""

    async def alast_event_id(self, run_key: str) -> str:
        """The id of the latest event in the run's log ("0" when it has none)."""

    def follow_events(self, run_key: str, after_id: str = "0",
                      block_ms: int = 5000) -> AsyncIterator[tuple[str, str]]:
        """The run's events after `after_id`, those logged then those to come (waiting on the
        store's push), until the log is marked done."""

    async def amark_done(self, run_key: str, ttl: float | None = None) -> None:
        """End the run's log: followers stop; it expires `ttl` seconds later."""

    async def ais_done(self, run_key: str) -> bool:
        """Whether the run's log was marked done."""


@runtime_checkable
class EndsRuns(Protocol):
    """A `SharedRuns` store that ends a run in one round trip (`RedisStore`): its last events
    logged, its log marked done, the thread's active run cleared and its lease released, at
    once. Others do it in those four calls."""

    async def aend_run(self, thread_id: str, run_key: str, owner: str, token: int,
                       events_json: Sequence[str] = ()) -> bool:
        """Log `events_json`, mark the log done, clear the active run and release the lease;
        whether the lease was still this owner's."""


def feed_log_key(thread_id: str, principal: str | None) -> str:
    """The event log that carries the feed of `principal`'s thread `thread_id` between server
    processes (`GET /threads/{id}/events`); erasing the thread erases it."""
    return "feed:" + json.dumps([principal, thread_id], separators=(",", ":"))


def check_events(events_json: Sequence[str], method: str) -> None:
    """Refuse one str given for a list of events' JSON texts."""
    if isinstance(events_json, str):
        raise TypeError(f"{method}() takes a list of JSON texts, got one str; "
                        "wrap it: [event_json]")


def check_keep(keep: int | None) -> None:
    """Refuse a `keep` (how many events a log keeps) that is neither None nor a positive int."""
    if keep is not None and (type(keep) is not int or keep < 1):
        raise ValueError(f"keep must be a positive int (the events a log keeps), got {keep!r}")


def log_done(run_key: str) -> ValueError:
    """The refusal of an append to the event log of a run that was marked done."""
    return ValueError(f"run {run_key!r} was marked done, so its event log takes no more "
                      "events; start a new run key for a new run")
