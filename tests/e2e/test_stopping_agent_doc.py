"""The threads guide's `StoppingHttpAgent` (CopilotKit's stop button on an agent on the page),
compiled from the guide as written and run with the real `@ag-ui/client` 1.0.0 and the 0.0.59
CopilotKit bundles: its stop ends the run on the server, and a stop for its run after that run
ended leaves the thread's next run going."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyox_agents import Agent, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore
from tests.e2e.test_demo_page import playwright_ready

__all__ = ["playwright_ready"]  # (frontend-demo's TypeScript compiles the guide's block)

GUIDE = Path(__file__).parents[2] / "docs" / "guides" / "threads.md"
TOOL_SECONDS = 30.0


def guide_source() -> str:
    """The guide's TypeScript block that defines `StoppingHttpAgent`."""
    blocks = re.findall(r"```ts\n(.*?)```", GUIDE.read_text(), re.S)
    return next(block for block in blocks if "class StoppingHttpAgent" in block)


@pytest.mark.parametrize("client", ["1.0.0", "0.0.59"])
def test_the_guides_stopping_agent_stops_its_own_run_and_only_it(
        client: str, serve: Callable[[Any], str], run_node: Callable[..., dict[str, Any]],
        playwright_ready: None) -> None:
    """Rule: a stop names the run it is for; a run stopped so ends at once, a stop for a run
    that has ended stops nothing else."""

    @tool
    async def wait() -> str:
        """Wait a long time (a stop ends it)."""
        await asyncio.sleep(TOOL_SECONDS)
        return "waited"

    agent = Agent(ScriptedModel([ToolCall("wait", {}), ToolCall("wait", {})]), tools=[wait])
    base = serve(create_app({"a": agent}, store=MemoryStore()))
    result = run_node("stopping_agent_doc.mjs", f"{base}/agents/a/ag-ui",
                      {"threadId": f"t-{uuid.uuid4().hex[:12]}", "client": client,
                       "source": guide_source()})
    assert result["error"] is None, result["error"]
    assert result["stoppedMs"] < TOOL_SECONDS * 1000 / 3, result
    assert result["staleLeftRunning"] is True, "a stop for an ended run stopped the next one"
    assert result["secondStoppedMs"] < TOOL_SECONDS * 1000 / 3, result
