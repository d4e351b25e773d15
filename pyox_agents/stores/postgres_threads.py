"""Threads as their owners' resource in PostgreSQL: an owner's threads page by page (newest
change first), a thread's title and archive flag, the checkpoints a server records of each run,
and erasing a thread with everything kept of it, in one transaction."""

from __future__ import annotations

from collections.abc import Sequence

from pyox_agents.stores._encoding import missing_thread
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
from pyox_agents.stores._records import Checkpoint, ThreadInfo
from pyox_agents.stores.postgres_connection import PostgresConnection, Query

__all__ = ["ThreadRecords"]

_ORDER = "coalesce(updated_at, '') COLLATE \"C\""
_OWNED = (
    "SELECT {info}, CASE WHEN t.title IS NULL THEN ARRAY(SELECT e.body FROM {s}.entries e"
    " WHERE e.thread_id = t.id AND e.seq < %s ORDER BY e.seq) END FROM {s}.threads t"
    " WHERE {owner} AND parent_id IS NULL{archived}{after}"
    " ORDER BY {order} DESC, id COLLATE \"C\" DESC LIMIT %s"
)
_UPDATE = (
    "UPDATE {s}.threads SET title = CASE WHEN %s::boolean THEN nullif(%s, '') ELSE title END,"
    " archived = coalesce(%s::boolean, archived) WHERE id = %s RETURNING 1"
)
_WRITE_CHECKPOINT = (
    "WITH c AS (INSERT INTO {s}.checkpoints (thread_id, run_id, head, state)"
    " VALUES (%s, %s, %s, %s) ON CONFLICT (thread_id, run_id)"
    " DO UPDATE SET head = excluded.head, state = excluded.state)"
    " UPDATE {s}.threads SET run_status = coalesce(%s, run_status) WHERE id = %s"
)
_CHECKPOINTS = ("SELECT run_id, head, {state} FROM {s}.checkpoints WHERE thread_id = %s"
                "{runs} ORDER BY seq")
_ERASE = (
    "WITH e AS (DELETE FROM {s}.entries WHERE thread_id = ANY(%s::text[])),"
    " k AS (DELETE FROM {s}.kept_states WHERE thread_id = ANY(%s::text[])),"
    " n AS (DELETE FROM {s}.kept_changes WHERE thread_id = ANY(%s::text[])),"
    " c AS (DELETE FROM {s}.checkpoints WHERE thread_id = ANY(%s::text[])),"
    " r AS (DELETE FROM {s}.runs WHERE run_id = ANY(%s::text[])),"
    " a AS (DELETE FROM {s}.audit WHERE run_id = ANY(%s::text[])),"
    " l AS (DELETE FROM {s}.event_logs WHERE run_key = ANY(%s::text[])),"
    " x AS (DELETE FROM {s}.active_runs WHERE thread_id = ANY(%s::text[]))"
    " DELETE FROM {s}.threads WHERE id = ANY(%s::text[])"
)


class ThreadRecords(PostgresConnection):
    """The owners' threads, titles, checkpoints and erasing of a PostgresStore."""

    def list_owned(self, owner: str | None, *, archived: bool | None = False, limit: int = 50,
                   after: tuple[str, str] | None = None) -> list[ThreadInfo]:
        """`owner`'s threads, newest change first (see `Store.list_owned`)."""
        check_limit(limit)
        flag = () if archived is None else (archived,)  # None: both
        sql = _OWNED.format(
            info=", ".join(f"t.{column}" for column in INFO_COLUMNS.split(", ")), s="{s}",
            owner="t.owner IS NULL" if owner is None else "t.owner = %s", order=_ORDER,
            archived=" AND archived = %s" if flag else "",
            after="" if after is None else f" AND ({_ORDER}, id COLLATE \"C\") < (%s, %s)")
        params = (OPENING_ENTRIES, *(() if owner is None else (owner,)), *flag,
                  *(after or ()), limit)
        return [titled(info_of_row(row), row[9] or ()) for row in self.run(Query(sql, params))]

    def update_thread(self, thread_id: str, *, title: str | None = None,
                      archived: bool | None = None) -> None:
        """Give the thread a title and/or archive it; LookupError if there is none."""
        title = check_title(title) if title is not None else None
        if not self.run(Query(_UPDATE, (title is not None, title or "", archived, thread_id))):
            raise missing_thread(thread_id, self._where())

    def _checkpoint(self, thread_id: str, checkpoint: Checkpoint) -> Query:
        encoded = encode_checkpoint(thread_id, checkpoint)
        return Query(_WRITE_CHECKPOINT, (thread_id, encoded.run_id, encoded.head, encoded.state,
                                         encoded.status, thread_id))

    def write_checkpoint(self, thread_id: str, checkpoint: Checkpoint) -> None:
        """Keep what the server recorded of a run of the thread when it ended."""
        self.run(self._checkpoint(thread_id, checkpoint))

    async def awrite_checkpoint(self, thread_id: str, checkpoint: Checkpoint) -> None:
        """Same as `write_checkpoint`, on the asyncio pool (a server writes it as a run ends)."""
        await self.arun(self._checkpoint(thread_id, checkpoint))

    def _checkpoints(self, thread_id: str, run_ids: Sequence[str] | None, states: bool) -> Query:
        sql = _CHECKPOINTS.format(state="state" if states else "NULL", s="{s}",
                                  runs="" if run_ids is None else " AND run_id = ANY(%s::text[])")
        return Query(sql, (thread_id, *(() if run_ids is None else (list(run_ids),))))

    def load_checkpoints(self, thread_id: str, run_ids: Sequence[str] | None = None, *,
                         states: bool = False) -> list[Checkpoint]:
        """The thread's checkpoints, in the order their runs were first recorded."""
        rows = self.run(self._checkpoints(thread_id, run_ids, states))
        return [decode_checkpoint(run_id, head, state) for run_id, head, state in rows]

    async def aload_checkpoints(self, thread_id: str, run_ids: Sequence[str] | None = None, *,
                                states: bool = False) -> list[Checkpoint]:
        """Same as `load_checkpoints`, on the asyncio pool."""
        rows = await self.arun(self._checkpoints(thread_id, run_ids, states))
        return [decode_checkpoint(run_id, head, state) for run_id, head, state in rows]

    def erase_records(self, thread_ids: Sequence[str], run_ids: Sequence[str],
                      event_logs: Sequence[str] = ()) -> None:
        """Remove the threads, runs and event logs in one statement (one transaction)."""
        threads, runs = list(thread_ids), list(run_ids)
        self.run(Query(_ERASE, (threads, threads, threads, threads, runs, runs, list(event_logs),
                                threads, threads)))
