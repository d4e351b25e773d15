"""The store interface: where threads (conversations), runs and audit records are kept.

Every write is one `StepRecord`: the new history entries of one thread, and (for runs) the run's
record, its new audit records and its shared state (kept while it can resume), applied all
together or not at all. Entries and audit records are appended, never rewritten, so saving a
step costs the same at entry 10 and at entry 10,000. A backend implements the sync methods; the
async ones run them off the event loop.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio.to_thread

if TYPE_CHECKING:
    from pyox_agents.state.conversation import State
    from pyox_agents.state.run import RunState

__all__ = ["LoadedThread", "SharedRuns", "StepRecord", "Store", "StoreConflict", "ThreadInfo"]


class StoreConflict(ValueError):
    """A write did not follow what the store holds: another State of the same id was saved,
    or another writer appended to the thread (or the run's audit log) meanwhile."""


@dataclass(frozen=True, slots=True)
class StepRecord:
    """What one step writes, in one transaction.

    `entries` are the JSON forms of the thread's new history entries (`entry.to_json()`), the
    first of which is entry number `first_seq` of the thread: the store refuses the record if it
    holds a different count. `run` is the run's record (`RunState.to_dict()`, with its `run_id`)
    and `audit` its new audit records, whose `seq` must continue the run's saved ones.
    `shared_state` is the shared state of the thread's run that is not over (what resuming it
    needs), kept when `shared_version` is given; a run that ended writes None there.
    """

    thread_id: str
    first_seq: int
    entries: tuple[Mapping[str, Any], ...] = ()
    parent_id: str | None = None
    run: Mapping[str, Any] | None = None
    audit: tuple[Mapping[str, Any], ...] = ()
    shared_state: Any = None
    shared_version: int | None = None
    owner: str | None = None


@dataclass(frozen=True, slots=True)
class ThreadInfo:
    """One saved thread, as `list_threads` reports it: `entries` is its history length, and
    `created_at` / `updated_at` the `at` of its first and latest entries (UTC), as in `State`."""

    id: str
    parent_id: str | None
    entries: int
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None
    owner: str | None = None


@dataclass(frozen=True, slots=True)
class LoadedThread:
    """A thread's saved entries (JSON rows, oldest first), and the shared state its run that
    has not ended keeps (None once it ended; `shared_version` None if none was ever written)."""

    id: str
    entries: tuple[Mapping[str, Any], ...]
    shared_state: Any = None
    shared_version: int | None = None
    owner: str | None = None


@dataclass(frozen=True, slots=True)
class EncodedRecord:
    """A `StepRecord` checked and turned into JSON text, before a backend touches anything.

    Both backends encode first, so a record that is not JSON, or has audit records without a
    run, fails the same way everywhere and changes nothing.
    """

    record: StepRecord
    entries: tuple[str, ...]
    run_id: str | None
    run: str | None
    audit: tuple[tuple[int, str], ...]
    shared_state: str | None
    created_at: str | None
    updated_at: str | None


def encode(record: StepRecord) -> EncodedRecord:
    """Check `record` and give the JSON text of each part.

    Raises:
        TypeError: a part is not JSON (a set, an object, a non-string key); the message says
            which part.
        ValueError: a part holds NaN or an infinity, the run has no `run_id`, audit records
            come without a run, or their `seq` values are not consecutive integers.
    """
    where = f"the step record of thread {record.thread_id!r}"
    entries = tuple(
        dumps(entry, f"{where}: entries[{i}]") for i, entry in enumerate(record.entries)
    )
    run_id = run = None
    if record.run is not None:
        run_id = record.run.get("run_id")
        if not isinstance(run_id, str) or not run_id:
            raise ValueError(f"{where}: its run has no run_id (got {run_id!r}); pass "
                             "RunState.to_dict()")
        run = dumps(record.run, f"{where}: run {run_id[:12]}")
    if record.audit and run_id is None:
        raise ValueError(f"{where}: it has audit records but no run; audit records belong to "
                         "a run, so pass the run's record with them")
    audit: list[tuple[int, str]] = []
    for i, item in enumerate(record.audit):
        seq = item.get("seq")
        if type(seq) is not int or (audit and seq != audit[-1][0] + 1):
            raise ValueError(f"{where}: audit[{i}] has seq {seq!r}; the audit records of one "
                             "step must have consecutive integer seq values, oldest first")
        audit.append((seq, dumps(item, f"{where}: audit[{i}]")))
    shared = None
    if record.shared_version is not None:
        shared = dumps(record.shared_state, f"{where}: shared state")
    return EncodedRecord(
        record=record,
        entries=entries,
        run_id=run_id,
        run=run,
        audit=tuple(audit),
        shared_state=shared,
        created_at=_at(record.entries[0]) if record.entries else None,
        updated_at=_at(record.entries[-1]) if record.entries else None,
    )


_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: Any, what: str) -> str:
    """`value` as compact JSON text; TypeError/ValueError naming `what` if it is not JSON.

    The text is UTF-8 (a lone surrogate in a string is written as its `\\udxxx` escape), so
    every backend stores what `MemoryStore` keeps, and loads it back the same.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        if not text.isascii() and _SURROGATE.search(text) is not None:
            # not UTF-8: written escaped, it loads back the same
            text = json.dumps(value, separators=(",", ":"), allow_nan=False)
        return text
    except TypeError as exc:
        raise TypeError(f"{what} is not JSON ({exc}): store only dicts, lists, str, int, "
                        "float, bool and None") from exc
    except ValueError as exc:
        raise ValueError(f"{what} is not JSON ({exc}): NaN and infinities have no JSON form; "
                         "store None or a string instead") from exc


def _at(entry: Mapping[str, Any]) -> str | None:
    at = entry.get("at")
    return at if isinstance(at, str) else None


def parse_time(text: str | None) -> datetime.datetime | None:
    """The datetime of an entry's saved `at` text, or None."""
    return datetime.datetime.fromisoformat(text) if text is not None else None


def check_append(held: int, record: StepRecord) -> None:
    """Refuse `record` unless its entries continue exactly what the store holds for the thread."""
    if record.first_seq != held:
        raise StoreConflict(
            f"thread {record.thread_id!r} has {held} saved history entries, but this write "
            f"continues from entry {record.first_seq}: another State with this id was saved "
            "meanwhile. Continue a saved State with store.load(id), not with a new State of the "
            "same id"
        )


def check_audit(next_seq: int, encoded: EncodedRecord) -> None:
    """Refuse `encoded` unless its audit records continue the run's saved ones at `next_seq`."""
    if encoded.audit and encoded.audit[0][0] != next_seq:
        raise StoreConflict(
            f"run {encoded.run_id!r} has {next_seq} saved audit records, but this write's first "
            f"audit record has seq {encoded.audit[0][0]}: another writer added to this run's "
            "audit log meanwhile, or the run was resumed from an old record; load the run again "
            "with load_run(run_id)"
        )


def missing_thread(thread_id: str, where: str) -> LookupError:
    """The error of a load of a thread that is not saved."""
    return LookupError(f"no thread {thread_id!r} in {where}: save a State under this id first "
                       "(store.save(state)), or check the id with store.list_threads()")


def missing_run(run_id: str, where: str) -> LookupError:
    """The error of a load of a run that is not saved."""
    return LookupError(f"no run {run_id!r} in {where}: a run is saved with its first step; "
                       "check the run id (64 hexadecimal digits)")


class Store:
    """Base class of the backends, which implement `write` and the reading methods.

    `save`, `load`, `delete` and `list_threads` work on conversations (`State`); `write` applies a
    `StepRecord`; `load_run` and `load_audit` read a run's record and audit log. Each has an async
    twin (`asave`, `aload`, ...) that runs the sync method in a worker thread. A store is a
    context manager that closes itself.
    """

    async_only = False
    """True for a store whose sync methods cannot be used (then `State.child` refuses)."""

    # -- primitives a backend implements ------------------------------------------------------

    def write(self, record: StepRecord) -> None:
        """Apply `record` in one transaction: all of it, or raise and change nothing.

        Raises:
            StoreConflict: the thread holds a number of entries other than `record.first_seq`,
                or the run's saved audit records do not end right before `record.audit`.
            TypeError, ValueError: a part of the record is not JSON (see `encode`).
        """
        raise NotImplementedError

    def write_fenced(self, record: StepRecord, thread_id: str, token: int) -> None:
        """`write`, refused unless `token` is the current holder's of `thread_id`'s lease.

        Only stores with leases (`RedisStore`) have it.

        Raises:
            StoreConflict: the token is not the current holder's (the lease passed on).
        """
        raise NotImplementedError(f"{type(self).__name__} has no leases; use write()")

    def load_thread(self, thread_id: str) -> LoadedThread:
        """The saved entries of `thread_id`, and the shared state (and version) of its run that
        has not ended.

        Raises:
            LookupError: no thread has this id.
        """
        raise NotImplementedError

    def entry_count(self, thread_id: str) -> int:
        """How many history entries `thread_id` has saved (0 for an unknown thread)."""
        raise NotImplementedError

    def last_entry(self, thread_id: str) -> Mapping[str, Any] | None:
        """The last saved entry of `thread_id`, or None."""
        raise NotImplementedError

    def delete(self, thread_id: str) -> None:
        """Forget the thread `thread_id` (its runs and audit records stay). Unknown ids: no-op."""
        raise NotImplementedError

    def list_threads(self) -> list[ThreadInfo]:
        """Every saved thread, in the order they were first saved."""
        raise NotImplementedError

    def run_thread(self, run_id: str) -> str:
        """The id of the thread that run `run_id` belongs to.

        Raises:
            LookupError: no run has this id.
        """
        raise NotImplementedError

    def load_run_record(self, run_id: str) -> Mapping[str, Any]:
        """The saved record of run `run_id`, as `RunState.to_dict()` wrote it (its JSON form).

        Raises:
            LookupError: no run has this id.
        """
        raise NotImplementedError

    def load_run(self, run_id: str) -> RunState:
        """The saved `RunState` of run `run_id` (`check()`, `status`, `pending` work on it).

        Raises:
            LookupError: no run has this id.
        """
        from pyox_agents.state.run import RunState

        return RunState.from_dict(self.load_run_record(run_id))

    def load_audit(self, run_id: str) -> list[Mapping[str, Any]]:
        """The audit records of run `run_id`, in order of `seq` (empty for an unknown run)."""
        raise NotImplementedError

    def write_kept_state(self, thread_id: str, kept: Mapping[str, Any]) -> None:
        """Keep `kept` for `thread_id`, replacing what was kept: a server's record of the thread's
        latest shared state (JSON, see `pyox_agents.service`). The library never writes it.

        Raises:
            TypeError, ValueError: `kept` is not JSON.
        """
        raise NotImplementedError

    def load_kept_state(self, thread_id: str) -> Mapping[str, Any] | None:
        """What `write_kept_state` kept for `thread_id` last, or None."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the backend's resources. The store cannot be used afterwards."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    # -- conversations ------------------------------------------------------------------------

    def save(self, state: State) -> None:
        """Append the history entries of `state` that this store does not have yet.

        Only the new entries are turned into JSON and written, so a save costs the same
        however long the thread is.

        Raises:
            StoreConflict: the store holds a different State under the same id (its last saved
                entry is not this State's entry at that index), or another writer appended to
                it meanwhile; continue a saved State with `store.load(id)`, not with a new
                State of the same id.
        """
        record = self.record_for(state)
        if record.entries or record.first_seq == 0:  # nothing new for a saved thread: no write
            self.write(record)

    def load(self, thread_id: str) -> State:
        """The saved State `thread_id`, bound to this store (so `child` can load its subagents).

        Raises:
            LookupError: no State is saved under this id.
        """
        from pyox_agents.state.conversation import State
        from pyox_agents.state.history import entry_from_json

        loaded = self.load_thread(thread_id)
        state = State(id=thread_id, history=[entry_from_json(entry) for entry in loaded.entries])
        state._bind_store(self)
        return state

    def record_for(self, state: State) -> StepRecord:
        """The entries of `state` this store lacks (maybe none), checked to continue what it
        holds. The runtime adds the run, audit and shared state to it for a step's write.

        Raises:
            StoreConflict: the store holds a different State under this id.
        """
        held = self.entry_count(state.id)
        if not held:
            entries = state._entries_since(0)
            return StepRecord(thread_id=state.id, first_seq=0,
                              entries=tuple(entry.to_json() for entry in entries),
                              parent_id=state.parent_id)
        new = state._entries_since(held - 1)  # the last saved entry, then the new ones
        if not new or self.last_entry(state.id) != new[0].to_json():
            raise StoreConflict(
                f"the store holds a different State with id {state.id!r} ({held} entries that "
                "this State's history does not start with): continue a saved State with "
                "store.load(id), not with a new State of the same id"
            )
        return StepRecord(thread_id=state.id, first_seq=held,
                          entries=tuple(entry.to_json() for entry in new[1:]),
                          parent_id=state.parent_id)

    # -- async twins ---------------------------------------------------------------------------

    async def asave(self, state: State) -> None:
        """Same as `save`, off the event loop."""
        await anyio.to_thread.run_sync(self.save, state)

    async def aload(self, thread_id: str) -> State:
        """Same as `load`, off the event loop."""
        return await anyio.to_thread.run_sync(self.load, thread_id)

    async def awrite(self, record: StepRecord) -> None:
        """Same as `write`, off the event loop."""
        await anyio.to_thread.run_sync(self.write, record)

    async def adelete(self, thread_id: str) -> None:
        """Same as `delete`, off the event loop."""
        await anyio.to_thread.run_sync(self.delete, thread_id)

    async def alist_threads(self) -> list[ThreadInfo]:
        """Same as `list_threads`, off the event loop."""
        return await anyio.to_thread.run_sync(self.list_threads)

    async def arun_thread(self, run_id: str) -> str:
        """Same as `run_thread`, off the event loop."""
        return await anyio.to_thread.run_sync(self.run_thread, run_id)

    async def aload_run_record(self, run_id: str) -> Mapping[str, Any]:
        """Same as `load_run_record`, off the event loop."""
        return await anyio.to_thread.run_sync(self.load_run_record, run_id)

    async def aload_run(self, run_id: str) -> RunState:
        """Same as `load_run`, without blocking the event loop."""
        from pyox_agents.state.run import RunState

        return RunState.from_dict(await self.aload_run_record(run_id))

    async def aload_audit(self, run_id: str) -> list[Mapping[str, Any]]:
        """Same as `load_audit`, off the event loop."""
        return await anyio.to_thread.run_sync(self.load_audit, run_id)

    async def aload_thread(self, thread_id: str) -> LoadedThread:
        """Same as `load_thread`, off the event loop."""
        return await anyio.to_thread.run_sync(self.load_thread, thread_id)

    async def aentry_count(self, thread_id: str) -> int:
        """Same as `entry_count`, off the event loop."""
        return await anyio.to_thread.run_sync(self.entry_count, thread_id)

    async def awrite_kept_state(self, thread_id: str, kept: Mapping[str, Any]) -> None:
        """Same as `write_kept_state`, off the event loop."""
        await anyio.to_thread.run_sync(self.write_kept_state, thread_id, kept)

    async def aload_kept_state(self, thread_id: str) -> Mapping[str, Any] | None:
        """Same as `load_kept_state`, off the event loop."""
        return await anyio.to_thread.run_sync(self.load_kept_state, thread_id)

    async def aclose(self) -> None:
        """Same as `close`, off the event loop."""
        await anyio.to_thread.run_sync(self.close)


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

    async def aappend_events(self, run_key: str, events_json: Sequence[str]) -> list[str]:
        """Append events (JSON texts) to the run's log; their ids."""

    async def aread_events(self, run_key: str, after_id: str = "0") -> list[tuple[str, str]]:
        """The run's logged events after `after_id`, as (id, JSON text)."""

    def follow_events(self, run_key: str, after_id: str = "0",
                      block_ms: int = 5000) -> AsyncIterator[tuple[str, str]]:
        """The run's events after `after_id`, those logged then those to come (waiting on the
        store's push), until the log is marked done."""

    async def amark_done(self, run_key: str, ttl: float | None = None) -> None:
        """End the run's log: followers stop; it expires `ttl` seconds later."""

    async def ais_done(self, run_key: str) -> bool:
        """Whether the run's log was marked done."""
