"""`pyox-agents serve` runs on uvloop and httptools when they are installed (the `fast` extra)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

ENTRY = [sys.executable, "-c", "from pyox_agents.server.cli import main; main()"]

STACK_APP = textwrap.dedent("""
    import asyncio
    import json
    import sys

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].rsplit(".", 1)[-1]
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        loaded = sys.modules
        body = json.dumps({
            "loop": type(asyncio.get_running_loop()).__module__,
            "httptools": "uvicorn.protocols.http.httptools_impl" in loaded,
            "h11": "uvicorn.protocols.http.h11_impl" in loaded,
        }).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})
""")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_serve_uses_uvloop_and_httptools_when_installed(tmp_path: Path) -> None:
    """With the `fast` extra installed, the served app runs in a uvloop event loop and its
    requests are parsed by httptools, not asyncio's loop and h11."""
    pytest.importorskip("uvloop")
    pytest.importorskip("httptools")
    (tmp_path / "stackapp.py").write_text(STACK_APP)
    port = _free_port()
    proc = subprocess.Popen([*ENTRY, "serve", "stackapp:app", "--port", str(port)],
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
    assert seen["loop"].startswith("uvloop"), seen
    assert seen["httptools"] and not seen["h11"], seen
