"""A child process for the subagent crash test: start or resume a run whose `buyer` subagent
pays (a tool that needs approval), on a SQLite file.

    python subagent_crash_child.py DB MARKERS ACTION [RUN_ID]

ACTION is "start", "resume" (after a crash) or "approve". Each time the body of `pay` starts,
it appends a line to MARKERS, then sleeps `PYOX_TEST_TOOL_SLEEP` seconds (0 if unset), so the
test can kill it mid-call. It prints `{"run_id"}` once the run has started, then `{"outcome",
"pending_tool", "pending_prompt", "answer"}` when it ends.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from pyox_agents import Agent, Message, RunContext, RunFinished, RunStarted, ToolCall, tool
from pyox_agents.models import FunctionModel
from pyox_agents.stores import SQLiteStore


def shop(markers: Path, store: SQLiteStore) -> Agent:
    delay = float(os.environ.get("PYOX_TEST_TOOL_SLEEP", "0"))

    @tool(approval=True)
    def pay(ctx: RunContext, amount: int) -> str:
        """Pay `amount`."""
        with markers.open("a") as file:
            file.write(f"{os.getpid()}\n")
        ctx.state["paid"] += amount
        time.sleep(delay)
        return f"paid {amount}"

    def buyer_model(messages: list[Message], tools: list[Any]) -> Any:
        results = [m for m in messages if m.role == "tool"]
        return f"buyer saw: {results[-1].content}" if results else ToolCall("pay", {"amount": 3})

    def parent_model(messages: list[Message], tools: list[Any]) -> Any:
        results = [m for m in messages if m.role == "tool" and m.name == "buyer"]
        if results:
            return f"parent saw: {results[-1].content}"
        return ToolCall("buyer", {"task": "buy it"})

    buyer = Agent(FunctionModel(buyer_model), tools=[pay], name="buyer")
    return Agent(FunctionModel(parent_model), tools=[buyer.as_tool(state="write")], store=store)


def say(value: Any) -> None:
    print(json.dumps(value), flush=True)


async def main(db: str, markers: Path, action: str, run_id: str | None) -> None:
    agent = shop(markers, SQLiteStore(db))
    if action == "start":
        events = agent.stream("buy it", state={"paid": 0})
    else:
        assert run_id is not None
        events = agent.stream_resume(run_id, approve=True if action == "approve" else None)
    last: Any = None
    async for event in events:
        if isinstance(event, RunStarted) and run_id is None:
            run_id = event.run_id
        if isinstance(event, RunStarted):
            say({"run_id": run_id})
        last = event
    assert isinstance(last, RunFinished) and run_id is not None, repr(last)
    pending = (await agent.load_run(run_id)).pending
    say({"outcome": last.outcome, "answer": last.answer, "state": last.state,
         "pending_tool": pending.tool if pending else None,
         "pending_prompt": pending.prompt if pending else None})


if __name__ == "__main__":
    db_path, marker_file, run_action, *rest = sys.argv[1:]
    anyio.run(main, db_path, Path(marker_file), run_action, rest[0] if rest else None)
