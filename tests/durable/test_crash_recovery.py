"""A run whose process is killed during a tool call is resumed by another process.

Each test starts `crash_child.py` in a real process on a SQLite file, waits (polling the marker
file the tool writes when its body starts) until the tool is running, kills the process with
SIGKILL, and then resumes the run from new processes. An idempotent call runs again with the same
idempotency key; any other call waits for a person ("outcome unknown after a crash: run
again?"). Whatever happens, the saved run checks, and its audit chain runs on unbroken across the
processes through `audit_head`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pyox_agents import RunState, RunStatus, verify_audit
from pyox_agents.stores import SQLiteStore

CHILD = Path(__file__).with_name("crash_child.py")
FINAL_TEXT = "Charged 5 euros."  # crash_child.FINAL_TEXT
CRASH_PROMPT = "outcome unknown after a crash: run again?"
WAIT = 30.0
"""Seconds a child may take to reach its tool, or to end: a bound for a broken run, not a pace."""
LONG = "600"
"""How long a tool body sleeps when the test means to kill it."""


@dataclass
class Child:
    """Runs crash_child.py processes on one SQLite file and one marker folder."""

    db: Path
    markers: Path
    mode: str
    started: list[subprocess.Popen[str]] = field(default_factory=list)

    def spawn(self, action: str, run_id: str | None = None, *, sleep: str = "0"
              ) -> subprocess.Popen[str]:
        args = [sys.executable, str(CHILD), str(self.db), str(self.markers), self.mode, action]
        env = {**os.environ, "PYOX_TEST_TOOL_SLEEP": sleep}
        process = subprocess.Popen([*args, *([run_id] if run_id else [])], env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.started.append(process)
        return process

    def bodies(self) -> list[dict[str, Any]]:
        """One `{"key", "attempt", "pid"}` per start of the tool's body, in order."""
        started = self.markers / "started"
        if not started.exists():
            return []
        return [json.loads(line) for line in started.read_text().splitlines()]

    def kill_during_call(self, action: str, run_id: str | None = None) -> str:
        """Run `action` until the tool's body has started once more, SIGKILL it; the run id."""
        before = len(self.bodies())
        process = self.spawn(action, run_id, sleep=LONG)
        deadline = time.monotonic() + WAIT
        while len(self.bodies()) == before:
            if process.poll() is not None:
                out, err = process.communicate()
                pytest.fail(f"the child ended before its tool started:\n{out}\n{err}")
            if time.monotonic() > deadline:
                pytest.fail(f"the child's tool did not start within {WAIT} s")
            time.sleep(0.02)  # polling the marker file; the wait is bounded by WAIT
        process.send_signal(signal.SIGKILL)
        out, _ = process.communicate(timeout=WAIT)
        assert process.returncode == -signal.SIGKILL
        printed = json.loads(out.splitlines()[0])["run_id"]
        assert run_id is None or printed == run_id
        return str(printed)

    def finish(self, action: str, run_id: str) -> dict[str, Any]:
        """Run `action` to its end; what the child said last."""
        process = self.spawn(action, run_id)
        out, err = process.communicate(timeout=WAIT)
        assert process.returncode == 0, err
        lines = [json.loads(line) for line in out.splitlines()]
        assert lines[0] == {"run_id": run_id}
        said: dict[str, Any] = lines[-1]
        return said


@pytest.fixture
def child(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Child]:
    markers = tmp_path / "markers"
    markers.mkdir()
    runner = Child(tmp_path / "runs.sqlite", markers, request.param)
    yield runner
    for process in runner.started:  # a failed test must not leave a sleeping child behind
        if process.poll() is None:
            process.kill()
            process.communicate()


def use(mode: str) -> pytest.MarkDecorator:
    """Give the test a `child` whose tool is `@tool(idempotent=True)` or a plain `@tool`."""
    return pytest.mark.parametrize("child", [mode], indirect=True)


def saved(db: Path, run_id: str) -> RunState:
    """The run as a fresh store on the file sees it, after checking all that must hold of it."""
    with SQLiteStore(db) as store:
        run = store.load_run(run_id)
        run.check()
        verify_audit(store, run_id)
        thread = store.load(store.run_thread(run_id))
        kept = store.load_thread(thread.id)
        assert not [e for e in thread.history if e.kind == "state_change"]
        if run.done:  # kept with the run only while it can be resumed (seed 004)
            assert kept.shared_state is None
        else:
            assert kept.shared_version is not None and isinstance(kept.shared_state, dict)
        return run


def audit_kinds(db: Path, run_id: str) -> list[str]:
    with SQLiteStore(db) as store:
        return [str(record["kind"]) for record in store.load_audit(run_id)]


def shared_state(db: Path, run_id: str) -> Any:
    with SQLiteStore(db) as store:
        return store.load_thread(store.run_thread(run_id)).shared_state


def crashed(child: Child) -> tuple[str, str]:
    """Kill a new run during its only tool call; its run id and the call's idempotency key."""
    run_id = child.kill_during_call("start")
    run = saved(child.db, run_id)
    assert run.status is RunStatus.RUNNING and run.in_flight is not None
    (call,) = run.in_flight["decision"]["calls"]
    (body,) = child.bodies()
    assert body["key"] == call["key"] and body["attempt"] == 1
    assert audit_kinds(child.db, run_id) == ["run_started", "decision"]
    assert shared_state(child.db, run_id) == {"charges": []}  # a killed call commits nothing
    return run_id, str(call["key"])


@use("idempotent")
def test_an_idempotent_call_cut_by_a_crash_runs_again_with_the_same_key(child: Child) -> None:
    run_id, key = crashed(child)
    said = child.finish("resume", run_id)
    assert said["status"] == "completed" and said["answer"] == FINAL_TEXT
    assert said["tool_messages"] == ["charged 5"]
    first, second = child.bodies()
    assert first["key"] == second["key"] == key and first["pid"] != second["pid"]
    run = saved(child.db, run_id)
    assert run.status is RunStatus.COMPLETED and run.answer == FINAL_TEXT
    assert [(s.kind, s.outcome) for s in run.steps] == [("tool", "ok"), ("answer", "answer")]
    assert run.in_flight is None and run.spent.steps == 2 and run.spent.tool_calls == 1
    assert said["state"] == {"charges": [5]} and shared_state(child.db, run_id) is None
    kinds = audit_kinds(child.db, run_id)
    assert kinds[:4] == ["run_started", "decision", "run_resumed", "retry"]


def paused_after_crash(child: Child) -> str:
    """Crash a plain call, resume: the run waits for a person and the body did not run again."""
    run_id, key = crashed(child)
    said = child.finish("resume", run_id)
    assert said["status"] == "paused" and said["outcome"] == "interrupt"
    assert said["tool_messages"] == []  # the model was not asked anything
    assert len(child.bodies()) == 1
    run = saved(child.db, run_id)
    assert run.status is RunStatus.PAUSED and run.pending is not None
    assert run.pending.prompt == CRASH_PROMPT
    assert (run.pending.tool, dict(run.pending.arguments)) == ("charge", {"amount": 5})
    assert run.in_flight is not None and run.in_flight["decision"]["calls"][0]["key"] == key
    assert audit_kinds(child.db, run_id)[-1] == "approval_requested"
    return run_id


@use("plain")
def test_a_plain_call_cut_by_a_crash_runs_again_only_when_a_person_approves(
        child: Child) -> None:
    run_id = paused_after_crash(child)
    said = child.finish("approve", run_id)
    assert said["status"] == "completed" and said["answer"] == FINAL_TEXT
    assert said["tool_messages"] == ["charged 5"]
    first, second = child.bodies()
    assert first["key"] == second["key"] and second["attempt"] == 2
    run = saved(child.db, run_id)
    assert run.status is RunStatus.COMPLETED and run.answer == FINAL_TEXT
    assert [(s.kind, s.outcome) for s in run.steps] == [("tool", "ok"), ("answer", "answer")]
    assert said["state"] == {"charges": [5]} and shared_state(child.db, run_id) is None
    assert "approval_answered" in audit_kinds(child.db, run_id)


@use("plain")
def test_a_plain_call_cut_by_a_crash_and_denied_is_not_run_again(child: Child) -> None:
    run_id = paused_after_crash(child)
    said = child.finish("deny", run_id)
    assert said["status"] == "completed" and said["answer"] == FINAL_TEXT
    assert said["tool_messages"] == ["denied by a person"]
    assert len(child.bodies()) == 1
    run = saved(child.db, run_id)
    assert run.status is RunStatus.COMPLETED and run.answer == FINAL_TEXT
    assert [(s.kind, s.outcome) for s in run.steps] == [("tool", "denied"), ("answer", "answer")]
    assert run.steps[0].error is not None and run.steps[0].error.code == "denied"
    assert said["state"] == {"charges": []} and shared_state(child.db, run_id) is None


@use("plain")
def test_a_crash_during_an_approved_rerun_asks_the_person_again(child: Child) -> None:
    run_id = paused_after_crash(child)
    child.kill_during_call("approve", run_id)  # the approved re-run is cut by a second crash
    assert len(child.bodies()) == 2
    said = child.finish("resume", run_id)
    assert len(child.bodies()) == 2, "a plain call ran again after a crash without a person"
    assert said["status"] == "paused"
    run = saved(child.db, run_id)
    assert run.pending is not None and run.pending.prompt == CRASH_PROMPT
