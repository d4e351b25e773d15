"""The demo page in a real Chromium, against the real server, for each of its three views.

Each view (AG-UI, AI SDK, CopilotKit) runs issue 8's scenario in Debian's Chromium, driven by
playwright-core (`tests/e2e/browser/demo_page.mjs`): the agent adds milk and eggs to the cart
(highlighted); the person ticks a todo and the agent clears completed todos; a checkout is
approved (order confirmed) and another denied (refused, cart kept); a reload brings the thread
and its state back. Then the thread list and the thread's history (the server's threads API):
the thread is forked at its first run (the page opens the fork, with the conversation and state
as they were then), the fork deleted (gone from the list and the server), the thread rewound to
its second run (conversation and state as they were then, and a message goes on from there) and
renamed; with the browser's memory cleared, a reload lists it from the server, renamed and
rewound, and no fork. Screenshots go to tests/e2e/artifacts/. The page must ask nothing of any
host but the server, and log no error in the console (a 404 for a thread the server does not
have yet is one); the list's and the history's buttons are readable (WCAG AA) and, on a 390 px
phone, in sight.

Each view also survives a message typed while the checkout approval waits (declined, the message
answered), a reload, and more use; an approval left waiting over a reload is shown again and its
Approve works. The CopilotKit view regenerates an answer and edits a message (the page's own
handlers in CopilotChat's slots: CopilotKit v2 has neither). After every step of those, the chat
the page shows is the thread `GET /threads/{id}` keeps (`browser/demo_conversation.mjs`).

Chromium is installed with apt-get when missing, and frontend-demo's npm packages (which hold
playwright-core) with `npm ci`: these tests are never skipped.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyox_agents.demo import demo_agents
from pyox_agents.server import create_app
from pyox_agents.server.cli import STATIC_DIR
from pyox_agents.stores import SQLiteStore
from tests.e2e.browser_runs import run_browser_script

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend-demo"
SCRIPT = Path(__file__).parent / "browser" / "demo_page.mjs"
CONVERSATION = Path(__file__).parent / "browser" / "demo_conversation.mjs"
ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def _locked(name: str) -> Any:
    lock = (Path(tempfile.gettempdir()) / f"pyox-demo-{name}.lock").open("w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium, installed with apt-get when it is missing (CI runs as root)."""
    with _locked("apt"):
        if not Path(CHROMIUM).exists():
            for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq",
                                                           "chromium"]):
                proc = subprocess.run(command, capture_output=True, text=True, timeout=900,
                                      check=False, env={**os.environ,
                                                        "DEBIAN_FRONTEND": "noninteractive"})
                if proc.returncode != 0:
                    pytest.fail(f"`{' '.join(command)}` failed; the demo tests need Debian's "
                                f"chromium at {CHROMIUM}:\n{proc.stdout}\n{proc.stderr}",
                                pytrace=False)
    return CHROMIUM


@pytest.fixture(scope="session")
def playwright_ready() -> None:
    """frontend-demo/node_modules (with playwright-core) installed from its lock file."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is not on PATH: the demo tests need Node >= 20 and npm", pytrace=False)
    marker = FRONTEND / "node_modules" / ".package-lock.json"
    lock = FRONTEND / "package-lock.json"
    with _locked("npm"):
        if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
            proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=FRONTEND,
                                  capture_output=True, text=True, timeout=900, check=False)
            if proc.returncode != 0:
                pytest.fail(f"`npm ci` in {FRONTEND} failed:\n{proc.stdout}\n{proc.stderr}",
                            pytrace=False)


def _drive(base: str, view: str) -> dict[str, Any]:
    return run_browser_script(SCRIPT, [base, view, str(ARTIFACTS)], CHROMIUM)


@pytest.mark.parametrize("view", ["ag-ui", "ai-sdk", "copilotkit"])
def test_demo_view_scenario_in_chromium(view: str, chromium: str, playwright_ready: None,
                                        serve: Callable[[Any], str], tmp_path: Path) -> None:
    app = create_app(demo_agents("demo"), store=SQLiteStore(tmp_path / "demo.db"),
                     page=STATIC_DIR)
    result = _drive(serve(app), view)
    assert result["ok"], (
        f"{view}: failed after {result['steps']}: {result['error']}\n"
        f"browser console errors: {result['consoleErrors']}\nscreenshots: {result['screenshots']}"
    )
    assert "reloaded: thread and state back" in result["steps"]
    assert result["steps"][-1] == "reloaded: the list from the server, renamed and rewound, no fork"
    assert result["offsite"] == [], f"{view} asked other hosts: {result['offsite']}"
    assert result["consoleErrors"] == [], f"{view}: errors in the console"
    unreadable = {name: ratio for name, ratio in result["contrast"].items() if ratio < 4.5}
    assert len(result["contrast"]) == 3 and not unreadable, f"{view}: {result['contrast']}"
    # axe-core in Chromium: no serious or critical accessibility violation at any moment seen
    seen = result["accessibility"]
    assert set(seen) == {"loaded", "approval", "reloaded", "history open"}, seen
    assert not any(seen.values()), f"{view}: {seen}"
    if view == "ag-ui":  # on a 390 px phone: the page fits, its buttons are in sight
        phone = result["phone"]
        assert phone["width"] <= 390, phone
        assert all(right is not None and right <= 390 for right in phone["buttons"].values()), phone
    for path in result["screenshots"]:
        assert Path(path).stat().st_size > 10_000


def _turns(messages: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(role, text) messages as turns: each user message, then all that answered it as one."""
    turns: list[tuple[str, str]] = []
    for role, text in messages:
        if role == "user":
            turns.append(("user", text))
        elif turns and turns[-1][0] == "answer":
            turns[-1] = ("answer", f"{turns[-1][1]}\n{text}")
        else:
            turns.append(("answer", text))
    return turns


def _shows_the_kept_thread(step: dict[str, Any]) -> None:
    """The page's chat is the kept thread: the same user messages in order, and each answer
    shows what the thread keeps of it (the assistant's texts, the tools' results; a declined
    call at least as "denied": an AI SDK stream cannot write into the earlier message whose
    approval a typed message declined, so useChat keeps its part unanswered and the page marks
    it)."""
    assert isinstance(step["thread"], list), f"{step['name']}: GET /threads: {step['thread']}"
    shown = _turns([(m["role"], m["text"]) for m in step["page"]])
    kept = _turns([("user" if m["role"] == "user" else "answer", m["content"])
                   for m in step["thread"]])
    assert [t for t in shown if t[0] == "user"] == [t for t in kept if t[0] == "user"], step
    assert len(shown) == len(kept), step
    for (role, page_text), (_, kept_text) in zip(shown, kept, strict=True):
        if role == "answer":
            for line in filter(None, kept_text.split("\n")):
                if line.startswith("denied by a person") and line not in page_text:
                    line = "denied"
                assert line in page_text, f"{step['name']}: {line!r} is not shown: {page_text!r}"


def _converse(base: str, view: str, scenario: str) -> list[dict[str, Any]]:
    result = run_browser_script(CONVERSATION, [base, view, scenario, str(ARTIFACTS)], CHROMIUM)
    assert result["ok"], (
        f"{view} {scenario}: failed after {[s['name'] for s in result['steps']]}: "
        f"{result['error']}\nbrowser console errors: {result['consoleErrors']}\n"
        f"screenshots: {result['screenshots']}")
    assert result["offsite"] == [], f"{view} asked other hosts: {result['offsite']}"
    for step in result["steps"]:
        _shows_the_kept_thread(step)
    return list(result["steps"])


@pytest.mark.parametrize("view", ["ag-ui", "ai-sdk", "copilotkit"])
def test_demo_view_survives_a_message_typed_over_an_approval_and_reloads(
        view: str, chromium: str, playwright_ready: None, serve: Callable[[Any], str],
        tmp_path: Path) -> None:
    """The issue's case: a message typed while the checkout approval waits, then a reload, then
    normal use; then an approval left waiting over a reload (it showed "tool checkout {}
    running…" with no buttons on the AG-UI and CopilotKit tabs), approved."""
    app = create_app(demo_agents("demo"), store=SQLiteStore(tmp_path / "demo.db"),
                     page=STATIC_DIR)
    steps = _converse(serve(app), view, "typed-over")
    assert [s["name"] for s in steps][-1] == "and on"
    typed = [m["content"] for m in steps[1]["thread"]]
    assert typed[-5:-3] == [
        "denied by a person: the person sent a new message instead of answering",
        "add bread to my cart"]


def test_demo_copilotkit_view_regenerates_edits_and_types_over_an_approval(
        chromium: str, playwright_ready: None, serve: Callable[[Any], str],
        tmp_path: Path) -> None:
    app = create_app(demo_agents("demo"), store=SQLiteStore(tmp_path / "demo.db"),
                     page=STATIC_DIR)
    steps = _converse(serve(app), "copilotkit", "branches")
    by_name = {s["name"]: s["thread"] for s in steps}
    regenerated = by_name["the last answer regenerated"]
    assert [m["content"] for m in regenerated if m["role"] == "tool"] == [
        "added 1 x milk to the cart", "now 2 x eggs in the cart"]  # answered again, once
    edited = by_name["the first message edited: what followed it is gone"]
    assert [m["content"] for m in edited if m["role"] == "user"] == ["add bread to my cart"]
    assert by_name["denied after the reload"][-1]["content"].startswith("The order was not placed")
