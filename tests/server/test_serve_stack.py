"""`pyox-agents serve` runs on uvloop and httptools when they are installed (the `fast` extra),
or on the loop and HTTP parser its `--loop` and `--http` name."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.server.served_apps import asgi_module

ENTRY = [sys.executable, "-c", "from pyox_agents.server.cli import main; main()"]

STACK_APP = asgi_module(
    """
    import asyncio
    import json
    import sys

    def stack():
        loaded = sys.modules
        return json.dumps({
            "loop": type(asyncio.get_running_loop()).__module__,
            "httptools": "uvicorn.protocols.http.httptools_impl" in loaded,
            "h11": "uvicorn.protocols.http.h11_impl" in loaded,
        }).encode()
    """, "stack()", "application/json")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _stack(tmp_path: Path, *options: str) -> dict[str, object]:
    """What the app served by `pyox-agents serve stackapp:app *options` runs on."""
    (tmp_path / "stackapp.py").write_text(STACK_APP)
    port = _free_port()
    proc = subprocess.Popen([*ENTRY, "serve", "stackapp:app", "--port", str(port), *options],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env={**os.environ})
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1) as response:
                    seen = json.load(response)
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.kill()
                    raise AssertionError(f"server did not start: {proc.communicate()[0]}") from None
                time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
    assert isinstance(seen, dict)
    return seen


def test_serve_uses_uvloop_and_httptools_when_installed(tmp_path: Path) -> None:
    """With the `fast` extra installed, the served app runs in a uvloop event loop and its
    requests are parsed by httptools, not asyncio's loop and h11."""
    pytest.importorskip("uvloop")
    pytest.importorskip("httptools")
    seen = _stack(tmp_path)
    assert str(seen["loop"]).startswith("uvloop"), seen
    assert seen["httptools"] and not seen["h11"], seen


@pytest.mark.parametrize("workers", ["1", "2"])
def test_loop_and_http_choose_asyncio_and_h11(tmp_path: Path, workers: str) -> None:
    """Rule: `--loop asyncio --http h11` serve on asyncio's own loop and h11 even with the
    `fast` extra installed (in each worker too), as uvicorn's options of the same names do."""
    seen = _stack(tmp_path, "--loop", "asyncio", "--http", "h11", "--workers", workers)
    assert str(seen["loop"]).startswith("asyncio"), seen
    assert seen["h11"] and not seen["httptools"], seen


@pytest.mark.parametrize(("option", "value"), [("--loop", "trio"), ("--http", "h2")])
def test_an_unknown_loop_or_parser_is_a_clear_error(tmp_path: Path, option: str,
                                                    value: str) -> None:
    """Rule: --loop and --http take uvicorn's names only; another is refused, naming them."""
    done = subprocess.run([*ENTRY, "serve", "stackapp:app", option, value], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert f"invalid choice: '{value}'" in done.stderr
