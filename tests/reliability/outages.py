"""Store servers a test can take away and bring back: a real `redis-server` (frozen with
SIGSTOP, thawed with SIGCONT, or killed and started again on its port) and a real PostgreSQL
cluster (stopped with `pg_ctl stop -m immediate` and started again on its data and port)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tests import postgres_server as pg
from tests import redis_server as rs

__all__ = ["PostgresProcess", "RedisProcess", "postgres_process", "redis_process"]


class RedisProcess:
    """One `redis-server` on a port of its own; with `persist`, every write is appended to
    its log (fsync always), so a killed server starts again with all it answered; with
    `password`, it asks for it (`requirepass`), and `url` carries it."""

    def __init__(self, workdir: str, persist: bool = False, password: str | None = None) -> None:
        self.persist = persist
        self.password = password
        self.binary = rs._redis_server_path()
        self.port = rs._free_port()
        self.workdir = workdir
        auth = "" if password is None else f":{password}@"
        self.url = f"redis://{auth}127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        """Start it and wait until it answers PING."""
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes" if self.persist else "no", "--appendfsync", "always",
             "--dir", self.workdir, "--daemonize", "no",
             *(["--requirepass", self.password] if self.password else [])],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        rs._wait_for_ping(self.process, self.url, 15)

    def freeze(self) -> None:
        """SIGSTOP: the port still accepts connections, nothing answers (a stuck server)."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        """SIGCONT: it answers again, starting with what it was sent meanwhile."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        """End the process (SIGKILL after SIGCONT, so a frozen one ends too)."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGCONT)
        self.process.kill()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None


@contextlib.contextmanager
def redis_process(persist: bool = False, password: str | None = None) -> Iterator[RedisProcess]:
    """A started `RedisProcess`, ended with the block."""
    with tempfile.TemporaryDirectory(prefix="pyox-redis-") as workdir:
        server = RedisProcess(workdir, persist, password)
        server.start()
        try:
            yield server
        finally:
            server.stop()


class PostgresProcess:
    """One PostgreSQL cluster in a temporary folder, on a port of its own."""

    def __init__(self, folder: Path) -> None:
        self.binaries = pg._install()
        self.port = pg._free_port()
        self.folder = folder
        self.data = folder / "data"
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.prefix = pg._as_server_user()
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres", "postgres")
        done = subprocess.run(
            [*self.prefix, str(self.binaries / "initdb"), "-D", str(self.data), "-A", "trust",
             "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8"],
            capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        self.log = folder / "server.log"

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        done = subprocess.run(
            [*self.prefix, str(self.binaries / "pg_ctl"), "start", "-w", "-D", str(self.data),
             "-l", str(self.log), "-o",
             f"-k {self.folder} -p {self.port} -c listen_addresses=127.0.0.1 -c fsync=off "
             "-c synchronous_commit=on -c max_connections=100"],
            capture_output=True, text=True, check=False)
        assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]

    def stop(self) -> None:
        """Stop it at once (`-m immediate`: connections are cut, as in a crash)."""
        subprocess.run([*self.prefix, str(self.binaries / "pg_ctl"), "stop", "-w", "-D",
                        str(self.data), "-m", "immediate"], capture_output=True, check=False)


@contextlib.contextmanager
def postgres_process() -> Iterator[PostgresProcess]:
    """A started `PostgresProcess`, stopped (and its folder removed) with the block."""
    folder = Path(tempfile.mkdtemp(prefix="pyox-postgres-"))
    try:
        server = PostgresProcess(folder)
        server.start()
        try:
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
