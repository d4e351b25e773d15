"""The connections of `PostgresStore`: a sync pool, an asyncio pool per event loop, the schema
created on first use, and the errors that say what to do; what `postgres.py` and
`postgres_events.py` build on.

Every operation is one statement (`Query`), run the same way by `run` (sync pool) and `arun`
(the running loop's asyncio pool), on autocommit connections: a statement is its transaction.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

try:
    import psycopg
    from psycopg_pool import AsyncConnectionPool, ConnectionPool
except ImportError as exc:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "pyox_agents.stores.postgres needs psycopg 3 with its pool, which is not installed: "
        'pip install "pyox-agents[postgres]"'
    ) from exc

from pyox_agents._errors import PyoxError
from pyox_agents._redact import redact_text, redact_url
from pyox_agents.stores._outages import StoreUnavailable
from pyox_agents.stores._per_loop import Close, PerLoop
from pyox_agents.stores.postgres_schema import REFUSED, SCHEMA_VERSION, TABLES

__all__ = [
    "ChangeRefused",
    "PostgresConnection",
    "Query",
    "SchemaVersionError",
    "outage",
]

_OUTAGE_STATES = ("08", "57P01", "57P02", "57P03", "53100", "25006")
"""SQLSTATEs of an outage: no connection (class 08), the server shutting down or starting up
(57P01-3), a full disk (53100), a read-only server (25006)."""

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,47}")


class SchemaVersionError(PyoxError, RuntimeError):
    """The database holds a newer version of the store's tables than this package writes."""


@dataclass(frozen=True, slots=True)
class Query:
    """One statement and its parameters."""

    sql: str
    params: tuple[Any, ...] = ()


class ChangeRefused(Exception):
    """A function of the schema refused a change (and made none): `outcome` names the check,
    `held` is what the database holds."""

    def __init__(self, outcome: str, held: str) -> None:
        super().__init__(outcome, held)
        self.outcome = outcome
        self.held = held


def check_url(url: str) -> None:
    """Raise ValueError, saying what to write, unless `url` is a PostgreSQL URL psycopg reads."""
    form = "postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
    if not isinstance(url, str) or not url.startswith(("postgresql://", "postgres://")):
        shown = redact_url(url) if isinstance(url, str) else url
        raise ValueError(f"PostgresStore takes a URL of the form {form}, got {shown!r}")
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise ValueError(f"the PostgreSQL URL {redact_url(url)!r} is not valid "
                         f"({redact_text(str(exc))}); write it as {form}") from None


def outage(store: PostgresConnection, exc: BaseException) -> StoreUnavailable | None:
    """The `StoreUnavailable` a psycopg error that escaped `run`/`arun` stands for (a lost
    connection while following an event log), or None."""
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):  # (PoolTimeout too)
        return store.unreachable(exc)
    return None


def channel(schema: str, run_key: str) -> str:
    """The NOTIFY channel of the event log `run_key` (as the schema's functions name it)."""
    return "pyox_" + hashlib.md5(f"{schema}:{run_key}".encode(), usedforsecurity=False).hexdigest()


class PostgresConnection:
    """The pools of one PostgresStore at `url`, its tables in schema `schema`.

    Connects at once (so a wrong URL or an unreachable database fails here, with what to do) and
    creates the schema if missing.

    Raises:
        ValueError: `url` is not a PostgreSQL URL, or `schema` not a plain lower-case name.
        StoreUnavailable: the database cannot be reached or refuses the connection.
        SchemaVersionError: the database holds a newer schema version than this package's.

    Outages are bounded, not retried: a connection not made within `connect_timeout` seconds,
    or no pooled connection free within `pool_timeout`, raises `StoreUnavailable`, as psycopg
    does (it never re-sends a statement on its own). A pooled connection is checked as it is
    taken (psycopg_pool's `check_connection`), so the first request after the server comes
    back is not failed by a connection the restart broke.
    """

    def __init__(self, url: str, *, schema: str = "pyox_agents", pool_size: int = 10,
                 events_ttl: float = 86400.0, done_ttl: float = 3600.0,
                 connect_timeout: float = 5.0, pool_timeout: float = 10.0) -> None:
        check_url(url)
        if not _SCHEMA_NAME.fullmatch(schema):
            raise ValueError(f"schema {schema!r} must be 1 to 48 lower-case letters, digits or "
                             "'_', not starting with a digit")
        self.url = url
        self.schema = schema
        self.events_ttl = events_ttl
        self.done_ttl = done_ttl
        self._pool_size = pool_size
        self.connect_timeout = connect_timeout
        self.pool_timeout = pool_timeout
        self._create_schema()
        self.pool = ConnectionPool(url, min_size=1, max_size=pool_size, open=True,
                                   kwargs=self._connection_kwargs(), name="pyox_agents",
                                   timeout=pool_timeout, check=ConnectionPool.check_connection)
        """The sync pool (psycopg_pool's `ConnectionPool`, autocommit connections)."""
        self._loops = PerLoop(self._loop_pool, "PostgresStore's async methods need a running "
                              "asyncio event loop; call the sync method instead")

    def _where(self) -> str:
        """This store, for an error message: its URL (without secrets) and schema."""
        return f"the PostgresStore at {redact_url(self.url)} (schema {self.schema!r})"

    def sql(self, text: str) -> str:
        """`text` with `{s}` replaced by the schema's name."""
        return text.replace("{s}", self.schema)

    def _connection_kwargs(self) -> dict[str, Any]:
        return {"autocommit": True, "connect_timeout": max(1, round(self.connect_timeout))}

    def unreachable(self, exc: BaseException) -> StoreUnavailable:
        """The error of a database that cannot be reached, saying what to check."""
        return StoreUnavailable(
            f"cannot connect to PostgreSQL at {redact_url(self.url)} "
            f"({redact_text(' '.join(str(exc).split()))}): "
            "check that the server runs and accepts connections there (host, port, user, "
            "password and database in the URL), e.g. with `psql URL`"
        )

    def _create_schema(self) -> None:
        """Create the schema's tables and functions unless this version is there; refuse a
        newer one. Under an advisory lock, so processes starting together do it once."""
        try:
            with psycopg.connect(self.url, **self._connection_kwargs()) as conn:
                self._migrate(conn)
        except psycopg.OperationalError as exc:
            raise self.unreachable(exc) from None

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))",
                         (f"pyox_agents schema {self.schema}",))
            held = self._held_version(conn)
            if held == SCHEMA_VERSION:
                return
            if held is not None and held > SCHEMA_VERSION:
                raise SchemaVersionError(
                    f"the PostgreSQL database at {redact_url(self.url)} holds schema "
                    f"{self.schema!r} at version {held}, newer than version {SCHEMA_VERSION} "
                    'that this pyox-agents writes: upgrade pyox-agents (pip install -U '
                    '"pyox-agents[postgres]") on every process using this database, or give '
                    "this one another schema (PostgresStore(url, schema=...))"
                )
            conn.execute(self.sql(TABLES).encode())
            conn.execute(self.sql("DELETE FROM {s}.schema_version"))
            conn.execute(self.sql("INSERT INTO {s}.schema_version VALUES (%s)"),
                         (SCHEMA_VERSION,))

    def _held_version(self, conn: psycopg.Connection[Any]) -> int | None:
        row = conn.execute("SELECT to_regclass(%s)", (f"{self.schema}.schema_version",)).fetchone()
        if row is None or row[0] is None:
            return None
        found = conn.execute(self.sql("SELECT max(version) FROM {s}.schema_version")).fetchone()
        return int(found[0]) if found and found[0] is not None else None

    # -- running statements ---------------------------------------------------------------------

    def run(self, query: Query) -> list[tuple[Any, ...]]:
        """Run `query` on the sync pool; its rows.

        Raises:
            ChangeRefused: a schema function refused the change.
            StoreUnavailable: the database cannot be reached (or its disk is full).
        """
        try:
            with self.pool.connection() as conn:
                cursor = conn.execute(self.sql(query.sql).encode(), query.params)
                return cursor.fetchall() if cursor.description else []
        except psycopg.Error as exc:
            raise self._translate(exc) from None

    async def arun(self, query: Query) -> list[tuple[Any, ...]]:
        """Same as `run`, on the running loop's asyncio pool."""
        pool = await self._loops.get()
        try:
            async with pool.connection() as conn:
                cursor = await conn.execute(self.sql(query.sql).encode(), query.params)
                return await cursor.fetchall() if cursor.description else []
        except psycopg.Error as exc:
            raise self._translate(exc) from None

    def _translate(self, exc: psycopg.Error) -> BaseException:
        """What a statement's error stands for: a schema function's refusal, an outage (a
        connection lost or refused, or no pooled one free in time: psycopg_pool's
        `PoolTimeout` is an `OperationalError` without SQLSTATE), or itself."""
        if exc.sqlstate == REFUSED:
            return ChangeRefused(exc.diag.message_primary or "", exc.diag.message_detail or "")
        state = exc.sqlstate or ""
        if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError) and (
                not state or state.startswith(_OUTAGE_STATES)):
            return self.unreachable(exc)
        if state.startswith(_OUTAGE_STATES[1:]):
            return self.unreachable(exc)
        return exc

    async def _loop_pool(self) -> tuple[AsyncConnectionPool, list[Close]]:
        """A new asyncio pool for the running loop, open, and how to close it."""
        pool = AsyncConnectionPool(self.url, min_size=1, max_size=self._pool_size, open=False,
                                   kwargs=self._connection_kwargs(), name="pyox_agents-async",
                                   timeout=self.pool_timeout,
                                   check=AsyncConnectionPool.check_connection)
        await pool.open()
        return pool, [pool.close]

    async def listener(self, run_key: str) -> psycopg.AsyncConnection[Any]:
        """A new connection that listens to the NOTIFY channel of event log `run_key` (the
        caller closes it)."""
        try:
            conn = await psycopg.AsyncConnection.connect(
                self.url, application_name="pyox_agents follower", **self._connection_kwargs())
            await conn.execute(f'LISTEN "{channel(self.schema, run_key)}"'.encode())
        except psycopg.OperationalError as exc:
            raise self.unreachable(exc) from None
        return conn

    def close(self) -> None:
        """Close the sync pool and forget the asyncio ones.

        An asyncio pool can be closed only on its own loop: each closes when its loop shuts
        down, or earlier with `aclose` (or `async with`) on that loop.
        """
        self.pool.close()
        self._loops.forget()

    async def aclose(self) -> None:
        """Close the running loop's asyncio pool and the sync pool."""
        await self._loops.aclose()
        self.close()

