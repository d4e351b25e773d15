"""The todo agent the store-fault tests run, and what they check on its threads.

The agent adds "a", "b", "c" to the shared state, one per step; a `Fault` is set off while "b"
is being added. Used by test_store_outage.py, test_full_disk.py and test_shutdown.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.state.audit import verify_audit
from pyox_agents.state.messages import Message
from pyox_agents.stores.base import Store

ITEMS = ["a", "b", "c"]


def added_so_far(messages: list[Message], tools: list[Any]) -> Any:
    """Add the next of ITEMS not added yet (counting every `add` that succeeded in the
    thread), then say "Done."."""
    done = sum(1 for m in messages if m.role == "tool" and m.content == "added")
    return ToolCall("add", {"text": ITEMS[done]}) if done < len(ITEMS) else "Done."


class Fault:
    """What the test takes away while "b" is added (`begin`), and brings back (`end`)."""

    def __init__(self, begin: Callable[[], None], end: Callable[[], None]) -> None:
        self.begin = begin
        self.end = end
        self.began = False


def todo_agent(fault: Fault) -> Agent:
    """The agent that adds ITEMS one per step and sets `fault` off while "b" is added."""
    @tool
    async def add(ctx: RunContext, text: str) -> str:
        """Add an item."""
        if text == "b" and not fault.began:  # the fault comes while this step runs
            fault.began = True
            await anyio.to_thread.run_sync(fault.begin)
        ctx.state["items"].append(text)
        return "added"

    return Agent(FunctionModel(added_so_far), tools=[add])


def events_of(text: str) -> list[Any]:
    """The `data:` payloads of an SSE body, "[DONE]" as itself."""
    return [json.loads(line[5:]) if line[5:].strip() != "[DONE]" else "[DONE]"
            for line in text.replace("\r\n", "\n").split("\n") if line.startswith("data:")]


def ag_ui_body(thread: str, text: str = "go", state: Any = None) -> dict[str, Any]:
    """An AG-UI RunAgentInput saying `text` on `thread`."""
    return {"threadId": thread, "runId": "r1", "protocolVersion": "1.0",
            "state": {"items": []} if state is None else state,
            "messages": [{"id": f"u-{text}", "role": "user", "content": text}]}


def ai_sdk_body(thread: str) -> dict[str, Any]:
    """An AI SDK chat request saying "go" on `thread`."""
    return {"id": thread, "trigger": "submit-message", "state": {"items": []},
            "messages": [{"id": "u-go", "role": "user", "parts": [{"type": "text",
                                                                   "text": "go"}]}]}


def ended_with(protocol: str, events: list[Any], code: str, words: tuple[str, ...]) -> None:
    """The stream's terminal event: AG-UI RUN_ERROR with `code`; AI SDK `error` (its text
    holding one of `words`) + `finish` + `[DONE]`."""
    if protocol == "ag-ui":
        last = events[-1]
        assert last["type"] == "RUN_ERROR" and last["code"] == code, last
        return
    assert events[-1] == "[DONE]", events[-3:]
    assert events[-2]["type"] == "finish", events[-3:]
    error = next(e for e in events if isinstance(e, dict) and e["type"] == "error")
    assert any(w in error["errorText"] for w in words), error


async def run_cut_by_a_store_fault(client: httpx.AsyncClient, url: str, protocol: str
                                   ) -> None:
    """Thread "t"'s first run over `protocol`, during which the store fails: its stream ends
    with a terminal event whose code is `store_unavailable`."""
    path, body = (("ag-ui", ag_ui_body("t")) if protocol == "ag-ui"
                  else ("ai-sdk", ai_sdk_body("t")))
    response = await client.post(f"{url}/agents/todo/{path}", json=body)
    assert response.status_code == 200, response.text
    ended_with(protocol, events_of(response.text), "store_unavailable", ("unreachable", "cannot"))


def last_committed_step(thread: Any) -> list[str]:
    """The items of the `add` calls a thread (GET /threads/{id}) holds a result of; its state
    must be exactly those (nothing half-written)."""
    results = {m["call_id"]: m["content"] for m in thread["messages"] if m["role"] == "tool"}
    added = [c["arguments"]["text"] for m in thread["messages"]
             if m["role"] == "assistant" for c in m["tool_calls"]
             if results.get(c["id"]) == "added"]
    assert added in (["a"], ["a", "b"])  # the last committed step, whole
    assert thread["state"] == {"items": added}  # nothing half-written
    return added


def approve_the_question(last: Any) -> dict[str, Any]:
    """The run cut mid-call ended asking about that call (its outcome is unknown, so it is
    never run again unasked): the AG-UI body that approves it on thread "t"."""
    assert last["type"] == "RUN_FINISHED" and last["outcome"]["type"] == "interrupt", last
    (asked,) = last["outcome"]["interrupts"]
    assert "outcome unknown" in asked["message"]
    return {**ag_ui_body("t", "yes", {}), "resume": [
        {"interruptId": asked["id"], "status": "resolved", "payload": {"approved": True}}]}


def finished(last: Any) -> None:
    """The run went on to its end."""
    assert last["type"] == "RUN_FINISHED" and last["outcome"]["type"] == "success", last


async def next_message_continues(client: httpx.AsyncClient, url: str, added: list[str]
                                 ) -> None:
    """The next message on thread "t" continues the cut run, as after a crash: a call whose
    outcome the fault hid (the "b" whose step was not committed) is asked about, never run
    again unasked; approved, it runs, and the run goes on to its end."""
    response = await client.post(f"{url}/agents/todo/ag-ui", json=ag_ui_body("t", "again", {}))
    assert response.status_code == 200, response.text
    last = events_of(response.text)[-1]
    if added == ["a"]:
        response = await client.post(f"{url}/agents/todo/ag-ui",
                                     json=approve_the_question(last))
        assert response.status_code == 200, response.text
        last = events_of(response.text)[-1]
    finished(last)


def verify_runs(store: Store, thread: str) -> None:
    """Every run's audit chain on `thread` verifies."""
    entries = store.load_thread(thread).entries
    for run_id in {str(e["content"]) for e in entries if e.get("kind") == "run_start"
                   and e["content"]}:
        verify_audit(store, run_id)  # type: ignore[arg-type]
