"""`PostgresStore`: threads, runs and audit records in PostgreSQL, shared by several server
processes.

Each `write` is one call of the schema's `write_step` function, so one transaction: it checks
the thread's lease token (for `write_fenced`), the thread's entry count and the run's audit
count, then appends the entries and audit records as rows keyed by (thread, seq) and (run, seq)
and upserts the run's record: all of the step or none of it, at the same cost at entry 10 and
at entry 10,000. Beyond what every store keeps, it holds what several processes serving one set
of threads need, as `RedisStore` does: a per-thread lease with a fencing token, and each run's
event log, which followers on any process are woken for by NOTIFY (see `postgres_events.py`).

The tables live in one schema (`pyox_agents` by default), created on first use with its
version; see `postgres_schema.py`. Needs psycopg 3 (`pip install "pyox-agents[postgres]"`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from pyox_agents.stores._encoding import (
    EncodedRecord,
    encode,
    milliseconds,
    missing_run,
    missing_thread,
    run_record,
    step_refusal,
)
from pyox_agents.stores._outages import reports_outages
from pyox_agents.stores._owned import INFO_COLUMNS, info_of_row
from pyox_agents.stores.base import LoadedThread, StepRecord, Store, StoreConflict, ThreadInfo
from pyox_agents.stores.postgres_connection import (
    ChangeRefused,
    Query,
    SchemaVersionError,
    outage,
)
from pyox_agents.stores.postgres_events import RunEventLog
from pyox_agents.stores.postgres_kept import KeptStates
from pyox_agents.stores.postgres_threads import ThreadRecords

__all__ = ["PostgresStore", "SchemaVersionError"]

_WRITE_STEP = (
    "SELECT {s}.write_step(%s, %s, %s::text[], %s, %s, %s, %s, %s, %s::bigint, %s, %s,"
    " %s::bigint, %s::text[], %s, %s::bigint)"
)
_LOAD_THREAD = (
    "SELECT t.shared_state, t.shared_version, t.owner, ARRAY(SELECT e.body FROM {s}.entries e"
    " WHERE e.thread_id = t.id ORDER BY e.seq) FROM {s}.threads t WHERE t.id = %s"
)
_ENTRY_COUNT = "SELECT entries FROM {s}.threads WHERE id = %s"
_OWNER = "SELECT owner FROM {s}.threads WHERE id = %s"
_LAST_ENTRY = "SELECT body FROM {s}.entries WHERE thread_id = %s ORDER BY seq DESC LIMIT 1"
_DELETE = (
    "WITH e AS (DELETE FROM {s}.entries WHERE thread_id = %s),"
    " k AS (DELETE FROM {s}.kept_states WHERE thread_id = %s),"
    " n AS (DELETE FROM {s}.kept_changes WHERE thread_id = %s),"
    " c AS (DELETE FROM {s}.checkpoints WHERE thread_id = %s)"
    " DELETE FROM {s}.threads WHERE id = %s"
)
_LIST = f"SELECT {INFO_COLUMNS} FROM {{s}}.threads ORDER BY first_saved"
_RUN_THREAD = "SELECT thread_id FROM {s}.runs WHERE run_id = %s"
_RUN_BODY = "SELECT body FROM {s}.runs WHERE run_id = %s"
_AUDIT = "SELECT body FROM {s}.audit WHERE run_id = %s ORDER BY seq"
_ACQUIRE = (
    "INSERT INTO {s}.leases AS l (thread_id, owner, token, expires_at)"
    " VALUES (%s, %s, nextval('{s}.lease_tokens'),"
    " clock_timestamp() + %s * interval '1 millisecond')"
    " ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner, token = excluded.token,"
    " expires_at = excluded.expires_at"
    " WHERE l.owner = excluded.owner OR l.expires_at <= clock_timestamp()"
    " RETURNING l.token"
)
_RENEW = (
    "UPDATE {s}.leases SET expires_at = clock_timestamp() + %s * interval '1 millisecond'"
    " WHERE thread_id = %s AND owner = %s AND token = %s AND expires_at > clock_timestamp()"
    " RETURNING 1"
)
_RELEASE = (
    "DELETE FROM {s}.leases WHERE thread_id = %s AND owner = %s AND token = %s"
    " AND expires_at > clock_timestamp() RETURNING 1"
)
_HOLDER = (
    "SELECT owner, token FROM {s}.leases WHERE thread_id = %s"
    " AND expires_at > clock_timestamp()"
)


@reports_outages(outage)
class PostgresStore(ThreadRecords, RunEventLog, KeptStates, Store):
    """A store in the PostgreSQL database at `url` (`postgresql://USER@HOST:PORT/DATABASE`),
    its tables in schema `schema` (created on first use).

    Sync methods use a psycopg_pool `ConnectionPool` of up to `pool_size` connections;
    `awrite`, `aload_thread`, `aload_run_record`, the kept-state and checkpoint methods and the
    lease, event and active-run methods have real asyncio twins on an `AsyncConnectionPool` of
    the running event loop (the other async twins run the sync method in a worker thread). An
    event log expires `events_ttl` seconds after its latest append, and `done_ttl` seconds
    after `amark_done`. A connection not made within `connect_timeout` seconds, or no pooled
    connection free within `pool_timeout`, raises `StoreUnavailable` (not retried: see
    `PostgresConnection`).

    Raises:
        ValueError: `url` is not a PostgreSQL URL (the message gives the form).
        StoreUnavailable: the database cannot be reached (a `ConnectionError`; the message
            says what to check).
        SchemaVersionError: the database holds a newer version of the schema.
    """

    async def __aenter__(self) -> PostgresStore:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.aclose()

    # -- writes ---------------------------------------------------------------------------------

    def write(self, record: StepRecord) -> None:
        """Apply `record` in one transaction, or raise and change nothing."""
        self._write(record, None)

    async def awrite(self, record: StepRecord) -> None:
        """Same as `write`, on the asyncio pool."""
        await self._awrite(record, None)

    def write_fenced(self, record: StepRecord, thread_id: str, token: int) -> None:
        """Same as `write`, if `token` is the current lease token of `thread_id`.

        `thread_id` is the thread whose lease the writer holds: `record.thread_id`, or the
        thread of the run a subagent's thread belongs to.

        Raises:
            StoreConflict: the lease expired or another owner took it since (and everything
                `write` refuses); nothing was written.
        """
        self._write(record, (thread_id, token))

    async def awrite_fenced(self, record: StepRecord, thread_id: str, token: int) -> None:
        """Same as `write_fenced`, on the asyncio pool."""
        await self._awrite(record, (thread_id, token))

    def _write(self, record: StepRecord, fence: tuple[str, int] | None) -> None:
        encoded = encode(record)  # fails before the database is touched if it is not JSON
        try:
            self.run(_step(encoded, fence))
        except ChangeRefused as refused:
            raise _conflict(encoded, fence, refused) from None

    async def _awrite(self, record: StepRecord, fence: tuple[str, int] | None) -> None:
        encoded = encode(record)
        try:
            await self.arun(_step(encoded, fence))
        except ChangeRefused as refused:
            raise _conflict(encoded, fence, refused) from None

    # -- reads ----------------------------------------------------------------------------------

    def _loaded(self, thread_id: str, rows: list[Any]) -> LoadedThread:
        if not rows:
            raise missing_thread(thread_id, self._where())
        shared, version, owner, bodies = rows[0]
        return LoadedThread.from_texts(thread_id, bodies, shared, version, owner)

    def load_thread(self, thread_id: str) -> LoadedThread:
        """The saved entries of `thread_id` and its shared state; LookupError if there is none."""
        return self._loaded(thread_id, self.run(Query(_LOAD_THREAD, (thread_id,))))

    async def aload_thread(self, thread_id: str) -> LoadedThread:
        """Same as `load_thread`, on the asyncio pool."""
        return self._loaded(thread_id, await self.arun(Query(_LOAD_THREAD, (thread_id,))))

    def entry_count(self, thread_id: str) -> int:
        """How many entries `thread_id` has saved."""
        rows = self.run(Query(_ENTRY_COUNT, (thread_id,)))
        return int(rows[0][0]) if rows else 0

    async def aentry_count(self, thread_id: str) -> int:
        """Same as `entry_count`, on the asyncio pool."""
        rows = await self.arun(Query(_ENTRY_COUNT, (thread_id,)))
        return int(rows[0][0]) if rows else 0

    def thread_owner(self, thread_id: str) -> str | None:
        """The principal `thread_id` was first saved for; LookupError if there is none."""
        return self._owner(thread_id, self.run(Query(_OWNER, (thread_id,))))

    async def athread_owner(self, thread_id: str) -> str | None:
        """Same as `thread_owner`, on the asyncio pool."""
        return self._owner(thread_id, await self.arun(Query(_OWNER, (thread_id,))))

    def _owner(self, thread_id: str, rows: list[Any]) -> str | None:
        if not rows:
            raise missing_thread(thread_id, self._where())
        owner: str | None = rows[0][0]
        return owner

    def last_entry(self, thread_id: str) -> Mapping[str, Any] | None:
        """The last saved entry of `thread_id`, or None."""
        rows = self.run(Query(_LAST_ENTRY, (thread_id,)))
        return json.loads(rows[0][0]) if rows else None

    def delete(self, thread_id: str) -> None:
        """Forget the thread; its runs, audit records, lease and event logs stay."""
        self.run(Query(_DELETE, (thread_id,) * 5))

    def list_threads(self) -> list[ThreadInfo]:
        """Every thread, in the order they were first saved."""
        return [info_of_row(row) for row in self.run(Query(_LIST))]

    def run_thread(self, run_id: str) -> str:
        """The thread run `run_id` belongs to; LookupError if there is no such run."""
        rows = self.run(Query(_RUN_THREAD, (run_id,)))
        if not rows:
            raise missing_run(run_id, self._where())
        return str(rows[0][0])

    def load_run_record(self, run_id: str) -> Mapping[str, Any]:
        """The saved record of `run_id` (JSON); LookupError if there is none."""
        return self._run_record(run_id, self.run(Query(_RUN_BODY, (run_id,))))

    async def aload_run_record(self, run_id: str) -> Mapping[str, Any]:
        """Same as `load_run_record`, on the asyncio pool."""
        return self._run_record(run_id, await self.arun(Query(_RUN_BODY, (run_id,))))

    def _run_record(self, run_id: str, rows: list[Any]) -> Mapping[str, Any]:
        return run_record(run_id, rows[0][0] if rows else None, self._where())

    def load_audit(self, run_id: str) -> list[Mapping[str, Any]]:
        """The audit records of `run_id`, in order of seq."""
        return [json.loads(body) for (body,) in self.run(Query(_AUDIT, (run_id,)))]

    # -- leases ---------------------------------------------------------------------------------

    async def aacquire_lease(self, thread_id: str, owner: str, ttl: float) -> int | None:
        """Take the lease of `thread_id` for `ttl` seconds; its fencing token, or None if
        another owner holds it.

        Every acquisition gets a token greater than any given before, also when `owner`
        already held the lease (its older token is then stale). A holder that dies loses the
        lease `ttl` seconds after it last took or renewed it (by the database's clock).
        """
        rows = await self.arun(Query(_ACQUIRE, (thread_id, owner, milliseconds(ttl, "ttl"))))
        return int(rows[0][0]) if rows else None

    async def arenew_lease(self, thread_id: str, owner: str, token: int, ttl: float) -> bool:
        """Keep the lease `ttl` more seconds; False if `owner` with `token` no longer holds it."""
        return bool(await self.arun(Query(_RENEW, (milliseconds(ttl, "ttl"), thread_id, owner,
                                                    token))))

    async def arelease_lease(self, thread_id: str, owner: str, token: int) -> bool:
        """Give the lease up; False (and nothing changes) if `owner` with `token` does not hold
        it any more."""
        return bool(await self.arun(Query(_RELEASE, (thread_id, owner, token))))

    def lease_holder(self, thread_id: str) -> tuple[str, int] | None:
        """The owner and token of the lease of `thread_id`, or None if nobody holds it."""
        rows = self.run(Query(_HOLDER, (thread_id,)))
        return (str(rows[0][0]), int(rows[0][1])) if rows else None


def _step(encoded: EncodedRecord, fence: tuple[str, int] | None) -> Query:
    record = encoded.record
    return Query(_WRITE_STEP, (
        record.thread_id, record.first_seq, list(encoded.entries), record.parent_id,
        record.owner, encoded.created_at, encoded.updated_at, encoded.shared_state,
        record.shared_version, encoded.run_id, encoded.run,
        encoded.audit[0][0] if encoded.audit else None,
        [text for _, text in encoded.audit],
        fence[0] if fence else None, fence[1] if fence else None,
    ))


def _conflict(encoded: EncodedRecord, fence: tuple[str, int] | None,
              refused: ChangeRefused) -> StoreConflict:
    """The StoreConflict a refusal of `write_step` stands for (it changed nothing)."""
    return step_refusal(encoded, fence, refused.outcome, refused.held) or StoreConflict(
        f"the database refused the step of thread {encoded.record.thread_id!r} "
        f"({refused.outcome}: {refused.held})")
