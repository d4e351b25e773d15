"""A real `redis-server` for the tests: started once per session on a free port, stopped at the end.

`redis_server` (session fixture) gives its URL. When `redis-server` is not on PATH it is
installed with apt-get (the test machines run as root); when that is impossible the fixture
fails with what to do, rather than skip: the Redis tests are part of the suite.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import pytest

__all__ = ["redis_server", "redis_snapshot", "running_redis_server"]

_INSTALL = "apt-get update && apt-get install -y redis-server"


def _redis_server_path() -> str:
    """The path of `redis-server`, installing it with apt-get if missing."""
    found = shutil.which("redis-server")
    if found:
        return found
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.fail(f"redis-server is not installed and cannot be installed here (needs root and "
                    f"apt-get); install it ({_INSTALL}) and run the tests again", pytrace=False)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update"], ["apt-get", "install", "-y", "redis-server"]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            pytest.fail(f"installing redis-server failed at {' '.join(command)!r} "
                        f"(exit {done.returncode}): {done.stderr.strip()[-2000:]}; install it "
                        f"by hand ({_INSTALL}) and run the tests again", pytrace=False)
    found = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None)
    if not found:
        pytest.fail(f"apt-get installed redis-server but it is not on PATH; check {_INSTALL}",
                    pytrace=False)
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def running_redis_server(timeout: float = 15.0) -> Iterator[str]:
    """Start a throwaway `redis-server` (no persistence) on 127.0.0.1; yield its URL."""
    binary = _redis_server_path()
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="pyox-redis-") as workdir:
        process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", workdir, "--daemonize", "no"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        url = f"redis://127.0.0.1:{port}/0"
        try:
            _wait_for_ping(process, url, timeout)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - a stuck server
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()


def _wait_for_ping(process: subprocess.Popen[str], url: str, timeout: float) -> None:
    import redis  # here, so that a missing redis-py fails the Redis tests only

    deadline = time.monotonic() + timeout
    client = redis.Redis.from_url(url, socket_connect_timeout=1)
    try:
        while True:
            if process.poll() is not None:
                output = process.stdout.read() if process.stdout else ""
                pytest.fail(f"redis-server exited with {process.returncode} before answering "
                            f"PING: {output.strip()[-2000:]}", pytrace=False)
            with contextlib.suppress(redis.ConnectionError):
                if client.ping():
                    return
            if time.monotonic() > deadline:
                pytest.fail(f"redis-server at {url} did not answer PING within {timeout} s",
                            pytrace=False)
            time.sleep(0.05)
    finally:
        client.close()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    """The URL of a real redis-server that lives as long as the test session."""
    with running_redis_server() as url:
        yield url


def redis_snapshot(client: Any, prefix: str) -> dict[str, Any]:
    """Every key under `prefix` in the Redis of `client` (decoding replies) with its value, to
    compare what a refused write left: nothing may differ."""
    held: dict[str, Any] = {}
    for key in sorted(client.scan_iter(match=f"{prefix}*", count=1000)):
        kind = client.type(key)
        if kind == "hash":
            held[key] = client.hgetall(key)
        elif kind == "list":
            held[key] = client.lrange(key, 0, -1)
        elif kind == "zset":
            held[key] = client.zrange(key, 0, -1, withscores=True)
        elif kind == "stream":
            held[key] = client.xrange(key)
        else:
            held[key] = client.get(key)
    return held
