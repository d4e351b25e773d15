"""An open AG-UI stream keeps what its events name of the request, not the request.

A run can stream for minutes, and a server holds thousands of them open at once: each keeps
the ids its events carry and the client's messages (the final `MESSAGES_SNAPSHOT` gives them
back first), never the parsed `RunAgentInput` with the client's whole state, tools, context
and forwarded props. The stream's events are the same either way.
"""

from __future__ import annotations

import gc
import json
import uuid
from typing import Any

import anyio
import httpx
import pytest
from ag_ui.core import RunAgentInput, Tool

from pyox_agents import Agent
from pyox_agents.server import create_app
from tests.ag_ui.helpers import GatedModel
from tests.ag_ui.servers import frames, serving

pytestmark = pytest.mark.anyio

RUN_ID = f"r-{uuid.uuid4().hex}"
"""This test's run: objects other tests left alive are not this request's."""


def body() -> dict[str, Any]:
    return {"threadId": "t1", "runId": RUN_ID, "state": {"items": ["kept"]},
            "messages": [{"id": "m-client", "role": "user", "content": "hello"}],
            "tools": [{"name": "pick", "description": RUN_ID, "parameters": {}}],
            "context": [{"description": "page", "value": "home"}],
            "forwardedProps": {"big": "x" * 1000}}


def alive(kind: type, field: str) -> list[Any]:
    """The objects of `kind` alive now whose `field` is this test's `RUN_ID`."""
    gc.collect()
    return [o for o in gc.get_objects() if isinstance(o, kind) and getattr(o, field) == RUN_ID]


async def test_an_open_stream_holds_no_request_and_still_gives_back_the_clients_messages() -> None:
    """Rule: while a run streams, no `RunAgentInput` (nor the request's tools) is alive; the
    run's events still name its thread and run, and its final messages snapshot starts with
    the client's message, its id kept."""
    gate = anyio.Event()
    app = create_app({"a": Agent(GatedModel(gate))})
    async with serving(app) as url, httpx.AsyncClient(timeout=10) as client, \
            client.stream("POST", f"{url}/agents/a/ag-ui", json=body()) as response:
        assert response.status_code == 200
        text = ""
        chunks = response.aiter_text()
        with anyio.fail_after(10):
            while '"TEXT_MESSAGE_CONTENT"' not in text:
                text += await chunks.__anext__()
        assert alive(RunAgentInput, "run_id") == [], "an open stream holds the parsed request"
        assert alive(Tool, "description") == [], "an open stream holds the request's tools"
        gate.set()
        async for piece in chunks:
            text += piece
    events = frames(text)
    assert events[0]["type"] == "RUN_STARTED"
    assert (events[0]["threadId"], events[0]["runId"]) == ("t1", RUN_ID)
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert (finished["threadId"], finished["runId"]) == ("t1", RUN_ID)
    snapshot = next(e for e in events if e["type"] == "MESSAGES_SNAPSHOT")
    assert snapshot["messages"][0] == {"id": "m-client", "role": "user", "content": "hello"}
    assert snapshot["messages"][-1]["content"] == "first second"
    assert json.dumps(events).count("x" * 1000) == 0  # forwarded props are not echoed
