"""A thread's kept state in SQLite: the whole document in `kept_states`, its version and size
in `kept_heads`, the versions appended since in `kept_changes` (see `_kept_changes.py`).

The version lives apart from the document: SQLite rewrites a whole row (with the overflow pages
of its text) when one column of it changes, so an append that moved a version kept beside a
100,000-item document rewrote megabytes.

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

__all__ = ["KEPT_SCHEMA", "append_changes", "load_kept", "write_whole"]

KEPT_SCHEMA = """
CREATE TABLE IF NOT EXISTS kept_heads (
    thread_id TEXT PRIMARY KEY,
    version INTEGER,
    size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS kept_changes (
    thread_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (thread_id, version)
) WITHOUT ROWID;
"""
"""The tables of the kept states' versions and changes, added since the first version of the
file (a kept state written before has no head: the first append to it is refused, and it is
written whole)."""


def write_whole(db: sqlite3.Connection, thread_id: str, text: str, version: int | None) -> None:
    """Keep `text` as the thread's whole kept state at `version`; the changes before go."""
    db.execute("INSERT INTO kept_states (thread_id, body) VALUES (?, ?)"
               " ON CONFLICT (thread_id) DO UPDATE SET body = excluded.body", (thread_id, text))
    db.execute("INSERT INTO kept_heads (thread_id, version, size) VALUES (?, ?, ?)"
               " ON CONFLICT (thread_id) DO UPDATE SET version = excluded.version,"
               " size = excluded.size", (thread_id, version, len(text)))
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
    row = db.execute("SELECT version, size FROM kept_heads WHERE thread_id = ?",
                     (thread_id,)).fetchone()
    if row is None or row[0] != encoded.since:
        raise moved(thread_id, encoded.since, None if row is None else row[0])
    db.executemany("INSERT INTO kept_changes (thread_id, version, body) VALUES (?, ?, ?)",
                   [(thread_id, version, text)
                    for version, text in zip(encoded.versions, encoded.texts, strict=True)])
    db.execute("UPDATE kept_heads SET version = ? WHERE thread_id = ?",
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
