"""The README's offline example also serves an AG-UI endpoint."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import httpx
import jsonpatch
import pytest

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).parents[2] / "examples" / "todo.py"


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("todo_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_todo_example_serves_ag_ui_with_state_deltas() -> None:
    app = load_example().app()
    body = {"threadId": "trip", "runId": "r1", "state": {"todos": []},
            "messages": [{"id": "u1", "role": "user", "content": "Plan my trip"}],
            "tools": [], "context": [], "forwardedProps": {}}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://test") as client:
        response = await client.post("/agents/todo/ag-ui", json=body)
    events = [json.loads(line[5:]) for line in response.text.splitlines()
              if line.startswith("data:")]
    types = [e["type"] for e in events]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
    state: Any = {"todos": []}
    for event in events:
        if event["type"] == "STATE_SNAPSHOT":
            state = event["snapshot"]
        elif event["type"] == "STATE_DELTA":
            state = jsonpatch.apply_patch(state, event["delta"])
    assert state == {"todos": [{"text": "Book the flight", "done": True},
                               {"text": "Pack", "done": False}]}
