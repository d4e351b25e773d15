"""The concurrency limits hold for requests that arrive together: each is checked and counted
at once, with no wait in between (issue "nobody acts where they don't belong": 100 requests at
once got 33-100 runs accepted with `runs_per_principal=5`, `runs_total=10`)."""

from __future__ import annotations

import asyncio
import collections
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents import Agent
from pyox_agents.models import FunctionModel
from pyox_agents.server import ServerLimits, bearer_tokens, create_app
from pyox_agents.stores import SQLiteStore

pytestmark = pytest.mark.anyio

TOKENS = {f"tok-{who}": who for who in ("ann", "bob", "cy", "dee")}


async def test_a_hundred_requests_at_once_start_no_more_runs_than_the_limits(
        live_server: Any, tmp_path: Path) -> None:
    async def slow(messages: Any, tools: Any) -> str:
        await asyncio.sleep(3600)  # runs stay active until the server stops
        return "done"

    store = SQLiteStore(tmp_path / "threads.db")
    app = create_app({"chat": Agent(FunctionModel(slow))}, store=store,
                     auth=bearer_tokens(TOKENS),
                     limits=ServerLimits(runs_per_principal=5, runs_total=10))
    url = live_server(app)
    tokens = list(TOKENS)

    async def post(client: httpx.AsyncClient, n: int) -> tuple[str, int]:
        token = tokens[n % len(tokens)]
        body = {"threadId": f"t{n}", "runId": "r", "state": {}, "tools": [], "context": [],
                "forwardedProps": {}, "messages": [{"id": "u", "role": "user", "content": "hi"}]}
        async with client.stream("POST", "/agents/chat/ag-ui", json=body,
                                 headers={"Authorization": f"Bearer {token}"}) as response:
            return TOKENS[token], response.status_code

    limits = httpx.Limits(max_connections=200)
    async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as client:
        answers = await asyncio.gather(*(post(client, n) for n in range(100)))
    accepted = collections.Counter(who for who, status in answers if status == 200)
    refused = [status for _, status in answers if status != 200]
    assert sum(accepted.values()) == 10, accepted
    assert max(accepted.values()) <= 5, accepted
    assert set(refused) == {429}
