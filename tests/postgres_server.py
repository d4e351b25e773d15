"""A real PostgreSQL for the tests: a throwaway cluster in a temporary folder, started once per
session on a free port, stopped (and its folder removed) at the end.

`postgres_server` (session fixture) gives its URL. The binaries are Debian's
(/usr/lib/postgresql/*/bin) or on PATH; when none is there they are installed with apt-get
(.ci/run does so too). As root, `initdb` and `postgres` run as the `postgres` user, as
PostgreSQL requires. The tests skip, saying why, only when no `postgres` binary can be had.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "drop_schema",
    "expires_in_ms",
    "fresh_schema",
    "postgres_server",
    "postgres_snapshot",
    "running_postgres_server",
]

_INSTALL = "apt-get update && apt-get install -y postgresql"


def _bin_dir() -> Path | None:
    """The folder of `initdb` and `postgres`: Debian's newest, or the one on PATH."""
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"),
                      key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if versions:
        return Path(versions[-1]).parent
    found = shutil.which("postgres")
    if found and shutil.which("initdb"):
        return Path(found).parent
    return None


def _install() -> Path:
    """The binaries' folder, installing Debian's `postgresql` if none is there; skip if that
    is impossible."""
    found = _bin_dir()
    if found is not None:
        return found
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.skip(f"no PostgreSQL server binary (postgres, initdb) here, and it cannot be "
                    f"installed without root and apt-get: {_INSTALL}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update"], ["apt-get", "install", "-y", "postgresql"]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            pytest.skip(f"no PostgreSQL server binary, and installing it failed at "
                        f"{' '.join(command)!r} (exit {done.returncode}): "
                        f"{done.stderr.strip()[-500:]}; install it ({_INSTALL})")
    found = _bin_dir()
    if found is None:
        pytest.skip(f"apt-get installed postgresql but no postgres binary was found; {_INSTALL}")
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_server_user() -> list[str]:
    """The command prefix that runs a PostgreSQL binary: as `postgres` when we are root."""
    if os.geteuid() != 0:
        return []
    runner = shutil.which("runuser")
    if runner is None:
        pytest.fail("the tests run as root, so PostgreSQL must run as the postgres user, but "
                    "runuser (util-linux) is missing: apt-get install -y util-linux",
                    pytrace=False)
    return [runner, "-u", "postgres", "--"]


@contextlib.contextmanager
def running_postgres_server(timeout: float = 30.0) -> Iterator[str]:
    """Start a throwaway PostgreSQL cluster (no fsync) on 127.0.0.1; yield its URL."""
    binaries = _install()
    port = _free_port()
    folder = Path(tempfile.mkdtemp(prefix="pyox-postgres-"))
    data = folder / "data"
    try:
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres", "postgres")
        prefix = _as_server_user()
        done = subprocess.run(
            [*prefix, str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
             "-E", "UTF8", "--locale=C.UTF-8"],
            capture_output=True, text=True, check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"initdb failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}",
                        pytrace=False)
        log = (folder / "server.log").open("wb")
        process = subprocess.Popen(
            [*prefix, str(binaries / "postgres"), "-D", str(data), "-k", str(folder),
             "-p", str(port), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
             "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
             "-c", "max_connections=200"],
            stdout=log, stderr=subprocess.STDOUT,
        )
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        try:
            _wait_for_connection(process, url, folder / "server.log", timeout)
            yield url
        finally:
            subprocess.run([*prefix, str(binaries / "pg_ctl"), "stop", "-D", str(data), "-m",
                            "immediate"], capture_output=True, check=False)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:  # pragma: no cover - a stuck server
                process.kill()
                process.wait()
            log.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _wait_for_connection(process: subprocess.Popen[bytes], url: str, log: Path,
                         timeout: float) -> None:
    import psycopg  # here, so that a missing psycopg fails the PostgreSQL tests only

    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            pytest.fail(f"postgres exited with {process.returncode} before accepting "
                        f"connections: {log.read_text(errors='replace')[-2000:]}", pytrace=False)
        with contextlib.suppress(psycopg.OperationalError):
            psycopg.connect(url, connect_timeout=1).close()
            return
        if time.monotonic() > deadline:
            pytest.fail(f"postgres at {url} did not accept connections within {timeout} s: "
                        f"{log.read_text(errors='replace')[-2000:]}", pytrace=False)
        time.sleep(0.1)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a real PostgreSQL that lives as long as the test session."""
    with running_postgres_server() as url:
        yield url


def fresh_schema() -> str:
    """A schema name no other test uses (so tests on one database never meet)."""
    return f"t_{uuid.uuid4().hex[:12]}"


def drop_schema(url: str, schema: str) -> None:
    """Drop `schema` and everything in it."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'.encode())


def postgres_snapshot(url: str, schema: str) -> dict[str, Any]:
    """Every row of every table of `schema` (sorted), to compare what a refused write left:
    nothing may differ."""
    import psycopg

    held: dict[str, Any] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        tables = conn.execute("SELECT table_name FROM information_schema.tables WHERE "
                              "table_schema = %s ORDER BY table_name", (schema,)).fetchall()
        for (table,) in tables:
            rows = conn.execute(f'SELECT * FROM "{schema}"."{table}"'.encode()).fetchall()
            held[table] = sorted(rows, key=repr)
    return held


def expires_in_ms(url: str, schema: str, table: str, column: str, key: str) -> float | None:
    """Milliseconds until the row of `table` whose `column` is `key` expires (None: no row)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            f'SELECT extract(epoch FROM expires_at - clock_timestamp()) * 1000 FROM "{schema}".'
            f'"{table}" WHERE "{column}" = %s'.encode(), (key,)).fetchone()
    return float(row[0]) if row else None
