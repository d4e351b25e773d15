"""A failed run reads the same on both protocols: one public message and code.

The AI SDK stream used to send the exception text (`"the run failed: RuntimeError: ..."`) to the
browser; AG-UI sent a public message. Now both send `public_message(error)` and its code; an
internal error's details stay in the server's log and in the run's record.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from pyox_agents import Agent, ag_ui, ai_sdk
from pyox_agents.models import ScriptedModel
from pyox_agents.state._run_parts import INTERNAL_ERROR_MESSAGE
from pyox_agents.state.history import RunStartEntry
from pyox_agents.stores import MemoryStore

pytestmark = pytest.mark.anyio

SECRET = "the database password is hunter2"


class Broken:
    """A reporter with a bug: the run fails with an internal error."""

    def on_think_start(self, ctx: Any) -> None:
        raise RuntimeError(SECRET)


def body(protocol: str, thread: str) -> dict[str, Any]:
    if protocol == "ag-ui":
        return {"threadId": thread, "runId": "r1", "protocolVersion": "1.0",
                "messages": [{"id": "u1", "role": "user", "content": "hi"}]}
    return {"id": thread, "trigger": "submit-message", "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]}


async def failure(protocol: str, agent: Agent, store: MemoryStore) -> tuple[str, str, str]:
    """(message, code, everything the client received as text) of a failed run."""
    thread = f"t-{protocol}"
    if protocol == "ag-ui":
        events = [json.loads(ag_ui.encode_event(e))
                  async for e in ag_ui.stream(agent, body(protocol, thread), store=store)]
        error = events[-1]
        assert error["type"] == "RUN_ERROR"
        return error["message"], error["code"], json.dumps(events)
    chunks = [c async for c in ai_sdk.stream(agent, body(protocol, thread), store=store)]
    [error] = [c for c in chunks if c["type"] == "data-run-error"]
    assert {"type": "error", "errorText": error["data"]["message"]} in chunks
    return error["data"]["message"], error["data"]["code"], json.dumps(chunks)


@pytest.mark.parametrize("protocol", ["ag-ui", "ai-sdk"])
async def test_an_internal_error_reaches_the_client_as_the_public_message_only(
        protocol: str, caplog: pytest.LogCaptureFixture) -> None:
    store = MemoryStore()
    agent = Agent(ScriptedModel(["never"]), reporters=[Broken()])
    with caplog.at_level(logging.ERROR):
        message, code, sent = await failure(protocol, agent, store)
    assert (message, code) == (INTERNAL_ERROR_MESSAGE, "internal_error")
    assert SECRET not in sent and "RuntimeError" not in sent
    assert any(SECRET in str(record.exc_info[1]) for record in caplog.records
               if record.exc_info), "the details are in the server's log"
    [run_id] = [e.content for e in store.load(f"t-{protocol}").history
                if isinstance(e, RunStartEntry)]
    run = store.load_run(str(run_id))
    assert run.error is not None and SECRET in run.error.message, "and in the run's record"


async def test_both_protocols_send_the_same_message_and_code() -> None:
    for agent in (Agent(ScriptedModel(["never"]), reporters=[Broken()]), Agent(ScriptedModel([]))):
        ag, ai = [await failure(p, agent, MemoryStore()) for p in ("ag-ui", "ai-sdk")]
        assert ag[:2] == ai[:2]
