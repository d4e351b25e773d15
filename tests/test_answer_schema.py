"""A person's answer to `ctx.ask_person(prompt, schema=...)` is held to its schema on every path
that resumes a run (AG-UI, the AI SDK, `Agent.resume`), by one validator, before the tool gets
it (issue "nobody acts where they don't belong": over the AI SDK, a tool received
"savings' OR '1'='1" for an enum of two values)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.state._schemas import answer_problems
from pyox_agents.stores import MemoryStore

ACCOUNT = {"type": "string", "enum": ["checking", "savings"]}
RECEIVED: list[Any] = []


@tool
async def transfer(ctx: RunContext) -> str:
    """Move money to an account the person picks."""
    account = await ctx.ask_person("Which account?", schema=ACCOUNT)
    RECEIVED.append(account)
    return f"moved to {account}"


def agent(store: Any = None) -> Agent:
    return Agent(ScriptedModel([ToolCall("transfer", {}), "Done."] * 2), tools=[transfer],
                 store=store)


def test_agent_resume_refuses_an_answer_outside_its_schema() -> None:
    RECEIVED.clear()
    bank = agent(MemoryStore())
    paused = bank.run("move it")
    with pytest.raises(ValueError, match=r"does not match its schema: the answer: "
                                         r"\"savings' OR '1'='1\" is not one of"):
        bank.resume(paused.run_id, approve=True, answer="savings' OR '1'='1")
    assert RECEIVED == []
    assert bank.resume(paused.run_id, approve=True, answer="savings").answer == "Done."
    assert RECEIVED == ["savings"]


def test_an_ag_ui_answer_outside_its_schema_is_a_422(live_server: Any) -> None:
    RECEIVED.clear()
    url = live_server(create_app({"bank": agent()}, store=MemoryStore()))
    message = {"id": "u1", "role": "user", "content": "move it"}
    body = {"threadId": "t", "runId": "r", "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [message]}
    with httpx.Client(base_url=url, timeout=30) as http:
        first = http.post("/agents/bank/ag-ui", json=body).text
        interrupt = first.split('"interrupts":[{"id":"')[1].split('"')[0]
        resume = [{"interruptId": interrupt, "status": "resolved", "payload": "savings' OR 1"}]
        refused = http.post("/agents/bank/ag-ui", json={**body, "resume": resume})
        assert refused.status_code == 422, refused.text
        assert "is not one of ['checking', 'savings']" in refused.json()["error"]
        resume[0]["payload"] = "checking"
        done = http.post("/agents/bank/ag-ui", json={**body, "resume": resume})
        assert done.status_code == 200 and "moved to checking" in done.text
    assert RECEIVED == ["checking"]


def test_an_ai_sdk_answer_outside_its_schema_is_a_422(live_server: Any) -> None:
    """`ai` 7: the page answers with `addToolApprovalResponse({id, approved, reason})`, and the
    chat goes on in the same assistant message, its tool part `approval-responded`."""
    RECEIVED.clear()
    url = live_server(create_app({"bank": agent()}, store=MemoryStore()))
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "move it"}]}

    def post(messages: list[dict[str, Any]], **extra: Any) -> httpx.Response:
        return http.post("/agents/bank/ai-sdk", content=json.dumps(
            {"id": "chat", "messages": messages, "trigger": "submit-message", **extra}),
            headers={"content-type": "application/json"})

    def answered(first: str, reason: str) -> list[dict[str, Any]]:
        chunks = [json.loads(line[5:]) for line in first.splitlines()
                  if line.startswith("data: {")]
        (asked,) = [c for c in chunks if c["type"] == "tool-approval-request"]
        part = {"type": "tool-transfer", "toolCallId": asked["toolCallId"], "input": {},
                "state": "approval-responded",
                "approval": {"id": asked["approvalId"], "approved": True, "reason": reason}}
        assistant = {"id": chunks[0]["messageId"], "role": "assistant",
                     "parts": [{"type": "step-start"}, part]}
        return [user, assistant]

    with httpx.Client(base_url=url, timeout=30) as http:
        first = post([user]).text
        refused = post(answered(first, "savings' OR '1'='1"), messageId="x")
        assert refused.status_code == 422, refused.text
        assert "is not one of ['checking', 'savings']" in refused.text
        done = post(answered(first, "savings"))
        assert done.status_code == 200 and "moved to savings" in done.text
    assert RECEIVED == ["savings"]


def test_a_question_whose_schema_is_not_a_json_schema_fails_the_tool_saying_so() -> None:
    @tool
    async def ask(ctx: RunContext) -> str:
        """Ask with a broken schema."""
        return str(await ctx.ask_person("Size?", schema={"type": "sizes"}))

    result = Agent(ScriptedModel([ToolCall("ask", {}), "ok"]), tools=[ask]).run("go")
    assert result.conversation.pending_calls == ()
    (error,) = [e for e in result.conversation.history if e.kind == "tool_result"]
    assert error.outcome == "error"


@pytest.mark.parametrize(("value", "schema", "problem"), [
    ("x", {"type": "string"}, None),
    (1, {"type": "string"}, "the answer: 1 is not of type 'string'"),
    (True, {"type": "integer"}, "the answer: True is not of type 'integer'"),
    ({"a": 1}, {"type": "object", "required": ["a", "b"]},
     "the answer: 'b' is a required property"),
    ({"a": "x"}, {"properties": {"a": {"type": "number"}}},
     "the answer at /a: 'x' is not of type 'number'"),
    ({"a/b": 1, "z": 0}, {"properties": {"a/b": {"type": "string"}}},
     "the answer at /a~1b: 1 is not of type 'string'"),
    ([1, "x"], {"items": {"type": "integer"}}, "the answer at /1: 'x' is not of type 'integer'"),
    ("c", {"enum": ["a", "b"]}, "the answer: 'c' is not one of ['a', 'b']"),
    (None, {"type": ["string", "null"]}, None),
    ("ab", {"type": "string", "minLength": 3, "pattern": "^a"},
     "the answer: 'ab' is too short"),
])
def test_an_answers_problems_name_their_place(value: Any, schema: dict[str, Any],
                                              problem: str | None) -> None:
    assert answer_problems(value, schema) == ([] if problem is None else [problem])
