"""An approval a new message left unanswered is asked again by the thread's next run, and that
answer is taken: found by the churn test (a client whose stream was cut before it saw the
question sends its message again), where answering the question again was a 500
(`journal.answered` found no call in flight: the new run had not adopted the open call)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.servers import serving

pytestmark = pytest.mark.anyio


def last_event(text: str) -> Any:
    return [json.loads(x[5:]) for x in text.splitlines() if x.startswith("data:")][-1]


async def test_an_approval_asked_again_by_a_new_run_is_answered_and_runs_once(
    tmp_path: Path
) -> None:
    ran: list[str] = []

    @tool(approval=True)
    def charge(ctx: RunContext, what: str) -> str:
        """Charge `what` once a person approved it."""
        ran.append(what)
        return "charged"

    def script(messages: Any, tools: Any) -> Any:
        done = any(m.role == "tool" and m.content == "charged" for m in messages)
        return "done" if done else ToolCall("charge", {"what": "x"})

    store = SQLiteStore(tmp_path / "s.db")
    app = create_app({"a": Agent(FunctionModel(script), tools=[charge])}, store=store)

    def body(n: int, resume: Any = None) -> dict[str, Any]:
        sent = {"threadId": "t", "runId": f"r{n}", "protocolVersion": "1.0", "state": {},
                "messages": [{"id": f"u{n}", "role": "user", "content": "charge x"}]}
        return {**sent, "resume": resume} if resume else sent

    async with serving(app) as url, httpx.AsyncClient(timeout=30) as client:
        asked = last_event((await client.post(f"{url}/agents/a/ag-ui", json=body(1))).text)
        assert asked["outcome"]["type"] == "interrupt"
        # the client never saw that question: it sends its message again
        again = last_event((await client.post(f"{url}/agents/a/ag-ui", json=body(2))).text)
        assert again["outcome"]["type"] == "interrupt"
        (question,) = again["outcome"]["interrupts"]
        response = await client.post(f"{url}/agents/a/ag-ui", json=body(3, [
            {"interruptId": question["id"], "status": "resolved",
             "payload": {"approved": True}}]))
        assert response.status_code == 200, response.text
        assert last_event(response.text)["outcome"]["type"] == "success"
    assert ran == ["x"]
    store.close()
