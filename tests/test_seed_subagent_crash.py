"""A crash while a subagent's approved call runs (seed 004: a tool that waits for a person
"runs again from its start once answered"): after the crash, nobody's earlier yes runs it
again; a person is asked, about the parent's call and then about the subagent's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pyox_agents.state.run import RunState
from pyox_agents.stores import SQLiteStore

CHILD = Path(__file__).with_name("subagent_crash_child.py")
WAIT = 30.0


class Shop:
    """Runs subagent_crash_child.py processes on one SQLite file and one marker file."""

    def __init__(self, tmp_path: Path) -> None:
        self.db = tmp_path / "runs.sqlite"
        self.markers = tmp_path / "paid"
        self.started: list[subprocess.Popen[str]] = []

    def spawn(self, action: str, run_id: str | None, sleep: str) -> subprocess.Popen[str]:
        args = [sys.executable, str(CHILD), str(self.db), str(self.markers), action]
        env = {**os.environ, "PYOX_TEST_TOOL_SLEEP": sleep}
        process = subprocess.Popen([*args, *([run_id] if run_id else [])], env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.started.append(process)
        return process

    def payments(self) -> int:
        return len(self.markers.read_text().splitlines()) if self.markers.exists() else 0

    def finish(self, action: str, run_id: str | None = None) -> tuple[str, dict[str, Any]]:
        process = self.spawn(action, run_id, "0")
        out, err = process.communicate(timeout=WAIT)
        assert process.returncode == 0, err
        lines = [json.loads(line) for line in out.splitlines()]
        return str(lines[0]["run_id"]), lines[-1]

    def kill_during_payment(self, action: str, run_id: str) -> None:
        before = self.payments()
        process = self.spawn(action, run_id, "60")
        deadline = time.monotonic() + WAIT
        while self.payments() == before:
            if process.poll() is not None:
                pytest.fail(f"the child ended before paying: {process.communicate()}")
            if time.monotonic() > deadline:
                pytest.fail(f"the child did not start paying within {WAIT} s")
            time.sleep(0.02)  # polling the marker file; the wait is bounded by WAIT
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=WAIT)
        assert process.returncode == -signal.SIGKILL


@pytest.fixture
def shop(tmp_path: Path) -> Iterator[Shop]:
    runs = Shop(tmp_path)
    yield runs
    for process in runs.started:  # a failed test must not leave a sleeping child behind
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_a_crash_during_a_subagents_approved_call_asks_the_person_again(shop: Shop) -> None:
    """Seed 004: a tool that waits for a person "runs again from its start once answered";
    a crash cuts the answered call, so the answer does not count twice: the person is asked
    whether to run the parent's call again, then about the subagent's call itself."""
    run_id, paused = shop.finish("start")
    assert (paused["outcome"], paused["pending_tool"]) == ("interrupt", "pay")
    shop.kill_during_payment("approve", run_id)
    assert shop.payments() == 1

    _, after_crash = shop.finish("resume", run_id)
    assert after_crash["outcome"] == "interrupt"
    assert after_crash["pending_tool"] == "buyer"
    assert after_crash["pending_prompt"] == "outcome unknown after a crash: run again?"

    _, again = shop.finish("approve", run_id)
    assert (again["outcome"], again["pending_tool"]) == ("interrupt", "pay")
    assert shop.payments() == 1  # the yes given before the crash did not run it again

    _, done = shop.finish("approve", run_id)
    assert done["outcome"] == "success"
    assert done["answer"] == "parent saw: buyer saw: paid 3"
    assert done["state"] == {"paid": 3}
    assert shop.payments() == 2
    with SQLiteStore(shop.db) as store:
        saved = store.load_run(run_id)  # a RunState, or its dict form
        (saved if isinstance(saved, RunState) else RunState.from_dict(saved)).check()
