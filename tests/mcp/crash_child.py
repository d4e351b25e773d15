"""A process that runs an agent with an MCP tool on a SQLite file, to be killed mid-call.

`python crash_child.py DB MARKER plain|idempotent`: prints `{"run_id": ...}` once the run has
started, then calls the server's `once` tool, which hangs until the process is killed.
"""

from __future__ import annotations

import json
import sys

import anyio

from pyox_agents import Agent, RunStarted
from pyox_agents.models.scripted import ScriptedModel
from pyox_agents.stores import SQLiteStore
from tests.mcp.servers import call, stdio


def crash_agent(db: str, marker: str, mode: str, *, resumed: bool = False) -> Agent:
    """The agent of the crash tests: one call of `once`, then "done" (only "done" left to say
    when `resumed`: the call was decided before the crash)."""
    toolset = stdio(name="remote", idempotent={"once"} if mode == "idempotent" else False)
    script = ["done"] if resumed else [call("once", marker=marker), "done"]
    return Agent(ScriptedModel(script), tools=[toolset], store=SQLiteStore(db))


async def main(db: str, marker: str, mode: str) -> None:
    async for event in crash_agent(db, marker, mode).stream("go"):
        if isinstance(event, RunStarted):
            print(json.dumps({"run_id": event.run_id}), flush=True)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
