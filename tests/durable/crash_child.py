"""A child process for the crash-recovery tests: start, resume or answer one run on a SQLite file.

    python crash_child.py DB MARKERS MODE ACTION [RUN_ID]

DB is a SQLite file, or a Redis URL (`redis://...`, keys under `$PYOX_TEST_PREFIX`). MODE is
"idempotent" (the tool is `@tool(idempotent=True)`) or "plain". ACTION is "start" (a new run
whose model calls `charge` once, then answers), "resume" (`stream_resume(run_id)` after a
crash), "approve" or "deny" (`stream_resume(run_id, approve=True/False)`), or what a chat does
next: "message" (load the run's thread, `add_message(Message.user(NEXT_TEXT))`,
`agent.stream(thread)`) and "message-arun" (the same with `await agent.arun(thread)`).
Each time the body of `charge` starts, it appends a JSON line `{"key", "attempt", "pid"}` to
MARKERS/started, then sleeps `PYOX_TEST_TOOL_SLEEP` seconds (0 if unset), so the parent can
kill it mid-call.

The child prints JSON lines on stdout: `{"run_id": ...}` as soon as the run has started (the run
is saved by then), and `{"status", "outcome", "answer", "tool_messages", "last_request"}` when it
ends, where `tool_messages` are the tool results the model read in this process and
`last_request` the `[role, content]` of the messages of its last model request ([] for none).
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
from pyox_agents.models import ScriptedModel
from pyox_agents.stores import SQLiteStore
from pyox_agents.stores.redis import RedisStore

FINAL_TEXT = "Charged 5 euros."
GOAL = "charge the customer 5 euros"
NEXT_TEXT = "and send the receipt"


def make_charge(markers: Path, idempotent: bool) -> Any:
    """The `charge` tool: record that its body started, then take PYOX_TEST_TOOL_SLEEP seconds."""
    delay = float(os.environ.get("PYOX_TEST_TOOL_SLEEP", "0"))

    def charge(ctx: RunContext, amount: int) -> str:
        """Charge the customer.

        Args:
            amount: euros to charge.
        """
        started = markers / "started"
        attempt = len(started.read_text().splitlines()) + 1 if started.exists() else 1
        with started.open("a") as file:
            line = {"key": ctx.idempotency_key, "attempt": attempt, "pid": os.getpid()}
            file.write(json.dumps(line) + "\n")
        ctx.state["charges"].append(amount)
        time.sleep(delay)
        return f"charged {amount}"

    return tool(idempotent=idempotent)(charge)


def say(value: Any) -> None:
    print(json.dumps(value), flush=True)


async def main(db: str, markers: Path, mode: str, action: str, run_id: str | None) -> None:
    charge = make_charge(markers, idempotent=mode == "idempotent")
    if action == "start":
        model = ScriptedModel([ToolCall("charge", {"amount": 5}), FINAL_TEXT])
    else:  # the first reply (the call) was given before the crash; only the answer is left
        model = ScriptedModel([FINAL_TEXT])
    store: Any = (RedisStore(db, prefix=os.environ["PYOX_TEST_PREFIX"])
                  if db.startswith("redis://") else SQLiteStore(db))
    agent = Agent(model, tools=[charge], store=store)
    if action == "start":
        events = agent.stream(GOAL, state={"charges": []})
    elif action in ("message", "message-arun"):
        assert run_id is not None, "message needs the RUN_ID of the thread's last run"
        thread = await store.aload(store.run_thread(run_id))
        thread.add_message(Message.user(NEXT_TEXT))
        if action == "message":
            events = agent.stream(thread)
        else:
            result = await agent.arun(thread)
            events = _replay(result.events)
    else:
        assert run_id is not None, "resume, approve and deny need a RUN_ID"
        approve = {"resume": None, "approve": True, "deny": False}[action]
        events = agent.stream_resume(run_id, approve=approve)
    last: Any = None
    async for event in events:
        if isinstance(event, RunStarted):
            run_id = event.run_id
            say({"run_id": run_id})
        last = event
    if not isinstance(last, RunFinished) or run_id is None:
        say({"status": "failed", "event": repr(last)})
        return
    saved = await agent.load_run(run_id)
    seen = [m.content for request in model.requests for m in request.messages if m.role == "tool"]
    asked = model.requests[-1].messages if model.requests else ()
    say({"status": saved.status.value, "outcome": last.outcome, "answer": last.answer,
         "tool_messages": seen, "last_request": [[m.role, m.content] for m in asked],
         "state": last.state})


async def _replay(events: Any) -> Any:
    for event in events:
        yield event


if __name__ == "__main__":
    db_path, marker_dir, run_mode, run_action, *rest = sys.argv[1:]
    anyio.run(main, db_path, Path(marker_dir), run_mode, run_action, rest[0] if rest else None)
