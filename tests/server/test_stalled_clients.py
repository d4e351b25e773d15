"""`pyox-agents serve` drops clients that stall: a request head that does not arrive in time
(sent partly, or trickled a byte at a time), the longest-waiting of too many such connections,
and a body that does not arrive in time. Each test starts the command as a process."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.served_apps import asgi_module

ENTRY = [sys.executable, "-c", "from pyox_agents.server.cli import main; main()"]
PARTIAL_HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


@pytest.fixture
def user_module(tmp_path: Path) -> Path:
    (tmp_path / "myagents.py").write_text(textwrap.dedent("""
        from pyox_agents import Agent
        from pyox_agents.models import ScriptedModel

        agent = Agent(model=ScriptedModel(["hi"] * 10), name="helper")
    """))
    (tmp_path / "slowapp.py").write_text(asgi_module(
        """
        import asyncio

        async def answer(path):
            if path == "/healthz":
                return b'{"ok": true}'
            await asyncio.sleep(2)
            return b"late"
        """, 'await answer(scope["path"])', "application/json"))
    return tmp_path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _limit_descriptors(count: int) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))


@contextlib.contextmanager
def serving(cwd: Path, *args: str, descriptors: int | None = None) -> Iterator[int]:
    """`pyox-agents serve *args` on a free port (with at most `descriptors` open files),
    once it answers /healthz; its port."""
    port = _free_port()
    proc = subprocess.Popen(
        [*ENTRY, "serve", *args, "--port", str(port)], cwd=cwd, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ},
        preexec_fn=None if descriptors is None else lambda: _limit_descriptors(descriptors))
    try:
        deadline = time.monotonic() + 20
        while not _healthy(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"the server did not start:\n{proc.communicate()[0]}")
            time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def _healthy(port: int, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz",
                                    timeout=timeout) as response:
            return bool(json.load(response) == {"ok": True})
    except OSError:
        return False


def _stalled(port: int, head: bytes = PARTIAL_HEAD) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(head)
    return sock


def _closed_by_server(sock: socket.socket, within: float) -> bytes | None:
    """What the server sent before it closed `sock`, or None if it is still open after
    `within` seconds."""
    sock.settimeout(within)
    got = b""
    try:
        while chunk := sock.recv(4096):
            got += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return got


def _sends_for(sock: socket.socket, seconds: float) -> bool:
    """Whether a byte every 0.05 s could be sent on `sock` for `seconds` (False: a send
    failed, the server having closed it)."""
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            sock.send(b"x")
            time.sleep(0.05)
    except OSError:
        return False
    return True


def test_stalled_connections_are_closed_after_the_header_timeout(user_module: Path) -> None:
    """300 connections that never finish their head, under a limit of 256 descriptors: once
    the header timeout has passed they are closed, and /healthz answers."""
    with serving(user_module, "myagents:agent", "--header-timeout", "1",
                 "--max-pending-connections", "1000", descriptors=256) as port:
        stalled = [_stalled(port) for _ in range(300)]
        try:
            deadline = time.monotonic() + 15
            while not _healthy(port, timeout=0.5):
                assert time.monotonic() < deadline, "/healthz did not answer"
            for sock in stalled[:20]:
                assert _closed_by_server(sock, within=10) is not None
        finally:
            for sock in stalled:
                sock.close()


def test_over_the_cap_the_longest_waiting_connection_is_closed(user_module: Path) -> None:
    with serving(user_module, "myagents:agent", "--header-timeout", "60",
                 "--max-pending-connections", "10") as port:
        first = [_stalled(port) for _ in range(10)]
        time.sleep(0.3)  # (their order: these waited longest)
        last = [_stalled(port) for _ in range(10)]
        try:
            assert _healthy(port)
            assert all(_closed_by_server(sock, within=5) is not None for sock in first)
            assert all(_closed_by_server(sock, within=0.2) is None for sock in last[1:])
        finally:
            for sock in first + last:
                sock.close()


@pytest.mark.parametrize("http", ["h11", "httptools"])
def test_a_head_that_trickles_in_is_dropped_with_408(user_module: Path, http: str) -> None:
    # (2 s: a loaded machine may stretch the trickle; a byte sent after the server closed
    # would be answered with a reset, which takes the 408 with it)
    with serving(user_module, "myagents:agent", "--header-timeout", "2", "--http", http) as port:
        sock = _stalled(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        for byte in b"X-Slow: 123":  # a byte every 0.05 s, for 0.55 s
            if select.select([sock], [], [], 0)[0]:  # the server answered already
                break
            sock.send(bytes([byte]))
            time.sleep(0.05)
        answer = _closed_by_server(sock, within=5)
        assert answer is not None and answer.startswith(b"HTTP/1.1 408 ")
        assert b"did not arrive within 2 s" in answer
        assert time.monotonic() - started < 4
        sock.close()
        with socket.create_connection(("127.0.0.1", port)) as endless:  # one that never stops
            assert not _sends_for(endless, seconds=5)  # the server closed it: a send failed


def test_the_next_head_on_a_kept_alive_connection_is_guarded_too(user_module: Path) -> None:
    with serving(user_module, "myagents:agent", "--header-timeout", "1") as port:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        sock.settimeout(5)
        first = b""
        while not first.endswith(b'{"ok":true}'):
            first += sock.recv(4096)
        assert first.startswith(b"HTTP/1.1 200 ")
        sock.sendall(PARTIAL_HEAD)  # the next request's head, never finished
        answer = _closed_by_server(sock, within=5)
        assert answer is not None and answer.startswith(b"HTTP/1.1 408 ")
        sock.close()


def test_a_request_slower_than_the_header_timeout_is_answered(user_module: Path) -> None:
    with serving(user_module, "slowapp:app", "--header-timeout", "1") as port, \
            urllib.request.urlopen(f"http://127.0.0.1:{port}/slow", timeout=10) as response:
        assert response.read() == b"late"  # 2 s after its head: not the guard's to drop


def test_a_body_that_trickles_in_is_answered_408(user_module: Path) -> None:
    with serving(user_module, "myagents:agent", "--body-timeout", "0.5") as port:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"POST /agents/helper/ag-ui HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 400\r\n\r\n"
                     b'{"threadId": "t1", ')
        with contextlib.suppress(OSError):
            for _ in range(10):
                sock.send(b" ")
                time.sleep(0.1)
        answer = _closed_by_server(sock, within=5)
        assert answer is not None and answer.startswith(b"HTTP/1.1 408 ")
        assert b"did not arrive within 0.5 s" in answer
        sock.close()
