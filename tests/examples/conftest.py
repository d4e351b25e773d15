"""A real server with the gallery's seven agents, and a client that talks to it as CopilotKit."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents.examples import (
    AGENTIC_GENERATIVE_UI,
    PREDICTIVE_STATE_UPDATES,
    agentic_generative_ui_agent,
    gallery_agents,
    predictive_state_updates_agent,
)
from pyox_agents.server import create_app
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.servers import serving
from tests.examples.drive import Thread


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def gallery(tmp_path: Path) -> AsyncIterator[Callable[..., Thread]]:
    """`gallery(agent, **fields) -> Thread`: a new thread with one of the seven agents, served
    by `create_app` with a SQLite store (the steps and the document stream without pauses)."""
    agents = {**gallery_agents("demo"),
              AGENTIC_GENERATIVE_UI: agentic_generative_ui_agent(pause=0),
              PREDICTIVE_STATE_UPDATES: predictive_state_updates_agent(pause=0)}
    app = create_app(agents, store=SQLiteStore(tmp_path / "gallery.db"))
    async with serving(app) as base, httpx.AsyncClient() as client:

        def thread(agent: str, **fields: Any) -> Thread:
            return Thread(client, base, agent, **fields)

        yield thread
