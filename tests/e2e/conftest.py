"""End-to-end harness: real HTTP servers for ASGI apps, driven by the real JS clients.

Fixtures:

- ``npm_ready`` (session): makes sure ``tests/e2e/node_modules`` matches ``package-lock.json``
  (runs ``npm ci`` when it is missing or older). Node and npm are required: without them the
  tests FAIL, they are never skipped.
- ``serve(app) -> base_url``: starts uvicorn for any ASGI app on 127.0.0.1 (free port, own
  thread) and stops it when the test ends.
- ``run_node(script, *args, env=None, timeout=60) -> dict``: runs ``node tests/e2e/node/<script>``
  and returns the JSON object printed as the last stdout line.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

E2E_DIR = Path(__file__).resolve().parent
NODE_DIR = E2E_DIR / "node"
MIN_NODE_MAJOR = 20

Serve = Callable[[Any], str]
RunNode = Callable[..., dict[str, Any]]


def _require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"`{name}` is not on PATH. The e2e tests run the real JS clients and need Node "
            f">= {MIN_NODE_MAJOR} with npm (CI installs them; locally: install Node.js).",
            pytrace=False,
        )
    return path


def _node_modules_stale() -> bool:
    # npm writes node_modules/.package-lock.json on every install; compare it with the lock file.
    marker = E2E_DIR / "node_modules" / ".package-lock.json"
    lock = E2E_DIR / "package-lock.json"
    return not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime


@pytest.fixture(scope="session")
def npm_ready() -> Path:
    """Node and npm present, ``tests/e2e/node_modules`` installed from the lock file."""
    node = _require_tool("node")
    npm = _require_tool("npm")
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < MIN_NODE_MAJOR:
        pytest.fail(f"Node {version} is too old: need >= {MIN_NODE_MAJOR}", pytrace=False)
    # A lock file so that parallel pytest processes do not run `npm ci` at the same time.
    lock_path = Path(tempfile.gettempdir()) / "pyox-agents-e2e-npm.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _node_modules_stale():
            proc = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=E2E_DIR,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if proc.returncode != 0:
                pytest.fail(
                    f"`npm ci` in {E2E_DIR} failed ({proc.returncode}):\n"
                    f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}",
                    pytrace=False,
                )
    return E2E_DIR / "node_modules"


def _free_socket() -> socket.socket:
    # Bind port 0 ourselves and hand the socket to uvicorn: no race for the port.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.contextmanager
def _running(app: Any) -> Iterator[str]:
    sock = _free_socket()
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="auto",
        timeout_graceful_shutdown=2,  # streaming responses are cancelled after 2 s
    )
    server = uvicorn.Server(config)
    errors: list[BaseException] = []

    def target() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # reported below, a thread cannot raise into the test
            errors.append(exc)

    thread = threading.Thread(target=target, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if errors or not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            sock.close()
            pytest.fail(f"uvicorn did not start on port {port}: {errors!r}", pytrace=False)
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        if thread.is_alive():
            server.force_exit = True
            thread.join(timeout=5)
        sock.close()


def closing_store(app: Any, store: Any) -> Any:
    """`app` (a `create_app` app), closing `store`'s connections on the server's event loop when
    it shuts down: a store made for one test (a RedisStore) leaves no connection for the
    collector to find, and warn about, in a later test."""
    inner = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(served: Any) -> Any:
        async with inner(served):
            yield
        await store.aclose()

    app.router.lifespan_context = lifespan
    return app


@pytest.fixture
def serve() -> Iterator[Serve]:
    """``serve(app) -> "http://127.0.0.1:<port>"``: a real uvicorn server for an ASGI app.

    May be called several times in one test; every server stops at the end of the test.
    """
    with contextlib.ExitStack() as stack:

        def start(app: Any) -> str:
            return stack.enter_context(_running(app))

        yield start


@pytest.fixture
def run_node(npm_ready: Path) -> RunNode:
    """``run_node(script, *args, env=None, timeout=60) -> dict``.

    Runs ``node tests/e2e/node/<script> <args...>`` (dict/list args are JSON-encoded) and returns
    the JSON object printed as the LAST non-empty stdout line. A non-zero exit, a timeout or an
    unparsable last line fails the test, showing stdout and stderr.
    """

    def run(
        script: str,
        *args: Any,
        env: dict[str, str] | None = None,
        timeout: float = 60,
    ) -> dict[str, Any]:
        argv = ["node", str(NODE_DIR / script)]
        argv += [a if isinstance(a, str) else json.dumps(a) for a in args]
        full_env = {**os.environ, **(env or {})}
        try:
            proc = subprocess.run(
                argv, cwd=E2E_DIR, env=full_env, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(
                f"{script} timed out after {timeout}s\n"
                f"--- stdout ---\n{_text(exc.stdout)}\n--- stderr ---\n{_text(exc.stderr)}",
                pytrace=False,
            )
        shown = f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
        if proc.returncode != 0:
            pytest.fail(f"{script} exited with {proc.returncode}\n{shown}", pytrace=False)
        lines = [line for line in proc.stdout.splitlines() if line.strip()]
        try:
            result = json.loads(lines[-1])
        except (IndexError, json.JSONDecodeError):
            result = None
        if not isinstance(result, dict):
            pytest.fail(f"{script} did not print a JSON object last\n{shown}", pytrace=False)
        return result

    return run


def _text(data: str | bytes | None) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data
