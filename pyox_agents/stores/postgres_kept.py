"""A thread's kept state in PostgreSQL: the whole document in `kept_states` (with its version,
size and generation), the versions appended since in `kept_changes` (see `_kept_changes.py`).

A whole write is one call of `keep_state`, an append one call of `append_kept`: each checks
the lease token (when given) and, for an append, the version it extends, then writes, in one
transaction. When an append leaves many changes, the store folds them into the base (in
Python, with the state's patch code) and writes it back only if no whole write or other
compaction came meanwhile (the `generation` it read), so a compaction never loses a change; a
compaction that fails is logged and left to the next append (the changes are kept).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import anyio.to_thread

from pyox_agents.stores._encoding import dumps
from pyox_agents.stores._kept_changes import (
    COMPACT_SHARE,
    MAX_CHANGES,
    NOT_FOLDED,
    EncodedChanges,
    compacted,
    encode_changes,
    fold_texts,
    kept_refusal,
    kept_version,
)
from pyox_agents.stores.postgres_connection import ChangeRefused, PostgresConnection, Query

__all__ = ["KeptStates"]

_log = logging.getLogger(__name__)

_KEEP = "SELECT {s}.keep_state(%s, %s, %s, %s, %s)"
_APPEND = "SELECT {s}.append_kept(%s, %s, %s, %s::bigint[], %s::text[], %s, %s)"
_LOAD = (
    "SELECT k.body, k.generation, ARRAY(SELECT c.version FROM {s}.kept_changes c"
    " WHERE c.thread_id = k.thread_id ORDER BY c.version), ARRAY(SELECT c.body"
    " FROM {s}.kept_changes c WHERE c.thread_id = k.thread_id ORDER BY c.version)"
    " FROM {s}.kept_states k WHERE k.thread_id = %s"
)
_COMPACT = (
    "WITH k AS (UPDATE {s}.kept_states SET body = %s, size = %s, generation = generation + 1"
    " WHERE thread_id = %s AND generation = %s RETURNING thread_id)"
    " DELETE FROM {s}.kept_changes WHERE thread_id IN (SELECT thread_id FROM k)"
    " AND version <= %s"
)


class KeptStates(PostgresConnection):
    """The kept-state methods of a PostgresStore (see `Store.write_kept_state`)."""

    def write_kept_state(self, thread_id: str, kept: Mapping[str, Any],
                         token: int | None = None) -> None:
        """Keep a server's record of the thread's shared state (JSON), replacing the last;
        with `token`, only while it is the thread's lease token (checked and written at once).

        Raises:
            StoreConflict: `token` is not the current holder's; nothing was written.
        """
        with _refusals(thread_id, None, token):
            self.run(_whole(thread_id, kept, token))

    async def awrite_kept_state(self, thread_id: str, kept: Mapping[str, Any],
                                token: int | None = None) -> None:
        """Same as `write_kept_state`, on the asyncio pool."""
        with _refusals(thread_id, None, token):
            await self.arun(_whole(thread_id, kept, token))

    def load_kept_state(self, thread_id: str) -> Mapping[str, Any] | None:
        """What `write_kept_state` kept last for `thread_id`, with the changes appended since
        applied, or None."""
        rows = self.run(Query(_LOAD, (thread_id,)))
        return fold_texts(rows[0][0], rows[0][3]) if rows else None

    async def aload_kept_state(self, thread_id: str) -> Mapping[str, Any] | None:
        """Same as `load_kept_state`, on the asyncio pool."""
        rows = await self.arun(Query(_LOAD, (thread_id,)))
        return fold_texts(rows[0][0], rows[0][3]) if rows else None

    def append_kept_changes(self, thread_id: str, since: int,
                            changes: Sequence[Mapping[str, Any]],
                            token: int | None = None) -> None:
        """Append versions' changes to the kept state at version `since`, in one transaction
        (see `Store.append_kept_changes`); fold them into the base once they are many."""
        encoded = encode_changes(thread_id, since, changes)
        with _refusals(thread_id, encoded, token):
            rows = self.run(_append(thread_id, encoded, token))
        if rows[0][0] is not None:  # many changes: fold them into the base
            try:
                compaction = _compaction(thread_id, self.run(Query(_LOAD, (thread_id,))))
                if compaction is not None:
                    self.run(compaction)
            except Exception:  # the changes are kept: the next append folds them
                _log.warning(NOT_FOLDED, thread_id, exc_info=True)

    async def aappend_kept_changes(self, thread_id: str, since: int,
                                   changes: Sequence[Mapping[str, Any]],
                                   token: int | None = None) -> None:
        """Same as `append_kept_changes`, on the asyncio pool."""
        encoded = encode_changes(thread_id, since, changes)
        with _refusals(thread_id, encoded, token):
            rows = await self.arun(_append(thread_id, encoded, token))
        if rows[0][0] is not None:
            try:
                read = await self.arun(Query(_LOAD, (thread_id,)))
                # the whole state to text: off the event loop
                compaction = await anyio.to_thread.run_sync(_compaction, thread_id, read)
                if compaction is not None:
                    await self.arun(compaction)
            except Exception:
                _log.warning(NOT_FOLDED, thread_id, exc_info=True)


@contextmanager
def _refusals(thread_id: str, encoded: EncodedChanges | None,
              token: int | None) -> Iterator[None]:
    """Raise a schema function's refusal of a kept-state write as its StoreConflict."""
    try:
        yield
    except ChangeRefused as refused:
        raise kept_refusal(thread_id, encoded, token, refused.outcome, refused.held) from None


def _whole(thread_id: str, kept: Mapping[str, Any], token: int | None) -> Query:
    text = dumps(kept, f"the kept state of thread {thread_id!r}")
    return Query(_KEEP, (thread_id, token, text, kept_version(kept), len(text)))


def _append(thread_id: str, encoded: EncodedChanges, token: int | None) -> Query:
    return Query(_APPEND, (thread_id, token, encoded.since, list(encoded.versions),
                           list(encoded.texts), MAX_CHANGES, COMPACT_SHARE))


def _compaction(thread_id: str, rows: list[tuple[Any, ...]]) -> Query | None:
    """The whole state folded from what `_LOAD` read (`rows`), written if its generation
    still holds (the changes appended meanwhile stay, applied after it); None: no changes."""
    if not rows or not rows[0][3]:
        return None
    base, generation, versions, texts = rows[0]
    text = compacted(thread_id, base, texts)
    return Query(_COMPACT, (text, len(text), thread_id, generation, versions[-1]))

