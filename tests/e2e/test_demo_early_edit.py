"""A person who types before the thread has come back, in a real Chromium against the server.

The demo page's AG-UI and CopilotKit views bring a thread back through `POST .../ag-ui/connect`
on load; a person may add a todo before that answer arrives (a slow network, a busy server).
Here the server answers the connect a second late: the todo must stay on the board when the
thread's state arrives (a new thread's empty state must not replace it), and the agent's first
run starts from it (`tests/e2e/browser/demo_early_edit.mjs`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyox_agents.demo import demo_agents
from pyox_agents.server import create_app
from pyox_agents.server.cli import STATIC_DIR
from pyox_agents.stores import SQLiteStore
from tests.e2e.browser_runs import run_browser_script
from tests.e2e.test_demo_page import ARTIFACTS, chromium, playwright_ready

__all__ = ["chromium", "playwright_ready"]

SCRIPT = Path(__file__).parent / "browser" / "demo_early_edit.mjs"
LATE = 1.0
"""Seconds the server waits before it answers a connect."""


def _late_connects(app: Any) -> Any:
    async def late(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].endswith("/ag-ui/connect"):
            await asyncio.sleep(LATE)
        await app(scope, receive, send)

    return late


@pytest.mark.parametrize("view", ["ag-ui", "copilotkit"])
def test_a_todo_typed_before_the_thread_came_back_stays_and_the_run_starts_from_it(
        view: str, chromium: str, playwright_ready: None, serve: Callable[[Any], str],
        tmp_path: Path) -> None:
    """Rule: a person's edit is never lost: one made while the page loads the thread is kept
    when the thread's state arrives, and the thread's first run starts from it."""
    app = create_app(demo_agents("demo", pace=0.2), store=SQLiteStore(tmp_path / "demo.db"),
                     page=STATIC_DIR)
    result = run_browser_script(SCRIPT, [serve(_late_connects(app)), view, str(ARTIFACTS)],
                                chromium)
    assert result["offsite"] == [], result["offsite"]
    assert result["ok"], (f"failed after {result['steps']}: {result['error']}\n"
                          f"console: {result['consoleErrors']}\nscreenshots: "
                          f"{result['screenshots']}")
    assert result["shownAfterConnect"] == 1, "the thread's state replaced the early todo"
    texts = [todo["text"] for todo in result["server"]["todos"]]
    assert "typed early" in texts, result["server"]
    assert [item["name"] for item in result["server"]["cart"]] == ["milk"], result["server"]
    assert result["consoleErrors"] == [], result["consoleErrors"]
