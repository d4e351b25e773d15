"""`SQLiteStore`: the embedded default, one file with the standard library's `sqlite3`.

WAL journaling, one `BEGIN IMMEDIATE ... COMMIT` per `write`, history entries and audit records
appended as rows keyed by (thread, seq) and (run, seq), so a step's cost does not grow with the
thread or the run. One connection shared by threads behind a lock (`check_same_thread=False`),
as sqlite3 needs; several stores (or processes) on one file are serialised by SQLite's own lock.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pyox_agents.stores._encoding import (
    EncodedRecord,
    check_append,
    check_audit,
    dumps,
    encode,
    missing_run,
    missing_thread,
    no_leases,
    run_record,
)
from pyox_agents.stores._kept_changes import encode_changes, kept_version
from pyox_agents.stores._outages import StoreUnavailable, reports_outages
from pyox_agents.stores._owned import (
    INFO_COLUMNS,
    OPENING_ENTRIES,
    check_limit,
    check_title,
    decode_checkpoint,
    encode_checkpoint,
    info_of_row,
    titled,
)
from pyox_agents.stores.base import Checkpoint, LoadedThread, StepRecord, Store, ThreadInfo
from pyox_agents.stores.sqlite_kept import KEPT_SCHEMA, append_changes, load_kept, write_whole

__all__ = ["SQLiteStore"]

_OUTAGES = {
    sqlite3.SQLITE_FULL: "its disk is full: free some space",
    sqlite3.SQLITE_READONLY: "the file is read-only: make it (and its folder) writable",
    sqlite3.SQLITE_IOERR: "the disk failed to read or write: check the disk and free space",
    sqlite3.SQLITE_CANTOPEN: "the file cannot be opened: check that it and its folder exist "
                             "and are writable",
    sqlite3.SQLITE_BUSY: "another process holds its lock past the busy timeout: retry",
}
"""The SQLite result codes of an outage, and what to do about each."""


def _outage(store: SQLiteStore, exc: BaseException) -> StoreUnavailable | None:
    """The `StoreUnavailable` an sqlite3 error stands for (a full disk, a read-only or
    unopenable file, an I/O error, a lock held too long), or None."""
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(exc, sqlite3.Error) or code is None or code & 0xFF not in _OUTAGES:
        return None
    return StoreUnavailable(
        f"the SQLite database {store.path} cannot be written ({exc}; "
        f"{getattr(exc, 'sqlite_errorname', '')}): {_OUTAGES[code & 0xFF]}, then try again; "
        "what was saved before stays as it was")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    id TEXT PRIMARY KEY,
    parent_id TEXT,
    owner TEXT,
    entries INTEGER NOT NULL DEFAULT 0,
    created_at TEXT,
    updated_at TEXT,
    shared_state TEXT,
    shared_version INTEGER,
    first_saved INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS threads_by_first_saved ON threads (first_saved);
CREATE TABLE IF NOT EXISTS entries (
    thread_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (thread_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    thread_id TEXT,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS kept_states (
    thread_id TEXT PRIMARY KEY,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    head TEXT NOT NULL,
    state TEXT,
    PRIMARY KEY (thread_id, run_id)
) WITHOUT ROWID;
"""

_THREAD_COLUMNS = {"title": "TEXT", "archived": "INTEGER NOT NULL DEFAULT 0",
                   "run_status": "TEXT"}
"""The columns of `threads` added since its first version: a file made before gets them."""

_OWNED_INDEX = ("CREATE INDEX IF NOT EXISTS threads_by_owner"
                " ON threads (owner, archived, updated_at, id) WHERE parent_id IS NULL")

_NEW_THREAD = (
    "INSERT INTO threads (id, parent_id, owner, first_saved) VALUES"
    " (?, ?, ?, (SELECT COALESCE(MAX(first_saved), 0) + 1 FROM threads))"
)
_APPEND_ENTRY = "INSERT INTO entries (thread_id, seq, body) VALUES (?, ?, ?)"
_COUNT_ENTRIES = (
    "UPDATE threads SET entries = entries + ?, updated_at = ?, created_at = COALESCE(created_at, ?)"
    " WHERE id = ?"
)
_LINK_THREAD = (
    "UPDATE threads SET parent_id = COALESCE(parent_id, ?), owner = COALESCE(owner, ?) WHERE id = ?"
)
_KEEP_SHARED = "UPDATE threads SET shared_state = ?, shared_version = ? WHERE id = ?"
_UPSERT_RUN = (
    "INSERT INTO runs (run_id, thread_id, body) VALUES (?, ?, ?)"
    " ON CONFLICT (run_id) DO UPDATE SET body = excluded.body"
)
_APPEND_AUDIT = "INSERT INTO audit (run_id, seq, body) VALUES (?, ?, ?)"
_UPSERT_CHECKPOINT = (
    "INSERT INTO checkpoints (thread_id, run_id, seq, head, state) VALUES (?, ?,"
    " (SELECT COALESCE(MAX(seq), 0) + 1 FROM checkpoints WHERE thread_id = ?), ?, ?)"
    " ON CONFLICT (thread_id, run_id) DO UPDATE SET head = excluded.head, state = excluded.state"
)
def _opening(db: sqlite3.Connection, thread_id: str) -> Iterator[str]:
    """The first entries of `thread_id` (JSON text), read when first iterated."""
    for (body,) in db.execute("SELECT body FROM entries WHERE thread_id = ? AND seq < ?"
                              " ORDER BY seq", (thread_id, OPENING_ENTRIES)):
        yield body


@reports_outages(_outage)
class SQLiteStore(Store):
    """A store in one SQLite file (created with its folder if missing); `":memory:"` works too.

    Commits use `synchronous=NORMAL` in WAL mode: a committed step survives a crash of the
    process; only a power cut may lose the last steps (never half of one). A full disk, a
    read-only file or an I/O error raises `StoreUnavailable` (the write changed nothing).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        held = {row[1] for row in self._db.execute("PRAGMA table_info(threads)")}
        for column, kind in _THREAD_COLUMNS.items():
            if column not in held:  # a file an earlier version made
                self._db.execute(f"ALTER TABLE threads ADD COLUMN {column} {kind}")
        self._db.execute(_OWNED_INDEX)
        self._db.executescript(KEPT_SCHEMA)

    @contextmanager
    def _transaction(self, begin: str = "BEGIN IMMEDIATE") -> Iterator[sqlite3.Connection]:
        """`begin` ... `COMMIT`, or `ROLLBACK` if the block or the commit raises.

        SQLite may already have rolled back by itself (a full disk, `RAISE(ROLLBACK)`); then
        there is nothing to roll back and the original error is what the caller sees.
        """
        with self._lock:
            try:  # BEGIN inside: an interrupt right after it must not leave it open
                self._db.execute(begin)
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def write(self, record: StepRecord) -> None:
        """Apply `record` in one transaction, or raise and change nothing."""
        encoded = encode(record)  # fails before the transaction if the record is not JSON
        with self._transaction() as db:
            row = db.execute(
                "SELECT entries FROM threads WHERE id = ?", (record.thread_id,)
            ).fetchone()
            check_append(row[0] if row else 0, record)
            if encoded.run_id is not None:
                (last,) = db.execute(
                    "SELECT MAX(seq) FROM audit WHERE run_id = ?", (encoded.run_id,)
                ).fetchone()
                check_audit(last + 1 if last is not None else 0, encoded)
            if row is None:
                db.execute(_NEW_THREAD, (record.thread_id, record.parent_id, record.owner))
            elif record.parent_id is not None or record.owner is not None:
                db.execute(_LINK_THREAD, (record.parent_id, record.owner, record.thread_id))
            self._append(db, encoded)

    @staticmethod
    def _append(db: sqlite3.Connection, encoded: EncodedRecord) -> None:
        record = encoded.record
        if encoded.entries:
            db.executemany(_APPEND_ENTRY, (
                (record.thread_id, record.first_seq + i, body)
                for i, body in enumerate(encoded.entries)
            ))
            db.execute(_COUNT_ENTRIES, (len(encoded.entries), encoded.updated_at,
                                        encoded.created_at, record.thread_id))
        if encoded.shared_state is not None:
            db.execute(_KEEP_SHARED, (encoded.shared_state, record.shared_version,
                                      record.thread_id))
        if encoded.run is not None:
            db.execute(_UPSERT_RUN, (encoded.run_id, record.thread_id, encoded.run))
            db.executemany(_APPEND_AUDIT, ((encoded.run_id, seq, body)
                                           for seq, body in encoded.audit))

    def _query(self, sql: str, *args: Any) -> list[Any]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def load_thread(self, thread_id: str) -> LoadedThread:
        """The saved entries of `thread_id` and its shared state; LookupError if there is none."""
        with self._transaction("BEGIN") as db:  # one read: the head and the entries agree
            head = db.execute(
                "SELECT shared_state, shared_version, owner FROM threads WHERE id = ?", (thread_id,)
            ).fetchone()
            rows = db.execute(
                "SELECT body FROM entries WHERE thread_id = ? ORDER BY seq", (thread_id,)
            ).fetchall()
        if head is None:
            raise missing_thread(thread_id, self.path)
        shared, version, owner = head
        return LoadedThread.from_texts(thread_id, (body for (body,) in rows), shared, version,
                                       owner)

    def entry_count(self, thread_id: str) -> int:
        """How many entries `thread_id` has saved."""
        rows = self._query("SELECT entries FROM threads WHERE id = ?", thread_id)
        return int(rows[0][0]) if rows else 0

    def thread_owner(self, thread_id: str) -> str | None:
        """The principal `thread_id` was first saved for; LookupError if there is none."""
        rows = self._query("SELECT owner FROM threads WHERE id = ?", thread_id)
        if not rows:
            raise missing_thread(thread_id, self.path)
        owner: str | None = rows[0][0]
        return owner

    def last_entry(self, thread_id: str) -> Mapping[str, Any] | None:
        """The last saved entry of `thread_id`, or None."""
        rows = self._query(
            "SELECT body FROM entries WHERE thread_id = ? ORDER BY seq DESC LIMIT 1", thread_id
        )
        return json.loads(rows[0][0]) if rows else None

    def write_kept_state(self, thread_id: str, kept: Mapping[str, Any],
                         token: int | None = None) -> None:
        """Keep a server's record of the thread's shared state (JSON), replacing the last."""
        no_leases(self, token)
        text = dumps(kept, f"the kept state of thread {thread_id!r}")
        with self._transaction() as db:
            write_whole(db, thread_id, text, kept_version(kept))

    def load_kept_state(self, thread_id: str) -> Mapping[str, Any] | None:
        """What `write_kept_state` kept last for `thread_id`, with the changes appended since
        applied, or None."""
        with self._transaction("BEGIN") as db:  # one read: the base and its changes agree
            return load_kept(db, thread_id)

    def append_kept_changes(self, thread_id: str, since: int,
                            changes: Sequence[Mapping[str, Any]],
                            token: int | None = None) -> None:
        """Append versions' changes to the kept state at version `since`, in one transaction
        (see `Store.append_kept_changes`)."""
        no_leases(self, token)
        encoded = encode_changes(thread_id, since, changes)
        with self._transaction() as db:
            append_changes(db, thread_id, encoded)

    def list_threads(self) -> list[ThreadInfo]:
        """Every thread, in the order they were first saved."""
        return [info_of_row(row) for row in self._query(f"SELECT {INFO_COLUMNS} FROM threads"
                                                  " ORDER BY first_saved")]

    def list_owned(self, owner: str | None, *, archived: bool | None = False, limit: int = 50,
                   after: tuple[str, str] | None = None) -> list[ThreadInfo]:
        """`owner`'s threads, newest change first (see `Store.list_owned`)."""
        check_limit(limit)
        since = ("" if after is None else
                 " AND (COALESCE(updated_at, ''), id) < (?, ?)")
        flag = () if archived is None else (int(archived),)  # None: both
        kind = " AND archived = ?" if flag else ""
        with self._transaction("BEGIN") as db:
            rows = db.execute(
                f"SELECT {INFO_COLUMNS} FROM threads WHERE owner IS ? AND parent_id IS NULL{kind}"
                f"{since} ORDER BY COALESCE(updated_at, '') DESC, id DESC"
                " LIMIT ?", (owner, *flag, *(after or ()), limit)).fetchall()
            return [titled(info_of_row(row), _opening(db, row[0])) for row in rows]

    def update_thread(self, thread_id: str, *, title: str | None = None,
                      archived: bool | None = None) -> None:
        """Give the thread a title and/or archive it; LookupError if there is none."""
        title = check_title(title) if title is not None else None
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM threads WHERE id = ?", (thread_id,)).fetchone() is None:
                raise missing_thread(thread_id, self.path)
            if title is not None:
                db.execute("UPDATE threads SET title = ? WHERE id = ?", (title or None, thread_id))
            if archived is not None:
                db.execute("UPDATE threads SET archived = ? WHERE id = ?",
                           (int(archived), thread_id))

    def write_checkpoint(self, thread_id: str, checkpoint: Checkpoint) -> None:
        """Keep what the server recorded of a run of the thread when it ended."""
        encoded = encode_checkpoint(thread_id, checkpoint)
        with self._transaction() as db:
            db.execute(_UPSERT_CHECKPOINT, (thread_id, encoded.run_id, thread_id, encoded.head,
                                            encoded.state))
            if encoded.status is not None:
                db.execute("UPDATE threads SET run_status = ? WHERE id = ?",
                           (encoded.status, thread_id))

    def load_checkpoints(self, thread_id: str, run_ids: Sequence[str] | None = None, *,
                         states: bool = False) -> list[Checkpoint]:
        """The thread's checkpoints, in the order their runs were first recorded."""
        rows = self._query(f"SELECT run_id, head, {'state' if states else 'NULL'} FROM"
                           " checkpoints WHERE thread_id = ? ORDER BY seq", thread_id)
        wanted = None if run_ids is None else set(run_ids)
        return [decode_checkpoint(run_id, head, state) for run_id, head, state in rows
                if wanted is None or run_id in wanted]

    def erase_records(self, thread_ids: Sequence[str], run_ids: Sequence[str],
                      event_logs: Sequence[str] = ()) -> None:
        """Remove the threads and runs in one transaction (SQLite keeps no event logs)."""
        with self._transaction() as db:
            for table, column in (("entries", "thread_id"), ("threads", "id"),
                                  ("kept_states", "thread_id"), ("checkpoints", "thread_id"),
                                  ("kept_heads", "thread_id"), ("kept_changes", "thread_id")):
                db.executemany(f"DELETE FROM {table} WHERE {column} = ?",
                               [(thread_id,) for thread_id in thread_ids])
            for table in ("runs", "audit"):
                db.executemany(f"DELETE FROM {table} WHERE run_id = ?",
                               [(run_id,) for run_id in run_ids])

    def run_thread(self, run_id: str) -> str:
        """The thread run `run_id` belongs to; LookupError if there is no such run."""
        rows = self._query("SELECT thread_id FROM runs WHERE run_id = ?", run_id)
        if not rows:
            raise missing_run(run_id, self.path)
        return str(rows[0][0])

    def load_run_record(self, run_id: str) -> Mapping[str, Any]:
        """The saved record of `run_id` (JSON); LookupError if there is none."""
        rows = self._query("SELECT body FROM runs WHERE run_id = ?", run_id)
        return run_record(run_id, rows[0][0] if rows else None, self.path)

    def load_audit(self, run_id: str) -> list[Mapping[str, Any]]:
        """The audit records of `run_id`, in order of seq."""
        rows = self._query("SELECT body FROM audit WHERE run_id = ? ORDER BY seq", run_id)
        return [json.loads(body) for (body,) in rows]

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()
