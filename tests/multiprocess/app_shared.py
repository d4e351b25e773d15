"""An ASGI app that one uvicorn process of the multiprocess tests serves; several share one Redis
or one PostgreSQL database.

Configured from the environment (the test sets it per process):

- `PYOX_MP_STORE_URL`: the Redis (`redis://...`) or PostgreSQL (`postgresql://...`) every process
  shares; `PYOX_MP_PREFIX`: the key prefix, or the PostgreSQL schema (one per test, so that tests
  never meet).
- `PYOX_MP_LEASE_TTL`: seconds a thread's lease lasts without renewal (short, so that a killed
  process's lease expires within the test).
- `PYOX_MP_GATES`: a folder through which the test and the tools talk (the processes share no
  memory): `wait_gate` writes `<gate>.started` and waits for `<gate>.open`; `risky` writes
  `risky-<what>.ran`.
- `PYOX_MP_NAME`: this process's name ("A", "B"), written into markers, the state and replies.

One agent, `worker`, whose model is a pure function of the conversation (so any process can
take a run over where another left it): the last user message is a plan of steps separated by
spaces, `note:<text>`, `wait:<gate>` or `risky:<what>`; the model calls the tool of the next step
not yet answered (counting the tool results after that user message), then says
"finished <n> steps on <name>".
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from pathlib import Path
from typing import Any

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models.scripted import FunctionModel
from pyox_agents.server import create_app
from pyox_agents.state.messages import Message, ToolCall
from tests.multiprocess.shared_store import shared_store

NAME = os.environ.get("PYOX_MP_NAME", "?")
GATES = Path(os.environ.get("PYOX_MP_GATES", "."))
GATE_LIMIT = 60.0
"""The longest a tool waits for its gate: a bound for a broken test, never reached otherwise."""


@tool
def note(ctx: RunContext, text: str) -> str:
    """Add `text` to the shared state's notes."""
    ctx.state["notes"].append(text)
    ctx.state["by"] = NAME
    return f"noted {text} on {NAME}"


@tool(idempotent=True)
async def wait_gate(ctx: RunContext, gate: str) -> str:
    """Wait until the test opens `gate` (creates `<gate>.open`); waiting again changes nothing,
    so a call a crash cut runs again when its thread goes on."""
    _write_at_once(GATES / f"{gate}.started", f"{NAME} {os.getpid()}")
    deadline = time.monotonic() + GATE_LIMIT
    while not (GATES / f"{gate}.open").exists():
        if time.monotonic() > deadline:
            return f"gate {gate} never opened"
        await asyncio.sleep(0.02)
    return f"gate {gate} opened on {NAME}"


def _write_at_once(path: Path, text: str) -> None:
    """Write `path` whole or not at all: the test polls for it and reads it as soon as it
    exists (a plain write_text makes it empty first, and the test may read that)."""
    partial = path.with_name(path.name + f".{os.getpid()}.part")
    partial.write_text(text)
    os.replace(partial, path)


@tool(approval=True)
def risky(ctx: RunContext, what: str) -> str:
    """Do `what`, once a person approved it."""
    _write_at_once(GATES / f"risky-{what}.ran", f"{NAME} {os.getpid()}")
    ctx.state["done"] = what
    ctx.state["by"] = NAME
    return f"did {what} on {NAME}"


_STEPS = {"note": ("note", "text"), "wait": ("wait_gate", "gate"), "risky": ("risky", "what")}


def plan_model(messages: list[Message], tools: Any) -> Any:
    """The next step of the last user message's plan, or the final text."""
    last_user = max(i for i, m in enumerate(messages) if m.role == "user")
    plan = messages[last_user].content.split()
    done = sum(1 for m in messages[last_user + 1:] if m.role == "tool")
    if done < len(plan):
        kind, _, value = plan[done].partition(":")
        name, argument = _STEPS[kind]
        return ToolCall(name, {argument: value})
    return f"finished {done} steps on {NAME}"



store = shared_store(os.environ["PYOX_MP_STORE_URL"], os.environ["PYOX_MP_PREFIX"])
agent = Agent(FunctionModel(plan_model), tools=[note, wait_gate, risky], name="worker")
lease_ttl = float(os.environ.get("PYOX_MP_LEASE_TTL", "30"))

if "lease_ttl" in inspect.signature(create_app).parameters:  # once create_app takes it
    app = create_app({"worker": agent}, store=store, keepalive=1.0, lease_ttl=lease_ttl)
else:
    # Stopgap: create_app() has no lease_ttl, so its RunService keeps the default of 30 s; set
    # it on the app's RunService (read whenever a lease is taken or renewed) before any request.
    app = create_app({"worker": agent}, store=store, keepalive=1.0)
    app.state.pyox.runs.lease_ttl = lease_ttl
app.state.pyox.runs.owner = f"{NAME}:{os.getpid()}"  # the lease holder names the process
