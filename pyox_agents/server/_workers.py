"""Several worker processes on one port, each with a listening socket of its own.

`uvicorn --workers N` shares one listening socket between its workers, and on asyncio's loop
whichever worker wakes first accepts every connection waiting: a burst can land mostly on one
worker while the others idle (a burst of 500 runs on a RedisStore split its server CPU 3.2 s
to 0.9 s, and 76%, 62% and 79% to the busiest worker in other bursts). Here each worker gets
its own socket on the same port (`SO_REUSEPORT`), and Linux spreads new connections over the
sockets by a hash of their addresses.

The parent only supervises: it binds the sockets (so a port in use is refused before any
worker starts), starts one `pyox-agents` process per socket with the same arguments, restarts
one that dies, and on SIGTERM or SIGINT sends each worker one SIGTERM, so that each drains its
runs within `--grace` (the workers are in a process group of their own: a terminal's Ctrl-C
reaches the parent only, not each worker a second time, which would force it to quit). A
parent that is killed outright takes its workers with it: each asks Linux for a SIGTERM when
its parent dies (`PR_SET_PDEATHSIG`), so none is left holding the port.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from types import FrameType

__all__ = ["LISTEN_FD_OPTION", "PARENT_OPTION", "bind_sockets", "end_with_parent", "supervise"]

LISTEN_FD_OPTION = "--listen-fd"
"""The hidden option that tells a worker which inherited socket to serve."""

PARENT_OPTION = "--parent-pid"
"""The hidden option that tells a worker its parent's pid (to see if it died meanwhile)."""

BACKLOG = 2048
"""Connections the kernel queues per socket before a worker accepts them (uvicorn's default)."""

STARTUP_SECONDS = 5.0
"""A worker that exits with an error status sooner than this after its start failed to start:
the parent stops rather than start it again and again (its error is on stderr, which the
workers share). A worker killed by a signal is started again whenever it dies."""


def bind_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """`count` listening sockets on `host:port`, each with `SO_REUSEPORT` (port 0: one port
    the kernel picks, shared by all).

    Raises:
        OSError: the address cannot be bound (in use, also by another server's workers, or
            not this machine's).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if port:  # a port another server of this user holds with SO_REUSEPORT would be shared:
        with socket.create_server((host, port), family=family):  # a plain bind refuses it
            pass
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.create_server((host, port), family=family, backlog=BACKLOG,
                                        reuse_port=True)
            sockets.append(sock)
            port = sock.getsockname()[1]
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def supervise(argv: Sequence[str], sockets: list[socket.socket], grace: float) -> int:
    """Run one worker per socket (`pyox-agents <argv> --listen-fd FD`) until SIGTERM or
    SIGINT, then stop them; the exit status: 0, or 1 when a worker failed to start."""
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    workers: list[tuple[subprocess.Popen[bytes], float]] = []
    try:
        workers = [_start(argv, sock) for sock in sockets]
        while not stopping:
            time.sleep(0.1)
            for i, (worker, started) in enumerate(workers):
                status = worker.poll()
                if status is None or stopping:
                    continue
                if status > 0 and time.monotonic() - started < STARTUP_SECONDS:
                    print(f"pyox-agents: a worker exited at start-up (status {status}); "
                          "stopping", file=sys.stderr, flush=True)
                    return 1
                print(f"pyox-agents: worker {worker.pid} exited (status {status}); starting "
                      "another", file=sys.stderr, flush=True)
                workers[i] = _start(argv, sockets[i])
        return 0
    finally:
        _stop(workers, grace)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sock in sockets:
            sock.close()


def end_with_parent(parent: int) -> None:
    """In a worker: have Linux send this process SIGTERM when its parent dies, and exit now
    if the parent, pid `parent`, is already gone (it died while this worker started)."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        raise SystemExit("pyox-agents: the worker's parent is gone")


def _start(argv: Sequence[str], sock: socket.socket) -> tuple[subprocess.Popen[bytes], float]:
    fd = sock.fileno()
    command = [sys.executable, "-m", "pyox_agents.server.cli", *argv, LISTEN_FD_OPTION, str(fd),
               PARENT_OPTION, str(os.getpid())]
    return subprocess.Popen(command, pass_fds=[fd], process_group=0), time.monotonic()


def _stop(workers: list[tuple[subprocess.Popen[bytes], float]], grace: float) -> None:
    """One SIGTERM to each worker still running; SIGKILL for any still there after `grace`
    and a few seconds more (its own deadline is `grace`)."""
    for worker, _ in workers:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace + 5
    for worker, _ in workers:
        try:
            worker.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
