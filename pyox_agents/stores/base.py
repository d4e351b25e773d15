"""The store interface: where threads (conversations), runs and audit records are kept.

Every write is one `StepRecord`: the new history entries of one thread, and (for runs) the run's
record, its new audit records and its shared state (kept while it can resume), applied all
together or not at all. Entries and audit records are appended, never rewritten, so saving a
step costs the same at entry 10 and at entry 10,000. A backend implements the sync methods; the
async ones run them off the event loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio.to_thread

from pyox_agents.stores._kept_changes import encode_changes, fold, kept_version, moved
from pyox_agents.stores._owned import belongings
from pyox_agents.stores._records import (
    Checkpoint,
    LoadedThread,
    StepRecord,
    StoreConflict,
    ThreadInfo,
    bound_state,
    record_after,
)
from pyox_agents.stores._shared import SharedRuns

if TYPE_CHECKING:
    from pyox_agents.state.conversation import State
    from pyox_agents.state.run import RunState

__all__ = ["Checkpoint", "LoadedThread", "SharedRuns", "StepRecord", "Store", "StoreConflict",
           "ThreadInfo"]


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

    def thread_owner(self, thread_id: str) -> str | None:
        """The principal `thread_id` was first saved for (a server's `auth`), or None for a
        thread saved for nobody in particular. A server asks it (`athread_owner`) before every
        request on a thread: backends answer it with one small read, not the whole thread.

        Raises:
            LookupError: no thread has this id.
        """
        return self.load_thread(thread_id).owner

    def last_entry(self, thread_id: str) -> Mapping[str, Any] | None:
        """The last saved entry of `thread_id`, or None."""
        raise NotImplementedError

    def delete(self, thread_id: str) -> None:
        """Forget the thread `thread_id` (its runs and audit records stay; `erase` removes them
        too). Unknown ids: no-op."""
        self.erase_records([thread_id], [])

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

    def write_kept_state(self, thread_id: str, kept: Mapping[str, Any],
                         token: int | None = None) -> None:
        """Keep `kept` for `thread_id`, replacing what was kept: a server's record of the thread's
        latest shared state (JSON, see `pyox_agents.service`). The library never writes it.

        With `token` (stores with leases, `SharedRuns`), the write is fenced like
        `write_fenced`: refused unless `token` is the current holder's of the thread's lease,
        so a process whose thread was taken over cannot overwrite the new owner's state.

        Raises:
            TypeError, ValueError: `kept` is not JSON.
            StoreConflict: `token` is not the current holder's (nothing was written).
            NotImplementedError: a `token` given to a store without leases.
        """
        raise NotImplementedError

    def load_kept_state(self, thread_id: str) -> Mapping[str, Any] | None:
        """What `write_kept_state` kept last, with the changes appended since applied, or None."""
        raise NotImplementedError

    def append_kept_changes(self, thread_id: str, since: int,
                            changes: Sequence[Mapping[str, Any]],
                            token: int | None = None) -> None:
        """Add versions to `thread_id`'s kept state by their changes alone, not the whole
        document: each change is `{"version": n, "ops": [...]}`, the RFC 6902 ops that turn
        the kept document (as `write_kept_state` took it) into version n; versions increase
        past `since`. `load_kept_state` then applies them in order: it gives exactly what a
        whole write would have kept; the store writes it whole again now and then, so a load
        has few changes to apply. Fenced by `token` as `write_kept_state`.

        Refused unless the kept state is at version `since` (its "version", as last written
        whole or appended), so two writers cannot interleave unseen. A backend appends in one
        transaction; this default (a store that has no append) loads, applies, writes whole.

        Raises:
            StoreConflict: the kept state is not at version `since` (or none is kept), or
                `token` is not the current holder's; nothing was written.
            TypeError, ValueError: a change is not JSON or its version does not follow (a
                backend applies the ops at a load: give ops made on the version they follow).
            NotImplementedError: a `token` given to a store without leases.
        """
        encode_changes(thread_id, since, changes)
        kept = self.load_kept_state(thread_id)
        held = None if kept is None else kept_version(kept)
        if kept is None or held != since:
            raise moved(thread_id, since, held)
        self.write_kept_state(thread_id, fold(kept, changes), token)

    # -- threads as an owner's resource (what a server keeps besides the conversation) ---------

    def list_owned(self, owner: str | None, *, archived: bool | None = False, limit: int = 50,
                   after: tuple[str, str] | None = None) -> list[ThreadInfo]:
        """The threads of `owner` (None: the threads saved for nobody in particular) that no
        tool call started, newest change first (`updated_at`, then id, both descending), at
        most `limit` (1 to 200): not archived (`archived=False`), archived (True) or both (None).
        `after`: go on after that thread (`page_key` of the last one of the page before). An
        untitled thread's `title` is the start of its first user message.
        """
        raise NotImplementedError

    def update_thread(self, thread_id: str, *, title: str | None = None,
                      archived: bool | None = None) -> None:
        """Give `thread_id` a `title` ("" takes it away) and/or archive it (`archived`); None
        leaves that as it is. Its history is not changed, nor its `updated_at`.

        Raises:
            LookupError: no thread has this id.
            ValueError: a title over 80 characters or of several lines.
        """
        raise NotImplementedError

    def write_checkpoint(self, thread_id: str, checkpoint: Checkpoint) -> None:
        """Keep what a server recorded of a run of `thread_id` when it ended, replacing what
        was kept of the same run (a paused run is recorded again when it ends); the thread's
        `run_status` becomes the checkpoint's `status`.

        Raises:
            TypeError, ValueError: the checkpoint is not JSON.
        """
        raise NotImplementedError

    def load_checkpoints(self, thread_id: str, run_ids: Sequence[str] | None = None, *,
                         states: bool = False) -> list[Checkpoint]:
        """The checkpoints of `thread_id` (those of `run_ids` only, if given), in the order
        their runs were first recorded; with their `state` only if `states`."""
        raise NotImplementedError

    def erase_records(self, thread_ids: Sequence[str], run_ids: Sequence[str],
                      event_logs: Sequence[str] = ()) -> None:
        """Remove, in one transaction, the threads `thread_ids` with everything kept of them
        (entries, kept state, checkpoints, title), the runs `run_ids` with their audit records,
        and the run event logs `event_logs` (stores that keep them). What `erase` does once it
        found them."""
        raise NotImplementedError

    def erase(self, thread_id: str) -> list[str]:
        """Remove `thread_id` and everything kept of it: its history, kept shared state and
        checkpoints, every run it started with its record and audit log, those runs' event logs,
        and the threads of the subagents its tool calls started (the same, in turn). The run ids
        removed, for the caller's own account of it (`delete` keeps runs and audit logs).
        Unknown ids: nothing happens."""
        found = belongings(self, thread_id)
        if found.threads:
            self.erase_records(found.threads, found.runs, found.event_logs)
        return list(found.runs)

    def close(self) -> None:
        """Release the backend's resources. The store cannot be used afterwards."""

    def __enter__(self) -> Self:
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
        return bound_state(self.load_thread(thread_id), self)

    def record_for(self, state: State) -> StepRecord:
        """The entries of `state` this store lacks (maybe none), checked to continue what it
        holds. The runtime adds the run, audit and shared state to it for a step's write.

        Raises:
            StoreConflict: the store holds a different State under this id.
        """
        held = self.entry_count(state.id)
        return record_after(state, held, self.last_entry(state.id) if held else None)

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

    async def awrite_fenced(self, record: StepRecord, thread_id: str, token: int) -> None:
        """Same as `write_fenced`, off the event loop."""
        await anyio.to_thread.run_sync(self.write_fenced, record, thread_id, token)

    async def arecord_for(self, state: State) -> StepRecord:
        """Same as `record_for`, off the event loop."""
        return await anyio.to_thread.run_sync(self.record_for, state)

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

    async def athread_owner(self, thread_id: str) -> str | None:
        """Same as `thread_owner`, off the event loop."""
        return await anyio.to_thread.run_sync(self.thread_owner, thread_id)

    async def awrite_kept_state(self, thread_id: str, kept: Mapping[str, Any],
                                token: int | None = None) -> None:
        """Same as `write_kept_state`, off the event loop."""
        await anyio.to_thread.run_sync(self.write_kept_state, thread_id, kept, token)

    async def aload_kept_state(self, thread_id: str) -> Mapping[str, Any] | None:
        """Same as `load_kept_state`, off the event loop."""
        return await anyio.to_thread.run_sync(self.load_kept_state, thread_id)

    async def aappend_kept_changes(self, thread_id: str, since: int,
                                   changes: Sequence[Mapping[str, Any]],
                                   token: int | None = None) -> None:
        """Same as `append_kept_changes`, off the event loop."""
        await anyio.to_thread.run_sync(self.append_kept_changes, thread_id, since, changes,
                                       token)

    async def alist_owned(self, owner: str | None, *, archived: bool | None = False,
                          limit: int = 50, after: tuple[str, str] | None = None
                          ) -> list[ThreadInfo]:
        """Same as `list_owned`, off the event loop."""
        return await anyio.to_thread.run_sync(
            lambda: self.list_owned(owner, archived=archived, limit=limit, after=after))

    async def aupdate_thread(self, thread_id: str, *, title: str | None = None,
                             archived: bool | None = None) -> None:
        """Same as `update_thread`, off the event loop."""
        await anyio.to_thread.run_sync(
            lambda: self.update_thread(thread_id, title=title, archived=archived))

    async def awrite_checkpoint(self, thread_id: str, checkpoint: Checkpoint) -> None:
        """Same as `write_checkpoint`, off the event loop."""
        await anyio.to_thread.run_sync(self.write_checkpoint, thread_id, checkpoint)

    async def aload_checkpoints(self, thread_id: str, run_ids: Sequence[str] | None = None, *,
                                states: bool = False) -> list[Checkpoint]:
        """Same as `load_checkpoints`, off the event loop."""
        return await anyio.to_thread.run_sync(
            lambda: self.load_checkpoints(thread_id, run_ids, states=states))

    async def aerase(self, thread_id: str) -> list[str]:
        """Same as `erase`, off the event loop."""
        return await anyio.to_thread.run_sync(self.erase, thread_id)

    async def aclose(self) -> None:
        """Same as `close`, off the event loop."""
        await anyio.to_thread.run_sync(self.close)
