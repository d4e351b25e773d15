"""`pyox-agents serve --workers N`: N processes on one port, each with a socket of its own.

Real processes on 127.0.0.1: the connections spread over the workers, a worker that dies is
replaced and no connection that came meanwhile is lost, SIGTERM stops them all, and the
workers share threads through a real redis-server.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name
from tests.server.served_apps import asgi_module

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="--workers needs Linux's SO_REUSEPORT")

ENTRY = [sys.executable, "-c", "from pyox_agents.server.cli import main; main()"]

PID_APP = asgi_module(
    """
    import os
    import sys

    if "--listen-fd" in sys.argv and os.environ.get("FAIL_IN_WORKER"):
        raise SystemExit("this worker cannot start")
    """, "str(os.getpid()).encode()")

AGENT_MODULE = textwrap.dedent("""
    from pyox_agents import Agent, RunContext, tool
    from pyox_agents.models import ScriptedModel, ToolCall

    @tool
    def add(ctx: RunContext, item: str) -> str:
        \"\"\"Add `item` to the list.\"\"\"
        ctx.state["items"].append(item)
        return "added"

    agent = Agent(model=ScriptedModel([ToolCall("add", {"item": "milk"}), "done"]),
                  tools=[add], name="shop")
""")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _text(url: str, timeout: float = 10) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return str(response.read().decode())


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "pidapp.py").write_text(PID_APP)
    (tmp_path / "shop.py").write_text(AGENT_MODULE)
    return tmp_path


def _start(folder: Path, args: list[str], env: dict[str, str] | None = None
           ) -> tuple[subprocess.Popen[str], str]:
    port = _free_port()
    proc = subprocess.Popen([*ENTRY, "serve", *args, "--port", str(port)], cwd=folder,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ, **(env or {})})
    return proc, f"http://127.0.0.1:{port}"


def _wait_ready(proc: subprocess.Popen[str], url: str, path: str = "/") -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            _text(url + path, timeout=1)
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"the server did not answer within 30 s:\n{proc.communicate()[0]}")
            time.sleep(0.1)


def _workers(proc: subprocess.Popen[str]) -> set[int]:
    """The pids of `proc`'s child processes (its workers)."""
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    return {int(pid) for pid in children}


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited


@pytest.fixture
def served(folder: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    proc, url = _start(folder, ["pidapp:app", "--workers", "2"])
    workers: set[int] = set()
    try:
        _wait_ready(proc, url)
        workers = _workers(proc)
        yield proc, url
    finally:
        if proc.poll() is None:
            workers |= _workers(proc)
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        for pid in workers:  # none should be left; never leave one holding the pipe
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        proc.communicate()


def test_connections_spread_over_the_workers(
        served: tuple[subprocess.Popen[str], str]) -> None:
    """Rule: each worker listens on a socket of its own, so new connections spread over the
    workers (not all to whichever wakes first); the parent serves none itself."""
    proc, url = served
    seen = collections.Counter(_text(url + "/") for _ in range(200))  # a connection each
    pids = {int(pid) for pid in seen}
    assert pids == _workers(proc) and len(pids) == 2, (seen, _workers(proc))
    assert proc.pid not in pids
    assert min(seen.values()) >= 50, f"one worker took nearly every connection: {seen}"


def test_sigterm_stops_every_worker(served: tuple[subprocess.Popen[str], str]) -> None:
    """Rule: SIGTERM to the parent stops each worker (one SIGTERM each, so each drains), and
    the parent exits 0 once they are gone."""
    proc, _ = served
    workers = _workers(proc)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert not any(_alive(pid) for pid in workers), "a worker outlived the parent"


def test_sigint_stops_every_worker(served: tuple[subprocess.Popen[str], str]) -> None:
    """Rule: Ctrl-C (SIGINT to the parent) stops the workers as SIGTERM does."""
    proc, _ = served
    workers = _workers(proc)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=30) == 0
    assert not any(_alive(pid) for pid in workers)


def test_workers_end_with_a_parent_killed_outright(
        served: tuple[subprocess.Popen[str], str]) -> None:
    """Rule: a parent killed with SIGKILL (no chance to stop anything) leaves no worker
    behind holding the port: each is sent SIGTERM by the kernel when its parent dies."""
    proc, url = served
    workers = _workers(proc)
    proc.kill()
    proc.wait(timeout=10)
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers), "a worker outlived its killed parent"
    with pytest.raises(urllib.error.URLError, match="Connection refused"):
        _text(url + "/", timeout=2)


def test_a_killed_worker_is_replaced_and_no_connection_is_lost(
        served: tuple[subprocess.Popen[str], str]) -> None:
    """Rule: a worker that dies is started again on the same socket, which the parent kept
    open: the connections the kernel gave that socket meanwhile wait for the new worker
    instead of being refused, so every request is answered."""
    proc, url = served
    first = _workers(proc)
    victim = min(first)
    os.kill(victim, signal.SIGKILL)
    answers = collections.Counter(_text(url + "/", timeout=30) for _ in range(100))
    deadline = time.monotonic() + 20
    while len(_workers(proc)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    now = _workers(proc)
    assert len(now) == 2 and victim not in now, (first, now)
    assert sum(answers.values()) == 100
    answers.update(_text(url + "/") for _ in range(100))
    assert {int(pid) for pid in answers} - {victim} >= now  # the new worker serves


def test_a_worker_that_cannot_start_stops_the_server(folder: Path) -> None:
    """Rule: a worker that exits at start-up is not started again and again: the parent
    stops the others, says so, and exits 1; the worker's own error is on the output."""
    proc, _ = _start(folder, ["pidapp:app", "--workers", "2"], env={"FAIL_IN_WORKER": "1"})
    output = proc.communicate(timeout=60)[0]
    assert proc.returncode == 1, output
    assert "a worker exited at start-up" in output
    assert "this worker cannot start" in output


@pytest.mark.parametrize("store", [None, "memory", "sqlite:threads.db"])
def test_workers_above_one_need_a_store_they_share(folder: Path, store: str | None) -> None:
    """Rule: several workers serving agents keep threads in Redis or PostgreSQL; with no
    store, the memory store or SQLite each worker's threads would be its own: refused, with
    the forms that work named."""
    args = ["shop:agent", "--workers", "2", *(["--store", store] if store else [])]
    proc, _ = _start(folder, args)
    output = proc.communicate(timeout=60)[0]
    assert proc.returncode == 2, output
    assert "--workers above 1 needs a store every worker shares" in output
    assert "redis://" in output and "postgresql://" in output


@pytest.mark.parametrize("store", ["postgres://app@127.0.0.1/app", "mysql://x"])
def test_workers_with_what_is_no_store_say_it_is_none(folder: Path, store: str) -> None:
    """Rule: an error says what was wrong: a store URL of no known form is "not a store", with
    the forms, as with one worker (it was told it would keep each worker's threads apart)."""
    proc, _ = _start(folder, ["shop:agent", "--workers", "2", "--store", store])
    output = proc.communicate(timeout=60)[0]
    assert proc.returncode == 2, output
    assert "is not a store; use sqlite:PATH, memory, redis://" in output, output
    assert "keep each worker's threads apart" not in output


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_a_bad_worker_count_is_a_clear_error(folder: Path, value: str) -> None:
    """Rule: --workers is a whole number of processes, at least 1."""
    proc, _ = _start(folder, ["pidapp:app", "--workers", value])
    output = proc.communicate(timeout=60)[0]
    assert proc.returncode == 2
    assert f"{value!r} is not a number of processes" in output


def test_a_port_in_use_is_refused_before_any_worker_starts(folder: Path) -> None:
    """Rule: the parent binds every socket first, so a port another process holds is one
    clear error, not workers failing one by one."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run([*ENTRY, "serve", "pidapp:app", "--workers", "2", "--port",
                               str(port)], cwd=folder, capture_output=True, text=True,
                              timeout=60)
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr


def test_a_second_server_on_the_same_port_is_refused(
        folder: Path, served: tuple[subprocess.Popen[str], str]) -> None:
    """Rule: sockets with SO_REUSEPORT of one user may share a port, so a second `serve
    --workers` on a port the first one serves would silently take half its connections:
    it is refused like any port in use, and the first keeps every connection."""
    proc, url = served
    port = url.rsplit(":", 1)[1]
    done = subprocess.run([*ENTRY, "serve", "pidapp:app", "--workers", "2", "--port", port],
                          cwd=folder, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert {int(_text(url + "/")) for _ in range(50)} <= _workers(proc)


def test_workers_share_threads_through_redis(folder: Path, redis_server: str  # noqa: F811
                                             ) -> None:
    """Rule: with --store redis://..., a run served by one worker is the thread every worker
    serves: its state, read back over many connections (so from both workers), is the same."""
    proc, url = _start(folder, ["shop:agent", "--workers", "2", "--store", redis_server])
    try:
        _wait_ready(proc, url, "/healthz")
        thread = f"t-{uuid.uuid4().hex}"
        body = json.dumps({"threadId": thread, "runId": f"r-{uuid.uuid4().hex}",
                           "state": {"items": []}, "tools": [], "context": [],
                           "forwardedProps": {},
                           "messages": [{"id": "m1", "role": "user", "content": "milk"}]})
        request = urllib.request.Request(url + "/agents/shop/ag-ui", data=body.encode(),
                                         headers={"content-type": "application/json",
                                                  "accept": "text/event-stream"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert b"RUN_FINISHED" in response.read()
        states = [json.loads(_text(f"{url}/threads/{thread}"))["state"] for _ in range(20)]
        assert states == [{"items": ["milk"]}] * 20
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, proc.communicate()[0]
        if proc.stdout is not None:
            proc.stdout.close()


def test_the_demo_with_workers_needs_a_shared_store(folder: Path) -> None:
    """Rule: `demo --workers 2` keeps its threads in the default SQLite file otherwise, one
    per worker: refused the same way."""
    done = subprocess.run([*ENTRY, "demo", "--workers", "2", "--port", str(_free_port())],
                          cwd=folder, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--workers above 1 needs a store every worker shares" in done.stderr
    assert "the default SQLite file" in done.stderr


def test_sigterm_drains_a_run_in_a_worker_and_another_server_continues_it(
        folder: Path, redis_server: str) -> None:  # noqa: F811
    """Rule: the parent's SIGTERM reaches the worker serving a run as one SIGTERM, so the
    worker drains it as a single server does: the run finishes the step it is in, its stream
    ends with `server_shutdown`, everything exits within the grace, and the thread, kept in
    Redis, is continued by the next server to the end, its audit chains verifying."""
    import httpx

    from pyox_agents.stores.redis import RedisStore
    from tests.reliability.test_shutdown import AGENTS
    from tests.reliability.todo_runs import (
        ITEMS,
        ag_ui_body,
        ended_with,
        events_of,
        finished,
        verify_runs,
    )

    (folder / "agents.py").write_text(AGENTS)
    thread, grace = f"t-{uuid.uuid4().hex}", 10.0
    args = ["agents:agents", "--workers", "2", "--store", redis_server, "--grace", str(grace)]
    proc, url = _start(folder, args, env={"STEP_SECONDS": "1.0"})
    try:
        _wait_ready(proc, url, "/healthz")
        seen: list[object] = []
        sent = 0.0
        with httpx.stream("POST", f"{url}/agents/todo/ag-ui", json=ag_ui_body(thread),
                          timeout=60) as response:
            for line in response.iter_lines():
                if line.startswith("data:"):
                    seen.extend(events_of(line))
                    last = seen[-1]
                    if not sent and isinstance(last, dict) and last["type"] == "TOOL_CALL_START":
                        sent = time.monotonic()
                        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert time.monotonic() - sent < grace
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    ended_with("ag-ui", seen, "server_shutdown", ("shutting down",))
    kinds = [e["type"] for e in seen if isinstance(e, dict)]
    assert kinds.count("TOOL_CALL_START") == 1 and kinds.count("TOOL_CALL_RESULT") == 1

    proc, url = _start(folder, args, env={"STEP_SECONDS": "0.01"})
    try:
        _wait_ready(proc, url, "/healthz")
        response = httpx.post(f"{url}/agents/todo/ag-ui", timeout=30,
                              json=ag_ui_body(thread, "again", {}))
        finished(events_of(response.text)[-1])
        assert httpx.get(f"{url}/threads/{thread}").json()["state"] == {"items": ITEMS}
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        proc.communicate()
    store = RedisStore(redis_server)
    try:
        verify_runs(store, thread)
    finally:
        store.close()
