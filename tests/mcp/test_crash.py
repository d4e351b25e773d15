"""An MCP tool call cut by a crash: a person decides, unless the tool was declared idempotent.

A real process runs the agent on a SQLite file and is SIGKILLed while its MCP call runs (the
server's `once` tool creates a marker file, then hangs); the run is then resumed here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pyox_agents import RunStatus
from pyox_agents.stores import SQLiteStore

from .crash_child import crash_agent
from .servers import results

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
CRASH_PROMPT = "outcome unknown after a crash: run again?"


def killed_during_the_call(db: Path, marker: Path, mode: str) -> str:
    """Run the child until the MCP call runs, SIGKILL it; the run's id."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp.crash_child", str(db), str(marker), mode],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60  # a bound for a broken child, not a pace
        while not marker.exists():
            assert child.poll() is None, "the child ended before its MCP call ran"
            assert time.monotonic() < deadline, "the child's MCP call did not start"
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        out, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    return str(json.loads(out.splitlines()[0])["run_id"])


async def test_an_mcp_call_cut_by_a_crash_is_put_to_a_person(tmp_path: Path) -> None:
    """"An MCP tool is not idempotent unless declared – crash recovery asks a person for the
    others, as for our tools"."""
    db, marker = tmp_path / "runs.sqlite", tmp_path / "marker"
    run_id = killed_during_the_call(db, marker, "plain")
    agent = crash_agent(str(db), str(marker), "plain", resumed=True)
    paused = await agent.aresume(run_id)
    assert results(paused.events) == []
    run = await agent.load_run(run_id)
    assert run.status is RunStatus.PAUSED and run.pending is not None
    assert run.pending.prompt == CRASH_PROMPT and run.pending.tool == "once"
    done = await agent.aresume(run_id, approve=True)
    assert [r.result for r in results(done.events)] == [{"result": "ran again"}]
    assert done.answer == "done"
    with SQLiteStore(db) as store:
        assert store.load_run(run_id).status is RunStatus.COMPLETED


async def test_an_mcp_call_declared_idempotent_runs_again_after_a_crash(tmp_path: Path) -> None:
    db, marker = tmp_path / "runs.sqlite", tmp_path / "marker"
    run_id = killed_during_the_call(db, marker, "idempotent")
    done = await crash_agent(str(db), str(marker), "idempotent", resumed=True).aresume(run_id)
    assert [r.result for r in results(done.events)] == [{"result": "ran again"}]
    assert done.answer == "done"
