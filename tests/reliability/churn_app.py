"""The app each server process of the churn test serves (`uvicorn tests.reliability.churn_app:app`).

Configured from the environment: `PYOX_CHURN_REDIS` (the Redis every process shares),
`PYOX_CHURN_PREFIX` (its keys), `PYOX_CHURN_EFFECTS` (a folder: each run of `charge` appends a
line to the file of what it charged, so the test counts side effects across processes).

One agent, `worker`, whose model is a pure function of the thread (any process can take a run
over): the thread's first user message is a plan, `note:<text>` or `charge:<what>` steps
separated by spaces; the model calls the tool of the next step not yet done (counting the
successful tool results of the whole thread), then says "done". Later user messages
("continue") only ask the thread to go on.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.stores.redis import RedisStore

EFFECTS = Path(os.environ.get("PYOX_CHURN_EFFECTS", "."))


@tool
async def note(ctx: RunContext, text: str) -> str:
    """Add `text` to the shared state's notes."""
    await anyio.sleep(0.05)  # a step takes a while: kills land inside runs
    ctx.state.setdefault("notes", []).append(text)
    return "noted"


@tool(approval=True)
def charge(ctx: RunContext, what: str) -> str:
    """Charge `what`, once a person approved it: a side effect outside the state."""
    with (EFFECTS / what).open("a") as effects:
        effects.write(f"{os.getpid()}\n")
    ctx.state["charged"] = [*ctx.state.get("charged", []), what]
    return "charged"


def plan_model(messages: Any, tools: Any) -> Any:
    """The next step of the thread's plan not yet done, or "done"."""
    plan = next(m for m in messages if m.role == "user").content.split()
    done = sum(1 for m in messages if m.role == "tool" and m.content in ("noted", "charged"))
    if done < len(plan):
        kind, _, value = plan[done].partition(":")
        return ToolCall(kind, {"text" if kind == "note" else "what": value})
    return "done"


store = RedisStore(os.environ["PYOX_CHURN_REDIS"], prefix=os.environ["PYOX_CHURN_PREFIX"])
app = create_app({"worker": Agent(FunctionModel(plan_model), tools=[note, charge])},
                 store=store, keepalive=1.0, lease_ttl=2.0)
