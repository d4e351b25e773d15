"""Issue 22: SIGTERM to `pyox-agents serve` during runs.

A real server process (`pyox-agents serve module:agents --store sqlite:PATH --grace N`) runs
an agent that adds "a", "b", "c" to the shared state, one slow tool call per step. SIGTERM
comes while "a" is being added. Then: new requests are refused (the socket is closed, or 503
with `Retry-After`), the run finishes the step it is in (the "a" result is committed and
streamed) and stops at the step boundary, its stream ends with a terminal event (AG-UI
`RUN_ERROR` code "server_shutdown", AI SDK `error` + `finish` + `[DONE]`), the process exits
within the grace period, and the run is not lost: the server started again continues it with
the thread's next message, to "a", "b", "c", with its audit chain verifying.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents.stores import SQLiteStore
from tests.reliability.todo_runs import (
    ITEMS,
    ag_ui_body,
    ai_sdk_body,
    approve_the_question,
    ended_with,
    events_of,
    finished,
    verify_runs,
)

ENTRY = [sys.executable, "-c", "from pyox_agents.server.cli import main; main()"]
AGENTS = textwrap.dedent('''
    import os

    import anyio

    from pyox_agents import Agent, RunContext, tool
    from pyox_agents.models import FunctionModel, ToolCall

    ITEMS = ["a", "b", "c"]


    @tool
    async def add(ctx: RunContext, text: str) -> str:
        """Add an item, slowly."""
        await anyio.sleep(float(os.environ["STEP_SECONDS"]))
        ctx.state["items"].append(text)
        return "added"


    def script(messages, tools):
        done = sum(1 for m in messages if m.role == "tool" and m.content == "added")
        return ToolCall("add", {"text": ITEMS[done]}) if done < len(ITEMS) else "Done."


    agents = {"todo": Agent(FunctionModel(script), tools=[add])}
''')


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def server(folder: Path, grace: float, step_seconds: float) -> Iterator[tuple[Any, str]]:
    """`pyox-agents serve agents:agents` on a free port, its threads in folder/t.db."""
    port = free_port()
    env = {**os.environ, "STEP_SECONDS": str(step_seconds),
           "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [*ENTRY, "serve", "agents:agents", "--store", f"sqlite:{folder / 't.db'}",
         "--port", str(port), "--grace", str(grace)],
        cwd=folder, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
            time.sleep(0.1)
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


def stream_until_sigterm(proc: Any, url: str, protocol: str) -> tuple[list[Any], float]:
    """POST a run, SIGTERM the server when its first tool call starts, read to the end.
    The events, and the seconds from SIGTERM to the process's exit."""
    path, body = (("ag-ui", ag_ui_body("t")) if protocol == "ag-ui"
                  else ("ai-sdk", ai_sdk_body("t")))
    seen: list[Any] = []
    sent = 0.0
    with httpx.stream("POST", f"{url}/agents/todo/{path}", json=body, timeout=60) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            seen.extend(events_of(line))
            kind = seen[-1]["type"] if isinstance(seen[-1], dict) else seen[-1]
            if not sent and kind in ("TOOL_CALL_START", "tool-input-start"):
                sent = time.monotonic()
                proc.send_signal(signal.SIGTERM)
                refused_while_draining(url)
    proc.wait(timeout=60)
    return seen, time.monotonic() - sent


def refused_while_draining(url: str) -> None:
    """A new request while the server drains: the socket is closed, or 503 + Retry-After."""
    time.sleep(0.3)  # uvicorn closes its listener as its shutdown begins
    try:
        response = httpx.post(f"{url}/agents/todo/ag-ui", json=ag_ui_body("late"), timeout=5)
    except httpx.TransportError:
        return
    assert response.status_code == 503 and "retry-after" in response.headers, response.text


def continue_after_restart(folder: Path, expect_question: bool) -> None:
    """The server started again continues the thread with its next message, to the end."""
    with server(folder, grace=5, step_seconds=0.01) as (_, url):
        response = httpx.post(f"{url}/agents/todo/ag-ui", json=ag_ui_body("t", "again", {}),
                              timeout=30)
        last = events_of(response.text)[-1]
        if expect_question:  # a call cut mid-way: its outcome is unknown, so it is asked about
            response = httpx.post(f"{url}/agents/todo/ag-ui", timeout=30,
                                  json=approve_the_question(last))
            last = events_of(response.text)[-1]
        finished(last)
        assert httpx.get(f"{url}/threads/t").json()["state"] == {"items": ITEMS}
    with contextlib.closing(SQLiteStore(folder / "t.db")) as store:
        verify_runs(store, "t")


@pytest.mark.parametrize("protocol", ["ag-ui", "ai-sdk"])
def test_sigterm_lets_a_run_finish_its_step_then_leaves_it_resumable(
    protocol: str, tmp_path: Path
) -> None:
    (tmp_path / "agents.py").write_text(AGENTS)
    grace = 10.0
    with server(tmp_path, grace, step_seconds=1.0) as (proc, url):
        events, exit_after = stream_until_sigterm(proc, url, protocol)
        assert proc.returncode in (0, -signal.SIGTERM)  # uvicorn re-raises the signal it got
    assert exit_after < grace, f"the process took {exit_after:.1f} s to exit"
    ended_with(protocol, events, "server_shutdown", ("shutting down",))
    kinds = [e["type"] for e in events if isinstance(e, dict)]
    started = "TOOL_CALL_START" if protocol == "ag-ui" else "tool-input-start"
    result = "TOOL_CALL_RESULT" if protocol == "ag-ui" else "tool-output-available"
    assert kinds.count(started) == 1 and kinds.count(result) == 1  # its step, and no more
    continue_after_restart(tmp_path, expect_question=False)


def test_sigterm_stops_a_step_that_overruns_the_grace_and_leaves_it_resumable(
    tmp_path: Path
) -> None:
    (tmp_path / "agents.py").write_text(AGENTS)
    grace = 3.0
    with server(tmp_path, grace, step_seconds=60) as (proc, url):
        events, exit_after = stream_until_sigterm(proc, url, "ag-ui")
    assert exit_after < grace + 1, f"the process took {exit_after:.1f} s to exit"
    ended_with("ag-ui", events, "server_shutdown", ("shutting down",))
    continue_after_restart(tmp_path, expect_question=True)
