"""`pyox-agents new`, as a developer's first hour: the project it writes is built and served
as its README says (the agent with `pyox-agents serve ... --cors`, the page on another origin)
and driven in Chromium, for each page it can write (CopilotKit, the AI SDK's `useChat`).

`tests/e2e/browser/starter.mjs` runs the scenario on a network slow to answer a connect: a
message, its tool calls shown, hand edits before and after a run that survive the next run (the
first made as the page opens), a reload that keeps the thread and a hand edit made as it comes
back, an approval, and the page at a phone's width; no console error, no request to another
host, and no serious or critical finding of axe-core.

The project pins the npm packages the demo page pins (a test checks it), so it is built with
frontend-demo's node_modules instead of a fresh `npm install` of its own.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pyox_agents.starter import UIS, StarterError, create_project
from tests.e2e.browser_runs import run_browser_script
from tests.e2e.test_demo_page import ARTIFACTS, FRONTEND, chromium, playwright_ready

__all__ = ["chromium", "playwright_ready"]  # the fixtures, used by name

SCRIPT = Path(__file__).parent / "browser" / "starter.mjs"
CLI = [sys.executable, "-c", "from pyox_agents.server.cli import main; main()"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _pins(package_json: Path) -> dict[str, str]:
    manifest = json.loads(package_json.read_text())
    return {**manifest.get("dependencies", {}), **manifest.get("devDependencies", {})}


@contextmanager
def _running(command: list[str], cwd: Path, url: str, env: dict[str, str] | None = None
             ) -> Iterator[subprocess.Popen[str]]:
    """`command` started in `cwd` until `url` answers (30 s at most), stopped afterwards."""
    proc = subprocess.Popen(command, cwd=cwd, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url, timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.kill()
                    pytest.fail(f"{command} did not serve {url}:\n{proc.communicate()[0]}")
                time.sleep(0.1)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.parametrize("ui", UIS)
def test_a_new_project_builds_serves_and_works_in_chromium(ui: str, tmp_path: Path,
                                                           chromium: str,
                                                           playwright_ready: None) -> None:
    project = tmp_path / "my-todos"
    made = subprocess.run([*CLI, "new", str(project), "--ui", ui], capture_output=True,
                          text=True, check=False)
    assert made.returncode == 0, made.stderr
    assert "pyox-agents serve agent:agent" in made.stdout
    web = project / "web"
    pins, demo = _pins(web / "package.json"), _pins(FRONTEND / "package.json")
    assert {name: demo.get(name) for name in pins} == pins, "the starter pins other versions"
    (web / "node_modules").symlink_to(FRONTEND / "node_modules")

    api_port, page_port = _free_port(), _free_port()
    api, page = f"http://127.0.0.1:{api_port}", f"http://127.0.0.1:{page_port}"
    built = subprocess.run(["npm", "run", "build"], cwd=web, capture_output=True, text=True,
                           check=False, timeout=240, env={**os.environ, "VITE_PYOX_URL": api})
    assert built.returncode == 0, f"npm run build failed:\n{built.stdout}\n{built.stderr}"
    serve = [*CLI, "serve", "agent:agent", "--store", "sqlite:threads.db", "--cors", page,
             "--port", str(api_port)]
    preview = ["node", "node_modules/vite/bin/vite.js", "preview", "--host", "127.0.0.1",
               "--port", str(page_port), "--strictPort"]
    with _running(serve, project, f"{api}/healthz"), _running(preview, web, page):
        result = run_browser_script(SCRIPT, [page, api, ui, str(ARTIFACTS)], chromium)

    assert result["ok"], (f"{ui}: failed after {result['steps']}: {result['error']}\n"
                          f"console errors: {result['consoleErrors']}")
    assert result["consoleErrors"] == [] and result["offsite"] == [], result
    todos = result["kept"]["afterRun"]["todos"]
    assert {todo["text"]: todo["done"] for todo in todos} == {
        "Call mom": False, "milk": True, "eggs": True, "Buy bread": False}, todos
    reloaded = result["kept"]["afterReload"]["todos"]
    assert sorted(todo["text"] for todo in reloaded) == [
        "Buy bread", "Call dad", "Call mom", "eggs", "milk"], reloaded
    assert result["kept"]["afterClear"] == {"todos": []}
    assert result["phoneWidth"] <= 390
    assert result["accessibility"] == {"afterRuns": [], "approval": []}, result["accessibility"]


def test_new_refuses_a_folder_in_use_and_a_bad_name(tmp_path: Path) -> None:
    """Nothing is written over: a folder that has files is refused, as is a name npm refuses
    and a page it cannot write; the error says what to do."""
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    with pytest.raises(StarterError, match="not an empty folder"):
        create_project(taken)
    assert [p.name for p in taken.iterdir()] == ["notes.txt"]
    with pytest.raises(StarterError, match="cannot name a project"):
        create_project(tmp_path / "My Todos")
    with pytest.raises(StarterError, match="choose copilotkit or ai-sdk"):
        create_project(tmp_path / "vue-todos", "vue")
    assert not (tmp_path / "My Todos").exists() and not (tmp_path / "vue-todos").exists()
    made = subprocess.run([*CLI, "new", str(taken)], capture_output=True, text=True,
                          check=False)
    assert made.returncode == 2 and "pyox-agents: error:" in made.stderr
