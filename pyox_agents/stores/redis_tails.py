"""What a `RedisStore` knows of a thread's end while this process holds the thread's lease:
its entry count and its last entry, so that a run's next step is built without asking Redis
what this process just wrote (`record_for` without a round trip).

A tail is learnt from a fenced write that committed, or from a load made while this process
held the lease, and is trusted only while the lease token it was learnt under is the one this
process holds: another process writes the thread only under a newer token, and taking or
giving up the lease forgets what was known. A write whose outcome is unknown (an outage, a
refusal) forgets it too, so the next step asks Redis again. The write script still checks the
count, so a tail that were wrong could only make a step be refused, never land in the wrong
place.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyox_agents.stores._encoding import EncodedRecord
from pyox_agents.stores._records import LoadedThread

__all__ = ["Tail", "ThreadTails"]


@dataclass(frozen=True, slots=True)
class Tail:
    """A thread's entry count and last entry (JSON, as loaded back), as of a lease token;
    and the whole thread as loaded (or that there is none: `missing`), until this process
    writes it."""

    count: int
    last: Mapping[str, Any] | None
    thread: LoadedThread | None = None
    missing: bool = False


class ThreadTails:
    """The tails of the threads written under the leases this process holds.

    Keyed by the leased thread (a subagent's thread is written under its parent thread's
    lease), so giving a lease up forgets every thread written under it. Safe to use from the
    worker threads the sync methods run in.
    """

    def __init__(self) -> None:
        self._held: dict[str, int] = {}
        self._tails: dict[str, tuple[str, int, Tail]] = {}
        self._written: dict[str, set[str]] = {}  # lease thread -> the threads with a tail
        self._lock = threading.Lock()

    def acquired(self, lease_thread: str, token: int) -> None:
        """This process took the lease of `lease_thread` with `token`: what it knew is stale."""
        with self._lock:
            self._drop(lease_thread)
            self._held[lease_thread] = token

    def released(self, lease_thread: str, token: int) -> None:
        """This process gave up (or lost) the lease of `lease_thread` it held with `token`."""
        with self._lock:
            if self._held.get(lease_thread) == token:
                self._drop(lease_thread)

    def token(self, thread_id: str) -> int | None:
        """The token this process holds for the lease of `thread_id`, or None."""
        return self._held.get(thread_id)

    def get(self, thread_id: str) -> Tail | None:
        """The tail of `thread_id` learnt under a lease this process still holds, or None."""
        with self._lock:
            known = self._tails.get(thread_id)
            if known is None or self._held.get(known[0]) != known[1]:
                return None
            return known[2]

    def wrote(self, encoded: EncodedRecord, lease_thread: str, token: int) -> None:
        """A fenced write of `encoded` under `token` committed: the thread's new tail."""
        record = encoded.record
        if encoded.entries:
            last: Mapping[str, Any] | None = json.loads(encoded.entries[-1])
        else:
            known = self.get(record.thread_id)
            if known is None or known.count != record.first_seq:
                self.forget(record.thread_id)
                return
            last = known.last
        self._learn(lease_thread, token, record.thread_id,
                    Tail(record.first_seq + len(encoded.entries), last))

    def loaded(self, thread_id: str, loaded: LoadedThread | None, token: int | None) -> None:
        """`loaded` (None: no such thread) was read while this process held the lease of
        `thread_id` with `token` (taken before the read began)."""
        if token is None:
            return
        tail = Tail(0, None, missing=True) if loaded is None else Tail(
            len(loaded.entries), loaded.entries[-1] if loaded.entries else None, loaded)
        self._learn(thread_id, token, thread_id, tail)

    def forget(self, thread_id: str) -> None:
        """What is known of `thread_id` may be wrong (a write of unknown outcome, a refusal)."""
        with self._lock:
            self._tails.pop(thread_id, None)

    def _learn(self, lease_thread: str, token: int, thread_id: str, tail: Tail) -> None:
        with self._lock:
            if self._held.get(lease_thread) == token:
                self._tails[thread_id] = (lease_thread, token, tail)
                self._written.setdefault(lease_thread, set()).add(thread_id)

    def _drop(self, lease_thread: str) -> None:
        self._held.pop(lease_thread, None)
        for thread_id in self._written.pop(lease_thread, ()):
            known = self._tails.get(thread_id)
            if known is not None and known[0] == lease_thread:
                del self._tails[thread_id]
