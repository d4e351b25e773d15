"""Two windows of the demo page on one thread, in a real Chromium, against the real server.

For each view (AG-UI, AI SDK, CopilotKit), `tests/e2e/browser/demo_two_pages.mjs` opens the
page, adds three todos to a new thread and asks the agent to add milk to the cart; opens the
same thread with the page's "Open in a second window" link; adds a todo in the second window
while nothing runs (the first shows it, without reloading); then asks the agent to add eggs and
bread and, while that run goes on (both windows say so), adds a todo, ticks one and deletes one
in each window. The agent's model is paced (`DemoModel(pace=...)`) so a reply takes about a
second, as a real one does. Once all is quiet, both windows and the server's kept state
(`GET /threads/{id}`) agree, and every edit a person made is in it, unless the page said it was
refused. Last, a todo too long for the server's state size limit is refused: the window says
so, and no window or the server keeps it. One server and one browser for the three views, to
keep the wall time small.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyox_agents.demo import demo_agents
from pyox_agents.server import ServerLimits, create_app
from pyox_agents.server.cli import STATIC_DIR
from pyox_agents.stores import SQLiteStore, Store
from tests.e2e.browser_runs import run_browser_script
from tests.e2e.conftest import closing_store
from tests.e2e.test_demo_page import ARTIFACTS, chromium, playwright_ready
from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name

__all__ = ["chromium", "playwright_ready"]  # the fixtures, shared with the demo page's tests

SCRIPT = Path(__file__).parent / "browser" / "demo_two_pages.mjs"
VIEWS = ("ag-ui", "ai-sdk", "copilotkit")
PACE = 1.0
"""About how many seconds each of the demo model's replies takes: a run of one tool call and
its answer takes two of them, time enough for both windows' edits while it goes on."""

STATE_BYTES = 4000
"""The test server's limit on a state's size: the scenario's state stays well under it; the
last edit (a 5,000-character todo) goes past it, and is refused."""

ADDED = ("buy stamps", "fix the bike")  # one a window, during the run
TICKED = ("walk the dog", "water the plants")
DELETED = ("pay the rent", "idle todo from page 2")


def _missing_edits(state: dict[str, Any]) -> list[str]:
    """The person's edits the state does not hold."""
    todos = {todo["text"]: todo["done"] for todo in state["todos"]}
    missing = [f"added {text!r}" for text in ADDED if text not in todos]
    missing += [f"ticked {text!r}" for text in TICKED if todos.get(text) is not True]
    missing += [f"deleted {text!r}" for text in DELETED if text in todos]
    return missing


@pytest.mark.parametrize("processes", [1, 2])
def test_two_windows_and_the_agent_edit_one_thread_in_every_view(
        chromium: str, playwright_ready: None, serve: Callable[[Any], str],
        tmp_path: Path, request: pytest.FixtureRequest, processes: int) -> None:
    """With two processes, the second window is served by another server process sharing the
    first's store (one real Redis): the same rules hold across them."""
    def app(store: Store) -> Any:
        return create_app(demo_agents("demo", pace=PACE), store=store, page=STATIC_DIR,
                          limits=ServerLimits(state_bytes=STATE_BYTES))

    if processes == 1:
        bases = [serve(app(SQLiteStore(tmp_path / "demo.db")))]
    else:
        from pyox_agents.stores.redis import RedisStore

        url, prefix = request.getfixturevalue("redis_server"), f"demo-{uuid.uuid4().hex[:8]}:"
        stores = [RedisStore(url, prefix=prefix) for _ in range(2)]
        bases = [serve(closing_store(app(store), store)) for store in stores]
    result = run_browser_script(SCRIPT, [bases[0], ",".join(VIEWS), str(ARTIFACTS), *bases[1:]],
                                chromium)
    assert result["offsite"] == [], f"the page asked other hosts: {result['offsite']}"
    for view in VIEWS:
        report = result["views"][view]
        assert report["ok"], (
            f"{view}: failed after {report['steps']}: {report['error']}\n"
            f"browser console errors: {result['consoleErrors']}\n"
            f"screenshots: {result['screenshots']}")
        assert report["idleFollowed"], f"{view}: page 1 reloaded to show page 2's idle edit"
        assert report["runningAfterEdits"] == [True, True], (
            f"{view}: the run ended before both windows had edited (page 1, page 2): "
            f"{report['runningAfterEdits']}; pace the model more (PACE)")
        first, second = report["pages"]
        assert first == second == report["server"], (
            f"{view}: the windows and the server disagree:\npage 1: {first}\npage 2: {second}\n"
            f"server: {report['server']}")
        refused = [text for texts in report["refused"] for text in texts]
        assert refused or not _missing_edits(report["server"]), (
            f"{view}: a person's edit is lost, and no page said it was refused: "
            f"{_missing_edits(report['server'])} in {report['server']}")
        assert sorted(item["name"] for item in report["server"]["cart"]) == [
            "bread", "eggs", "milk"], f"{view}: the agent's changes: {report['server']}"
        assert all(item["qty"] == 1 for item in report["server"]["cart"]), (
            f"{view}: the agent added an item twice: {report['server']['cart']}")
        refusal = report["refusal"]
        assert refusal["shown"].startswith("Your change was not applied"), refusal
        assert not (refusal["page1"] or refusal["page2"] or refusal["server"]), (
            f"{view}: the refused todo is kept somewhere: {refusal}")
    # Nothing fails but the refused edits (413): a fresh page asks for nothing the server has
    # not got (a new chat's history); the console says only that.
    expected = [line for line in result["failedRequests"]
                if line.startswith("PATCH /agents/demo/threads/") and line.endswith("/state 413")]
    assert result["failedRequests"] == expected, result["failedRequests"]
    assert len(result["consoleErrors"]) == len(result["failedRequests"]), result["consoleErrors"]
