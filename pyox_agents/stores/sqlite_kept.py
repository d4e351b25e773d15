"""A thread's kept state in SQLite: the whole document in `kept_states` (with its version and
size), the versions appended since in `kept_changes` (see `_kept_changes.py`).

Each function runs inside the caller's transaction (`SQLiteStore._transaction`), so a whole
write, an append and a compaction are each all or nothing, and an append's check of the
version it extends and its insert see the same file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from pyox_agents.stores._kept_changes import (
    EncodedChanges,
    compacted,
    fold_texts,
    moved,
    wants_compaction,
)

__all__ = ["KEPT_COLUMNS", "KEPT_SCHEMA", "add_kept_columns", "append_changes", "load_kept",
           "write_whole"]

KEPT_SCHEMA = """
CREATE TABLE IF NOT EXISTS kept_changes (
    thread_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (thread_id, version)
) WITHOUT ROWID;
"""

KEPT_COLUMNS = {"version": "INTEGER", "size": "INTEGER NOT NULL DEFAULT 0"}
"""The columns of `kept_states` added since its first version: a file made before gets them
(its kept states have no version then: the first append is refused, and written whole)."""


def add_kept_columns(db: sqlite3.Connection) -> None:
    """Make the kept-state tables of a file an earlier version made what this one needs."""
    db.executescript(KEPT_SCHEMA)
    held = {row[1] for row in db.execute("PRAGMA table_info(kept_states)")}
    for column, kind in KEPT_COLUMNS.items():
        if column not in held:
            db.execute(f"ALTER TABLE kept_states ADD COLUMN {column} {kind}")


def write_whole(db: sqlite3.Connection, thread_id: str, text: str, version: int | None) -> None:
    """Keep `text` as the thread's whole kept state at `version`; the changes before go."""
    db.execute("INSERT INTO kept_states (thread_id, body, version, size) VALUES (?, ?, ?, ?)"
               " ON CONFLICT (thread_id) DO UPDATE SET body = excluded.body,"
               " version = excluded.version, size = excluded.size",
               (thread_id, text, version, len(text)))
    db.execute("DELETE FROM kept_changes WHERE thread_id = ?", (thread_id,))


def load_kept(db: sqlite3.Connection, thread_id: str) -> Mapping[str, Any] | None:
    """The thread's kept state with its appended changes applied, or None."""
    row = db.execute("SELECT body FROM kept_states WHERE thread_id = ?",
                     (thread_id,)).fetchone()
    if row is None:
        return None
    return fold_texts(row[0], _changes(db, thread_id))


def append_changes(db: sqlite3.Connection, thread_id: str, encoded: EncodedChanges) -> None:
    """Append `encoded` to the kept state at its version `since`, then write the whole state
    again if the changes grew past a share of it.

    Raises:
        StoreConflict: the kept state is not at version `since`.
    """
    row = db.execute("SELECT version, size FROM kept_states WHERE thread_id = ?",
                     (thread_id,)).fetchone()
    if row is None or row[0] != encoded.since:
        raise moved(thread_id, encoded.since, None if row is None else row[0])
    db.executemany("INSERT INTO kept_changes (thread_id, version, body) VALUES (?, ?, ?)",
                   [(thread_id, version, text)
                    for version, text in zip(encoded.versions, encoded.texts, strict=True)])
    db.execute("UPDATE kept_states SET version = ? WHERE thread_id = ?",
               (encoded.version, thread_id))
    count, size = db.execute("SELECT count(*), total(length(body)) FROM kept_changes"
                             " WHERE thread_id = ?", (thread_id,)).fetchone()
    if wants_compaction(row[1], int(size), count):
        (base,) = db.execute("SELECT body FROM kept_states WHERE thread_id = ?",
                             (thread_id,)).fetchone()
        text = compacted(thread_id, base, _changes(db, thread_id))
        write_whole(db, thread_id, text, encoded.version)


def _changes(db: sqlite3.Connection, thread_id: str) -> list[str]:
    return [body for (body,) in db.execute(
        "SELECT body FROM kept_changes WHERE thread_id = ? ORDER BY version", (thread_id,))]
