"""`MemoryStore`: everything in this process's memory, with the same rules as the others.

It keeps each record as JSON text, as a database would, so what it gives back is never the
caller's own object and a value that is not JSON fails here too. Use it in tests and for
threads that need not outlive the process.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyox_agents.stores._encoding import (
    check_append,
    check_audit,
    dumps,
    encode,
    missing_run,
    missing_thread,
    no_leases,
    parse_time,
    run_record,
)
from pyox_agents.stores._kept_changes import (
    compacted,
    encode_changes,
    fold_texts,
    kept_version,
    moved,
    wants_compaction,
)
from pyox_agents.stores._owned import (
    OPENING_ENTRIES,
    check_limit,
    check_title,
    decode_checkpoint,
    encode_checkpoint,
    page,
    titled,
)
from pyox_agents.stores.base import Checkpoint, LoadedThread, StepRecord, Store, ThreadInfo

__all__ = ["MemoryStore"]


@dataclass
class _Thread:
    parent_id: str | None
    owner: str | None
    entries: list[str] = field(default_factory=list)
    created_at: str | None = None
    updated_at: str | None = None
    shared_state: str | None = None
    shared_version: int | None = None
    title: str | None = None
    archived: bool = False
    run_status: str | None = None

    def info(self, thread_id: str) -> ThreadInfo:
        """This thread as `list_threads` reports it."""
        return ThreadInfo(thread_id, self.parent_id, len(self.entries),
                          parse_time(self.created_at), parse_time(self.updated_at), self.owner,
                          self.title, self.archived, self.run_status)


@dataclass
class _Kept:
    """A thread's kept state: the whole document's text as last written, its version, and
    the changes appended since (`append_kept_changes`), of `size` characters in all."""

    base: str
    version: int | None
    changes: list[str] = field(default_factory=list)
    size: int = 0


class MemoryStore(Store):
    """A store in memory. Thread-safe; each `write` is all or nothing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: dict[str, _Thread] = {}
        self._runs: dict[str, tuple[str, str]] = {}  # run id -> its thread's id, its record
        self._audit: dict[str, list[str]] = {}
        self._kept: dict[str, _Kept] = {}
        self._checkpoints: dict[str, dict[str, tuple[str, str | None]]] = {}

    def _saved(self, thread_id: str) -> _Thread:
        """The thread `thread_id` (under the lock); LookupError if there is none."""
        thread = self._threads.get(thread_id)
        if thread is None:
            raise missing_thread(thread_id, "this MemoryStore")
        return thread

    def write(self, record: StepRecord) -> None:
        """Apply `record` all together, or raise and change nothing."""
        encoded = encode(record)  # fails before anything changes
        with self._lock:
            thread = self._threads.get(record.thread_id)
            check_append(len(thread.entries) if thread else 0, record)
            audit = self._audit.get(encoded.run_id, []) if encoded.run_id else []
            check_audit(len(audit), encoded)
            # Checked: from here on nothing can fail, so the record lands whole.
            if thread is None:
                thread = _Thread(record.parent_id, record.owner)
                self._threads[record.thread_id] = thread
            thread.parent_id = thread.parent_id or record.parent_id
            thread.owner = thread.owner or record.owner
            thread.entries.extend(encoded.entries)
            if encoded.entries:
                thread.created_at = thread.created_at or encoded.created_at
                thread.updated_at = encoded.updated_at
            if encoded.shared_state is not None:
                thread.shared_state = encoded.shared_state
                thread.shared_version = record.shared_version
            if encoded.run_id is not None and encoded.run is not None:
                self._runs[encoded.run_id] = (record.thread_id, encoded.run)
                self._audit.setdefault(encoded.run_id, []).extend(t for _, t in encoded.audit)

    def load_thread(self, thread_id: str) -> LoadedThread:
        """The saved entries of `thread_id` and its shared state; LookupError if there is none."""
        with self._lock:
            thread = self._saved(thread_id)
            entries = list(thread.entries)
            shared, version, owner = thread.shared_state, thread.shared_version, thread.owner
        return LoadedThread.from_texts(thread_id, entries, shared, version, owner)

    def entry_count(self, thread_id: str) -> int:
        """How many entries `thread_id` has saved."""
        with self._lock:
            thread = self._threads.get(thread_id)
            return len(thread.entries) if thread else 0

    def thread_owner(self, thread_id: str) -> str | None:
        """The principal `thread_id` was first saved for; LookupError if there is none."""
        with self._lock:
            return self._saved(thread_id).owner

    async def athread_owner(self, thread_id: str) -> str | None:
        """Same as `thread_owner` (a dict look-up: no worker thread)."""
        return self.thread_owner(thread_id)

    def last_entry(self, thread_id: str) -> Mapping[str, Any] | None:
        """The last saved entry of `thread_id`, or None."""
        with self._lock:
            thread = self._threads.get(thread_id)
            text = thread.entries[-1] if thread and thread.entries else None
        return json.loads(text) if text is not None else None

    def write_kept_state(self, thread_id: str, kept: Mapping[str, Any],
                         token: int | None = None) -> None:
        """Keep a server's record of the thread's shared state (JSON), replacing the last."""
        no_leases(self, token)
        text = dumps(kept, f"the kept state of thread {thread_id!r}")
        with self._lock:
            self._kept[thread_id] = _Kept(text, kept_version(kept))

    def load_kept_state(self, thread_id: str) -> Mapping[str, Any] | None:
        """What `write_kept_state` kept last for `thread_id`, with the changes appended since
        applied (see `Store.append_kept_changes`), or None."""
        with self._lock:
            kept = self._kept.get(thread_id)
            if kept is None:
                return None
            base, changes = kept.base, list(kept.changes)
        return fold_texts(base, changes)

    def append_kept_changes(self, thread_id: str, since: int,
                            changes: Sequence[Mapping[str, Any]],
                            token: int | None = None) -> None:
        """Append versions' changes to the kept state at version `since`, all or nothing; the
        whole state is written again once they grow past a share of it (see `Store`)."""
        no_leases(self, token)
        encoded = encode_changes(thread_id, since, changes)
        with self._lock:
            kept = self._kept.get(thread_id)
            if kept is None or kept.version != since:
                raise moved(thread_id, since, None if kept is None else kept.version)
            texts, size = [*kept.changes, *encoded.texts], kept.size + encoded.size
            if wants_compaction(len(kept.base), size, len(texts)):  # (raises: no change)
                kept = _Kept(compacted(thread_id, kept.base, texts), encoded.version)
            else:
                kept = _Kept(kept.base, encoded.version, texts, size)
            self._kept[thread_id] = kept

    def list_threads(self) -> list[ThreadInfo]:
        """Every thread, in the order they were first saved."""
        with self._lock:
            return [thread.info(id) for id, thread in self._threads.items()]

    def list_owned(self, owner: str | None, *, archived: bool | None = False, limit: int = 50,
                   after: tuple[str, str] | None = None) -> list[ThreadInfo]:
        """`owner`'s threads, newest change first (see `Store.list_owned`)."""
        check_limit(limit)
        with self._lock:
            infos = [thread.info(id) for id, thread in self._threads.items()]
            return [titled(info, self._threads[info.id].entries[:OPENING_ENTRIES])
                    for info in page(infos, owner, archived=archived, limit=limit, after=after)]

    def update_thread(self, thread_id: str, *, title: str | None = None,
                      archived: bool | None = None) -> None:
        """Give the thread a title and/or archive it; LookupError if there is none."""
        title = check_title(title) if title is not None else None
        with self._lock:
            thread = self._saved(thread_id)
            if title is not None:
                thread.title = title or None
            if archived is not None:
                thread.archived = bool(archived)

    def write_checkpoint(self, thread_id: str, checkpoint: Checkpoint) -> None:
        """Keep what the server recorded of a run of the thread when it ended."""
        encoded = encode_checkpoint(thread_id, checkpoint)
        with self._lock:
            kept = self._checkpoints.setdefault(thread_id, {})
            kept[encoded.run_id] = (encoded.head, encoded.state)
            thread = self._threads.get(thread_id)
            if thread is not None and encoded.status is not None:
                thread.run_status = encoded.status

    def load_checkpoints(self, thread_id: str, run_ids: Sequence[str] | None = None, *,
                         states: bool = False) -> list[Checkpoint]:
        """The thread's checkpoints, in the order their runs were first recorded."""
        wanted = None if run_ids is None else set(run_ids)
        with self._lock:
            rows = [(run_id, head, state) for run_id, (head, state)
                    in self._checkpoints.get(thread_id, {}).items()
                    if wanted is None or run_id in wanted]
        return [decode_checkpoint(run_id, head, state if states else None)
                for run_id, head, state in rows]

    def erase_records(self, thread_ids: Sequence[str], run_ids: Sequence[str],
                      event_logs: Sequence[str] = ()) -> None:
        """Remove the threads and runs, all at once (a MemoryStore keeps no event logs)."""
        with self._lock:
            for thread_id in thread_ids:
                self._threads.pop(thread_id, None)
                self._kept.pop(thread_id, None)
                self._checkpoints.pop(thread_id, None)
            for run_id in run_ids:
                self._runs.pop(run_id, None)
                self._audit.pop(run_id, None)

    def run_thread(self, run_id: str) -> str:
        """The thread run `run_id` belongs to; LookupError if there is no such run."""
        with self._lock:
            run = self._runs.get(run_id)
        if run is None:
            raise missing_run(run_id, "this MemoryStore")
        return run[0]

    def load_run_record(self, run_id: str) -> Mapping[str, Any]:
        """The saved record of `run_id` (JSON); LookupError if there is none."""
        with self._lock:
            run = self._runs.get(run_id)
        return run_record(run_id, run[1] if run else None, "this MemoryStore")

    def load_audit(self, run_id: str) -> list[Mapping[str, Any]]:
        """The audit records of `run_id`, in order of seq."""
        with self._lock:
            texts = list(self._audit.get(run_id, ()))
        return [json.loads(text) for text in texts]
