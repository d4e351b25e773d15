"""The demo's feature gallery in a real Chromium, against the real server: one test per page.

Each of the seven pages is a CopilotKit v2 app (`@copilotkit/react-core/v2`, the version the
demo pins) on one agent of `pyox_agents.examples`, driven by the offline demo model.
`tests/e2e/browser/gallery.mjs` plays a person on it with playwright-core and checks what they
see: the background the page's tool changed, the weather card, the answer to a question
continuing the run and an approved booking, the task's steps completing live, the haiku card,
the list both sides edit, the document growing while the tool's argument streams, then
committed, kept, and a later change undone; then a reload brings the page's thread back (its
messages and its state). Screenshots go to tests/e2e/artifacts/. The page must ask nothing of
any host but the server.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyox_agents.demo import demo_agents
from pyox_agents.server import create_app
from pyox_agents.server.cli import STATIC_DIR
from pyox_agents.stores import SQLiteStore
from tests.e2e.browser_runs import run_browser_script
from tests.e2e.test_demo_page import ARTIFACTS, CHROMIUM, chromium, playwright_ready

__all__ = ["chromium", "playwright_ready"]  # the fixtures, shared with the demo page's tests

SCRIPT = Path(__file__).parent / "browser" / "gallery.mjs"
PAGES = {
    "agentic-chat": "the agent read the forwarded properties",
    "backend-tool-rendering": "the agent said the weather",
    "human-in-the-loop": "the approved run resumed and booked the flight",
    "agentic-generative-ui": "the agent finished the task",
    "tool-based-generative-ui": "the run went on with the page's answer",
    "shared-state": "the agent added a todo beside the person's",
    "predictive-state-updates": "the person undid the next change: the story is back",
}


def _drive(base: str, page: str) -> dict[str, Any]:
    return run_browser_script(SCRIPT, [base, page, str(ARTIFACTS)], CHROMIUM)


@pytest.mark.parametrize("page", list(PAGES))
def test_gallery_page_does_what_it_shows_in_chromium(
        page: str, chromium: str, playwright_ready: None, serve: Callable[[Any], str],
        tmp_path: Path) -> None:
    app = create_app(demo_agents("demo"), store=SQLiteStore(tmp_path / "demo.db"),
                     page=STATIC_DIR)
    result = _drive(serve(app), page)
    assert result["ok"], (
        f"{page}: failed after {result['steps']}: {result['error']}\n"
        f"seen: {result['seen']}\nbrowser console errors: {result['consoleErrors']}\n"
        f"screenshots: {result['screenshots']}")
    assert PAGES[page] in result["steps"]
    assert result["steps"][-1] == "reloaded: the thread came back"
    assert result["consoleErrors"] == []
    assert result["offsite"] == [], f"{page} asked other hosts: {result['offsite']}"
    # Rule: what a person clicks is readable (WCAG AA, 4.5:1), CopilotKit's stylesheet or not.
    unreadable = {name: ratio for name, ratio in result["seen"].get("contrast", {}).items()
                  if ratio < 4.5}
    assert not unreadable, f"{page}: buttons too faint to read (contrast): {unreadable}"
    if page in ("human-in-the-loop", "predictive-state-updates"):
        assert result["seen"]["contrast"], "the buttons' contrast was not measured"
    # Rule: axe-core in Chromium finds no serious or critical accessibility violation.
    assert result["seen"]["accessibility"] == [], f"{page}: {result['seen']['accessibility']}"
    # Rule: the page asks CopilotKit for no agent it does not have (feature 4's activity
    # renderer, outside the chat, looked up "default" and warned on every render).
    lookups = [w for w in result["consoleWarnings"] if "not found" in w]
    assert not lookups, f"{page}: {len(lookups)} lookups of a missing agent: {lookups[:3]}"
    # Rule: on a phone (390 px), the page fits the screen's width (no sideways scrolling).
    wide = {name: width for name, width in result["seen"]["widthOnAPhone"].items() if width > 390}
    assert not wide, f"wider than a 390 px phone: {wide}"
