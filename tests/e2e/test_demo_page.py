"""The demo page in a real Chromium, against the real server, for each of its three views.

Each view (AG-UI, AI SDK, CopilotKit) runs issue 8's scenario in Debian's Chromium, driven by
playwright-core (`tests/e2e/browser/demo_page.mjs`): the agent adds milk and eggs to the cart
(highlighted); the person ticks a todo and the agent clears completed todos; a checkout is
approved (order confirmed) and another denied (refused, cart kept); a reload brings the thread
and its state back. Screenshots go to tests/e2e/artifacts/. The page must ask nothing of any
host but the server.

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
    assert result["steps"][-1] == "reloaded: thread and state back"
    assert result["offsite"] == [], f"{view} asked other hosts: {result['offsite']}"
    for path in result["screenshots"]:
        assert Path(path).stat().st_size > 10_000
