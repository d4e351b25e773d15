"""The ASGI app each uvicorn process of the gapless-reconnect test serves; the processes share one
`redis-server` (`PYOX_GL_REDIS`, keys under `PYOX_GL_PREFIX`).

One agent, `paced`. To "go" it answers in three steps, each some words then a call of `add`
(one item more in the shared state), then some closing words: every word a text delta of its
own, `PACE` seconds apart, so a run lasts long enough for a connection to be cut in it and
resumed. To anything else it adds one item and says "ok" at once (a thread's first run).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import anyio

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, Message, ModelChunk, ModelRequest, ToolCall
from pyox_agents.models.base import TextChunk
from pyox_agents.server import create_app
from pyox_agents.stores.redis import RedisStore

PACE = 0.02
STEPS = 3
WORDS = 8


@tool
def add(ctx: RunContext, item: str) -> str:
    """Add `item` to the shared state's items."""
    items = ctx.state.get("items")
    if items is None:
        ctx.state["items"] = [item]
    else:
        items.append(item)
    return f"added {item}"


def words(step: int | str) -> str:
    """The words of step `step` (each one delta)."""
    return "".join(f"w{step}.{i} " for i in range(WORDS))


def plan(messages: list[Message], tools: Any) -> Any:
    """The next reply: see the module."""
    last_user = max(i for i, m in enumerate(messages) if m.role == "user")
    if messages[last_user].content.strip() != "go":
        return "ok" if messages[-1].role == "tool" else ToolCall("add", {"item": "first"})
    done = sum(1 for m in messages[last_user + 1:] if m.role == "tool")
    if done < STEPS:
        return [words(done), ToolCall("add", {"item": f"item-{done}"})]
    return words("end")


class Paced:
    """`FunctionModel(plan)`, each text delta `PACE` seconds after the one before."""

    name = "paced"

    def __init__(self) -> None:
        self._model = FunctionModel(plan)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        async for chunk in self._model.stream(request):
            if isinstance(chunk, TextChunk):
                await anyio.sleep(PACE)
            yield chunk


store = RedisStore(os.environ["PYOX_GL_REDIS"], prefix=os.environ["PYOX_GL_PREFIX"])
app = create_app({"paced": Agent(Paced(), tools=[add], name="paced")}, store=store,
                 keepalive=1.0, lease_ttl=10.0)
app.state.pyox.runs.owner = f"{os.environ.get('PYOX_GL_NAME', '?')}:{os.getpid()}"
