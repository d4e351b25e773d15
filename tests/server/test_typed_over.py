"""A message typed while an approval or a question waits never breaks a thread: the pending
call is declined ("the person sent a new message instead of answering"), the message goes into
the conversation right after that result, the model reads both, and the thread goes on; the
next message is an ordinary one (DESIGN.md, "What a request's messages mean"). Going back in
the conversation instead (an edit, a regenerate) cancels the paused run and branches.

Before, over the AI SDK the server asked for the approval again in a new message, the client
failed with "No tool invocation found for tool call ID", and every later message failed so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.state.messages import Message
from pyox_agents.stores import SQLiteStore

BOUGHT: list[str] = []
TYPED_OVER = "the person sent a new message instead of answering"


@tool(approval=True)
def checkout(ctx: RunContext) -> str:
    """Pay for the cart (a person approves first)."""
    BOUGHT.append("cart")
    return "paid"


@tool
async def pick_size(ctx: RunContext) -> str:
    """Ask the person for a size."""
    return str(await ctx.ask_person("Which size?", {"enum": ["S", "M"]}))


def model(messages: list[Message], tools: Any) -> Any:
    """Buys or asks when told to; otherwise says what it read last."""
    last = messages[-1]
    if last.role == "user" and last.content == "buy":
        return ToolCall("checkout", {})
    if last.role == "user" and last.content == "size":
        return ToolCall("pick_size", {})
    tool_texts = [m.content for m in messages if m.role == "tool"]
    return f"read {last.content!r} after {tool_texts[-1] if tool_texts else 'no tool'!r}"


@pytest.fixture
def url(live_server: Any, tmp_path: Path) -> str:
    BOUGHT.clear()
    app = create_app({"shop": Agent(FunctionModel(model), tools=[checkout, pick_size])},
                     store=SQLiteStore(tmp_path / "t.db"))
    return str(live_server(app))


def thread(url: str, thread_id: str) -> list[tuple[str, str]]:
    got = httpx.get(f"{url}/threads/{thread_id}").json()["messages"]
    return [(m["role"], m["content"]) for m in got]


# -- AI SDK: ai 7 sends the typed message at once, after the unanswered assistant message --


def ai_sdk(url: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    response = httpx.post(f"{url}/agents/shop/ai-sdk", timeout=30, json={
        "id": "c", "messages": messages, "trigger": "submit-message"})
    assert response.status_code == 200, response.text
    return [json.loads(line[5:]) for line in response.text.splitlines()
            if line.startswith("data: {")]


def ui_user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def asked_message(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant UIMessage as the client holds it: its tool part waiting for approval."""
    (request,) = [c for c in chunks if c["type"] == "tool-approval-request"]
    (called,) = [c for c in chunks if c["type"] == "tool-input-available"]
    return {"id": chunks[0]["messageId"], "role": "assistant", "parts": [
        {"type": "step-start"},
        {"type": f"tool-{called['toolName']}", "toolCallId": called["toolCallId"],
         "state": "approval-requested", "input": called["input"],
         "approval": {"id": request["approvalId"]}}]}


def test_ai_sdk_a_message_typed_over_an_approval_declines_it_and_is_answered(url: str) -> None:
    u1 = ui_user("m1", "buy")
    a1 = asked_message(ai_sdk(url, [u1]))
    chunks = ai_sdk(url, [u1, a1, ui_user("m2", "add eggs first")])
    kinds = [c["type"] for c in chunks]
    assert "tool-approval-request" not in kinds  # not asked again
    assert not [c for c in chunks if c.get("toolCallId")]  # nothing for the old message's part
    assert chunks[0]["messageId"] != a1["id"]  # a new assistant message
    text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    assert text == ("read 'add eggs first' after 'denied by a person: the person sent a new "
                    "message instead of answering'")
    assert BOUGHT == []
    kept = thread(url, "c")
    assert [r for r, _ in kept] == ["user", "assistant", "tool", "user", "assistant"]
    assert kept[3] == ("user", "add eggs first")
    loaded = httpx.get(f"{url}/agents/shop/ai-sdk/c/messages").json()  # a reload, then on
    later = ai_sdk(url, [*loaded, ui_user("m3", "thanks")])
    assert "read 'thanks'" in "".join(c["delta"] for c in later if c["type"] == "text-delta")


def test_ai_sdk_a_message_typed_over_a_question_declines_it(url: str) -> None:
    u1 = ui_user("m1", "size")
    a1 = asked_message(ai_sdk(url, [u1]))
    chunks = ai_sdk(url, [u1, a1, ui_user("m2", "never mind")])
    text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    assert text == ("read 'never mind' after 'denied by a person: the person sent a new "
                    "message instead of answering'")
    assert thread(url, "c")[-2:] == [("user", "never mind"), ("assistant", text)]


# -- AG-UI: a client's app answers the interrupt as cancelled and sends the message with it --


def ag_ui(url: str, messages: list[dict[str, Any]], **fields: Any) -> list[dict[str, Any]]:
    body = {"threadId": "t", "runId": "r", "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": messages, **fields}
    response = httpx.post(f"{url}/agents/shop/ag-ui", json=body, timeout=30)
    assert response.status_code == 200, response.text
    return [json.loads(line[5:]) for line in response.text.splitlines()
            if line.startswith("data:")]


def held(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [e for e in events
                                      if e["type"] == "MESSAGES_SNAPSHOT"][-1]["messages"]
    return messages


@pytest.mark.parametrize("resume", ["cancelled", "none"])
def test_ag_ui_a_message_typed_over_an_interrupt_declines_it_and_is_answered(
        url: str, resume: str) -> None:
    """`@ag-ui/client` sends no run over a pending interrupt unless `resume` addresses it: an
    app sends `status: "cancelled"` with the typed message; an app that clears
    `pendingInterrupts` (or CopilotKit's human-in-the-loop page) sends none."""
    first = ag_ui(url, [{"id": "u1", "role": "user", "content": "buy"}])
    (interrupt,) = first[-1]["outcome"]["interrupts"]
    extra = {"resume": [{"interruptId": interrupt["id"], "status": "cancelled"}]} \
        if resume == "cancelled" else {}
    events = ag_ui(url, [*held(first), {"id": "u2", "role": "user", "content": "wait"}],
                   **extra)
    assert events[-1]["type"] == "RUN_FINISHED"
    assert events[-1].get("outcome", {}).get("type", "success") == "success"
    assert BOUGHT == []
    kept = thread(url, "t")
    assert [r for r, _ in kept] == ["user", "assistant", "tool", "user", "assistant"]
    assert kept[3] == ("user", "wait")
    assert kept[4][1] == f"read 'wait' after 'denied by a person: {TYPED_OVER}'"  # either way


@pytest.mark.parametrize("branch", ["regenerate", "edit"])
def test_going_back_to_a_message_typed_over_an_approval_keeps_its_decline(
        url: str, branch: str) -> None:
    """Regenerating the typed message, or editing it, branches after the decline: the model
    reads it again and answers; the approval is not asked again (it was, and over the AI SDK
    the client then failed with "No tool invocation found for tool call ID")."""
    first = ag_ui(url, [{"id": "u1", "role": "user", "content": "buy"}])
    (interrupt,) = first[-1]["outcome"]["interrupts"]
    typed = held(ag_ui(url, [*held(first), {"id": "u2", "role": "user", "content": "wait"}],
                       resume=[{"interruptId": interrupt["id"], "status": "cancelled"}]))
    at = [m["id"] for m in typed].index("u2")
    body = typed[:at + 1] if branch == "regenerate" else [
        *typed[:at], {"id": "u2", "role": "user", "content": "wait!"}]
    events = ag_ui(url, body)
    assert events[-1].get("outcome", {}).get("type", "success") == "success"
    said = "wait" if branch == "regenerate" else "wait!"
    assert thread(url, "t") == [
        ("user", "buy"), ("assistant", ""), ("tool", f"denied by a person: {TYPED_OVER}"),
        ("user", said), ("assistant", f"read {said!r} after 'denied by a person: {TYPED_OVER}'")]
    assert BOUGHT == []


@pytest.mark.parametrize("branch", ["regenerate", "edit"])
def test_ag_ui_going_back_with_the_interrupt_cancelled_branches_and_asks_nothing(
        url: str, branch: str) -> None:
    """`@ag-ui/client` runs over an open interrupt only with `resume` addressing it: a page that
    regenerates or edits an earlier message then sends it cancelled. That goes back (the paused
    run is cancelled, the thread branches), as it does without `resume`; it resumed the paused
    run before, and the thread did not branch."""
    first = held(ag_ui(url, [{"id": "u1", "role": "user", "content": "hello"}]))
    second = ag_ui(url, [*first, {"id": "u2", "role": "user", "content": "buy"}])
    (interrupt,) = second[-1]["outcome"]["interrupts"]
    body = first[:1] if branch == "regenerate" else [
        {"id": "u1", "role": "user", "content": "hello again"}]
    events = ag_ui(url, body, resume=[{"interruptId": interrupt["id"], "status": "cancelled"}])
    assert events[-1].get("outcome", {}).get("type", "success") == "success"
    said = "hello" if branch == "regenerate" else "hello again"
    assert thread(url, "t") == [("user", said), ("assistant", f"read {said!r} after 'no tool'")]
    assert BOUGHT == []


def test_ai_sdk_regenerating_a_message_typed_over_an_approval_answers_it_again(url: str) -> None:
    u1 = ui_user("m1", "buy")
    a1 = asked_message(ai_sdk(url, [u1]))
    ai_sdk(url, [u1, a1, ui_user("m2", "add eggs first")])
    response = httpx.post(f"{url}/agents/shop/ai-sdk", timeout=30, json={
        "id": "c", "messages": [u1, a1, ui_user("m2", "add eggs first")],
        "trigger": "regenerate-message"})
    chunks = [json.loads(line[5:]) for line in response.text.splitlines()
              if line.startswith("data: {")]
    assert not [c for c in chunks if c.get("toolCallId")]  # nothing for the old message's part
    assert thread(url, "c")[2:] == [
        ("tool", f"denied by a person: {TYPED_OVER}"), ("user", "add eggs first"),
        ("assistant", f"read 'add eggs first' after 'denied by a person: {TYPED_OVER}'")]


def test_going_back_over_a_pending_approval_cancels_it_and_branches(url: str) -> None:
    first = ag_ui(url, [{"id": "u1", "role": "user", "content": "hello"}])
    second = ag_ui(url, [*held(first), {"id": "u2", "role": "user", "content": "buy"}])
    assert second[-1]["outcome"]["type"] == "interrupt"
    ag_ui(url, [*held(first)[:1], {"id": "u1", "role": "user", "content": "hello again"}][1:])
    assert thread(url, "t") == [("user", "hello again"),
                                ("assistant", "read 'hello again' after 'no tool'")]
    runs = httpx.get(f"{url}/threads/t").json()
    assert runs["running"] is False
    again = ag_ui(url, [{"id": "u1", "role": "user", "content": "hello again"},
                        {"id": "u3", "role": "user", "content": "buy"}])
    assert again[-1]["outcome"]["type"] == "interrupt"  # an ordinary thread again
    assert BOUGHT == []


@pytest.mark.parametrize("stale", [True, False], ids=["declined", "approved again"])
def test_ag_ui_an_answer_to_an_interrupt_answered_already_is_refused(url: str,
                                                                     stale: bool) -> None:
    """Rule: a stale tab (or the same request sent again) that answers an interrupt another
    tab answered gets 422 and changes nothing: the approval is not asked again, the tool does
    not run twice, the thread gets no second answer (as on the AI SDK). It was run as a new
    request: a second, identical answer, and a decline dropped without a word. An answer the
    person types over the old interrupt still goes on (the protocol ignores the stale entry)."""
    first = ag_ui(url, [{"id": "u1", "role": "user", "content": "buy"}])
    (interrupt,) = first[-1]["outcome"]["interrupts"]
    answer = [{"interruptId": interrupt["id"], "status": "resolved",
               "payload": {"approved": True}}]
    ag_ui(url, held(first), resume=answer)  # tab 1 approves
    answered = thread(url, "t")
    again = [{**answer[0], "payload": {"approved": not stale}}]
    response = httpx.post(f"{url}/agents/shop/ag-ui", timeout=30, json={
        "threadId": "t", "runId": "r", "state": {}, "tools": [], "context": [],
        "forwardedProps": {}, "messages": held(first), "resume": again})
    assert response.status_code == 422, response.text
    assert response.json()["field"] == "resume"
    assert "no run waiting for an answer" in response.json()["error"]
    assert thread(url, "t") == answered and BOUGHT == ["cart"]
    typed = ag_ui(url, [*held(first), {"id": "u2", "role": "user", "content": "thanks"}],
                  resume=again)
    assert typed[-1].get("outcome", {}).get("type", "success") == "success"
    assert thread(url, "t") == [*answered, ("user", "thanks"),
                                ("assistant", "read 'thanks' after 'paid'")]
