"""The ASGI app one uvicorn process of the crash-and-continue tests serves.

Configured from the environment:

- `PYOX_CRASH_STORE`: a SQLite file, or a Redis URL (`redis://...`, keys under
  `PYOX_CRASH_PREFIX`); `PYOX_CRASH_LEASE_TTL`: the lease time to live with Redis.
- `PYOX_CRASH_EFFECTS`: the file each tool call appends its side effect to, one JSON line
  `{"thread", "tool", "what", "key", "pid"}` as its body starts.
- `PYOX_CRASH_VICTIM`: "1" in the process the test kills: there, a step whose value ends with
  "!" does not return (its process is killed during it); elsewhere it returns at once.

One agent, `worker`, whose model is a pure function of the conversation: the last user message
is a plan of words; each `idem:<what>` or `plain:<what>` is a call of the idempotent tool `idem`
or of the plain tool `plain`, made in order (counting the tool results after that message);
then it says "done: <the message>". A message without such words is answered at once.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models.scripted import FunctionModel
from pyox_agents.server import create_app
from pyox_agents.state.messages import Message, ToolCall
from pyox_agents.stores import SQLiteStore
from pyox_agents.stores.redis import RedisStore

EFFECTS = Path(os.environ.get("PYOX_CRASH_EFFECTS", "effects.jsonl"))
VICTIM = os.environ.get("PYOX_CRASH_VICTIM") == "1"
HANG = 600.0
"""How long a marked step takes in the process the test kills: it is killed long before."""


def _count(line: dict[str, Any]) -> None:
    """Append one side effect to the file (one short write: lines of calls never interleave)."""
    with EFFECTS.open("a") as file:
        file.write(json.dumps(line) + "\n")


async def _effect(ctx: RunContext, name: str, what: str) -> str:
    _count({"thread": ctx.conversation.id, "tool": name, "what": what,
            "key": ctx.idempotency_key, "pid": os.getpid()})
    if VICTIM and what.endswith("!"):
        await asyncio.sleep(HANG)
    return f"{name} {what}"


@tool(idempotent=True)
async def idem(ctx: RunContext, what: str) -> str:
    """Do `what`; doing it again with the same idempotency key changes nothing."""
    return await _effect(ctx, "idem", what)


@tool
async def plain(ctx: RunContext, what: str) -> str:
    """Do `what` (not idempotent: each run is a new side effect)."""
    return await _effect(ctx, "plain", what)


def plan_model(messages: list[Message], tools: Any) -> Any:
    """The next call of the last user message's plan, or the answer to that message."""
    last_user = max(i for i, m in enumerate(messages) if m.role == "user")
    text = messages[last_user].content
    steps = [word.partition(":") for word in text.split() if ":" in word]
    done = sum(1 for m in messages[last_user + 1:] if m.role == "tool")
    if done < len(steps):
        name, _, what = steps[done]
        return ToolCall(name, {"what": what})
    return f"done: {text}"


_where = os.environ["PYOX_CRASH_STORE"]
store: Any = (RedisStore(_where, prefix=os.environ["PYOX_CRASH_PREFIX"])
              if _where.startswith("redis://") else SQLiteStore(_where))
agent = Agent(FunctionModel(plan_model), tools=[idem, plain], name="worker")
app = create_app({"worker": agent}, store=store, keepalive=1.0,
                 lease_ttl=float(os.environ.get("PYOX_CRASH_LEASE_TTL", "30")))
