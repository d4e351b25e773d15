"""Each run's event log, and each thread's active run, in PostgreSQL: what lets any server process
replay, then follow, a run that another process executes.

The log of run `run_key` is a row of `event_logs` (its last event id, whether it is done, when
it expires) and its events' rows in `events`, with ids 1, 2, ... It expires `events_ttl` seconds
after its latest append, and `done_ttl` seconds after `amark_done`. Every append and `amark_done`
sends a NOTIFY on the log's own channel when it commits: `follow_events` waits on that (LISTEN),
not on a timer. `active_runs` holds each thread's active run key, with an expiry its process
keeps extending.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from pyox_agents.stores._encoding import milliseconds
from pyox_agents.stores._shared import check_events, check_keep, log_done
from pyox_agents.stores.postgres_connection import ChangeRefused, PostgresConnection, Query

__all__ = ["RunEventLog"]

_LIVE = "l.expires_at > clock_timestamp()"
_READ = ("SELECT e.id, e.body FROM {s}.events e JOIN {s}.event_logs l ON l.run_key = e.run_key"
         f" WHERE e.run_key = %s AND e.id > %s AND {_LIVE} ORDER BY e.id")
_FOLLOW = ("SELECT e.id, e.body, l.done FROM {s}.event_logs l LEFT JOIN {s}.events e"
           f" ON e.run_key = l.run_key AND e.id > %s WHERE l.run_key = %s AND {_LIVE}"
           " ORDER BY e.id")
_TRIM = ("DELETE FROM {s}.events WHERE run_key = %s"
         " AND id <= (SELECT last_id FROM {s}.event_logs WHERE run_key = %s) - %s")
_IS_DONE = f"SELECT l.done FROM {{s}}.event_logs l WHERE l.run_key = %s AND {_LIVE}"
_LAST_ID = f"SELECT l.last_id FROM {{s}}.event_logs l WHERE l.run_key = %s AND {_LIVE}"
_SET_ACTIVE = (
    "INSERT INTO {s}.active_runs (thread_id, run_key, expires_at)"
    " VALUES (%s, %s, clock_timestamp() + %s * interval '1 millisecond')"
    " ON CONFLICT (thread_id) DO UPDATE SET run_key = excluded.run_key,"
    " expires_at = excluded.expires_at"
)
_GET_ACTIVE = ("SELECT run_key FROM {s}.active_runs WHERE thread_id = %s"
               " AND expires_at > clock_timestamp()")
_CLEAR_ACTIVE = ("DELETE FROM {s}.active_runs WHERE thread_id = %s AND run_key = %s"
                 " AND expires_at > clock_timestamp() RETURNING 1")


def _after(after_id: str) -> int:
    """The event id `after_id` names ("0", "0-0" or "-": before the first)."""
    if after_id in ("0", "0-0", "-"):
        return 0
    try:
        return int(after_id)
    except ValueError:
        raise ValueError(f"event id {after_id!r} is not one PostgresStore gave: pass an id from "
                         "read_events/follow_events, or '0' for the first event") from None


class RunEventLog(PostgresConnection):
    """The run event logs and active-run records of a PostgresStore (which is one of these)."""

    async def aappend_events(self, run_key: str, events_json: Sequence[str],
                             keep: int | None = None) -> list[str]:
        """Add events (JSON texts, in order) to the log of run `run_key`; their ids. With
        `keep`, the log keeps only its latest `keep` events (the older are deleted after).

        Raises:
            ValueError: the run was marked done, or `keep` is not a positive int.
        """
        check_keep(keep)
        check_events(events_json, "aappend_events")
        append = Query("SELECT {s}.append_events(%s, %s, %s::text[])",
                       (run_key, milliseconds(self.events_ttl, "events_ttl"), list(events_json)))
        try:
            ids = [str(id) for (id,) in await self.arun(append)]
        except ChangeRefused:
            raise log_done(run_key) from None
        if keep is not None:
            await self.arun(Query(_TRIM, (run_key, run_key, keep)))
        return ids

    async def aread_events(self, run_key: str, after_id: str = "0") -> list[tuple[str, str]]:
        """The events of run `run_key` after id `after_id` ("0": all), as (id, JSON)."""
        rows = await self.arun(Query(_READ, (run_key, _after(after_id))))
        return [(str(id), str(body)) for id, body in rows]

    async def alast_event_id(self, run_key: str) -> str:
        """The id of the latest event of run `run_key`'s log ("0" when it has none): follow
        from it to get only the events appended from now on."""
        rows = await self.arun(Query(_LAST_ID, (run_key,)))
        return str(rows[0][0]) if rows else "0"

    async def follow_events(self, run_key: str, after_id: str = "0",
                            block_ms: int = 5000) -> AsyncIterator[tuple[str, str]]:
        """The events of run `run_key` after `after_id`, those logged then those to come, until
        the run is marked done (or its log, once seen, expires).

        Listens on the log's NOTIFY channel on a connection of its own, before the first read,
        so no append is missed: it reads again when an append or `amark_done` commits, and
        otherwise only every `block_ms` (to notice that the log expired).
        """
        conn = await self.listener(run_key)
        try:
            last = _after(after_id)
            seen = False
            while True:
                cursor = await conn.execute(self.sql(_FOLLOW).encode(), (last, run_key))
                rows: list[Any] = await cursor.fetchall()
                if seen and not rows:
                    return  # the log expired
                seen = seen or bool(rows)
                for id, body, _ in rows:
                    if id is not None:
                        last = int(id)
                        yield str(id), str(body)
                if rows and rows[0][2]:
                    return
                async for _ in conn.notifies(timeout=block_ms / 1000, stop_after=1):
                    pass
        finally:
            await conn.close()

    async def amark_done(self, run_key: str, ttl: float | None = None) -> None:
        """End the event log of run `run_key`: followers stop, and it expires `ttl` seconds
        later (`done_ttl` by default). Marking it again only sets its expiry again."""
        await self.arun(Query("SELECT {s}.mark_done(%s, %s)", (
            run_key, milliseconds(self.done_ttl if ttl is None else ttl, "ttl"))))

    async def ais_done(self, run_key: str) -> bool:
        """Whether run `run_key` was marked done (False once its log expired)."""
        return any(done for (done,) in await self.arun(Query(_IS_DONE, (run_key,))))

    # -- the active run of a thread -------------------------------------------------------------

    async def aset_active(self, thread_id: str, run_key: str, ttl: float) -> None:
        """Record `run_key` as the run active on `thread_id`, for `ttl` seconds (set it again
        to extend it)."""
        await self.arun(Query(_SET_ACTIVE, (thread_id, run_key, milliseconds(ttl, "ttl"))))

    async def aget_active(self, thread_id: str) -> str | None:
        """The run key of the run active on `thread_id`, or None."""
        rows = await self.arun(Query(_GET_ACTIVE, (thread_id,)))
        return str(rows[0][0]) if rows else None

    async def aclear_active(self, thread_id: str, run_key: str) -> bool:
        """Forget the active run of `thread_id` if it is still `run_key` (a later run's record
        stays); whether it was."""
        return bool(await self.arun(Query(_CLEAR_ACTIVE, (thread_id, run_key))))
