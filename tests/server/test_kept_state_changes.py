"""A thread's kept state written as its changes, on a real server: a person's edits and a
run's steps after the first write are appended to what the store holds, not written whole, and
another process on the same store reads exactly the state this one holds."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents.server import create_app
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.servers import post_run, serving
from tests.server.test_live_state import ag_ui_body, append_agent, kept, patch

pytestmark = pytest.mark.anyio

ITEMS = {"items": [f"item {i}" for i in range(500)]}


def appended(path: Path) -> int:
    """How many versions the store holds as changes after its whole state."""
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM kept_changes").fetchone()[0])


async def test_edits_and_steps_are_appended_and_read_back_whole_by_another_process(
        tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    one = [{"id": "u1", "role": "user", "content": "add a"}]
    two = [*one, {"id": "u2", "role": "user", "content": "add b"}]
    async with serving(create_app({"todo": append_agent()}, store=SQLiteStore(path))) as url, \
            httpx.AsyncClient(base_url=url) as http:
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(state=ITEMS, messages=one))
        version = (await kept(http))["version"]
        for index in (3, 0, 499):
            answer = await patch(http, version, [{"op": "replace", "path": f"/items/{index}",
                                                  "value": f"edited {index}"}])
            assert answer.status_code == 200, answer.text
            version = answer.json()["version"]
        assert appended(path) == 3  # each edit appended, not the whole state
        await post_run(http, "/agents/todo/ag-ui", ag_ui_body(runId="r2", state=None,
                                                              messages=two))
        assert appended(path) == 4  # the run's step too
        here: dict[str, Any] = await kept(http)
    items = here["state"]["items"]
    assert items[0] == "edited 0" and items[3] == "edited 3" and items[-1] == "b"
    async with serving(create_app({"todo": append_agent()}, store=SQLiteStore(path))) as url, \
            httpx.AsyncClient(base_url=url) as http:
        assert await kept(http) == here  # what the store holds: the base and its changes
        answer = await patch(http, here["version"], [{"op": "remove", "path": "/items/0"}])
        assert answer.status_code == 200, answer.text  # an edit on the read-back versions
        assert (await kept(http))["state"]["items"][0] == "item 1"
