"""Every route that reads a JSON body answers one nested too deeply for the parser with a 4xx
that says so, never a 500 (the rule: every bad input gets a clear error).

An outside tester found the state-edit route called such a body "not JSON"; the stop route and
the thread routes (rename, archive) let the parser's `RecursionError` through as a 500.
"""

from __future__ import annotations

import httpx
import pytest

from pyox_agents import Agent
from pyox_agents.models import ScriptedModel
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore

pytestmark = pytest.mark.anyio

DEEP = b"[" * 5000 + b"]" * 5000  # deeper than Python's json can parse

ROUTES = {
    "state edit": ("PATCH", "/agents/a/threads/t/state", b'{"base": 1, "patch": %s}'),
    "stop": ("POST", "/agents/a/ag-ui/t/stop", b'{"runId": %s}'),
    "rename": ("PATCH", "/threads/t", b'{"title": %s}'),
    "ag-ui run": ("POST", "/agents/a/ag-ui", b'{"threadId": "t", "messages": %s}'),
    "ai-sdk run": ("POST", "/agents/a/ai-sdk", b'{"id": "t", "messages": %s}'),
}


@pytest.mark.parametrize("route", list(ROUTES))
async def test_a_body_nested_too_deeply_is_a_4xx_that_says_so(route: str) -> None:
    app = create_app({"a": Agent(ScriptedModel(["hi"] * 3))}, store=MemoryStore())
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        first = await http.post("/agents/a/ag-ui", json={
            "threadId": "t", "runId": "r", "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [{"id": "u", "role": "user", "content": "x"}]})
        assert first.status_code == 200, first.text
        before = (await http.get("/threads/t")).json()
        method, path, body = ROUTES[route]
        answer = await http.request(method, path, content=body % DEEP,
                                    headers={"content-type": "application/json"})
        assert answer.status_code in (400, 422), answer.text[:300]
        assert "nests too deeply" in answer.text, answer.text[:300]
        assert (await http.get("/threads/t")).json() == before
