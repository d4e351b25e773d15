"""The real clients and the server keep the same thread (docs/guides/conversations.md, "What a
request's messages mean (served threads)"), driven step by step by `node/conversation.mjs`:

- `ai` 7's `AbstractChat` (what `useChat` wraps) with `DefaultChatTransport`, sending the whole
  history, and again with the AI SDK's persistence recipe (`prepareSendMessagesRequest` sending
  `{id, message}`, the newest message only); regenerates are `regenerate()` and
  `regenerate({messageId})`, an edit `sendMessage({text, messageId})`, a reload a new chat from
  `GET /agents/{name}/ai-sdk/{id}/messages`;
- `@ag-ui/client` 1.0.0 and 0.0.59 (the one CopilotKit 1.74 bundles), as a page drives them: a
  regenerate or an edit is the page cutting its messages and running (the client has neither), a
  message typed over an interrupt runs with `resume: [{interruptId, status: "cancelled"}]` (the
  client refuses to run otherwise), a reload is the demo's `ConnectingAgent.connectAgent()`.

After every step the client's messages are held against `GET /threads/{id}`: the same roles and
texts in the same order, the user messages under the client's ids (on AG-UI every message under
the same id). A step a client refuses fails the test.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.state.messages import Message
from pyox_agents.stores import SQLiteStore

CLIENTS = ["ai7", "ai7-newest", "agui", "agui0059"]
DECLINED = "denied by a person: the person sent a new message instead of answering"


@tool(approval=True)
def checkout(ctx: RunContext) -> str:
    """Pay for the cart (a person approves first)."""
    return "paid"


@tool
async def pick_size(ctx: RunContext) -> str:
    """Ask the person for a size."""
    return "size " + str(await ctx.ask_person("Which size?", {"enum": ["S", "M"]}))


def shop() -> Agent:
    """Buys (an approval) or asks a size (a question) when told to; otherwise numbers its
    answers, so that a regenerated answer differs from the one it replaces."""
    answers = 0

    def reply(messages: list[Message], tools: Any) -> Any:
        nonlocal answers
        last = messages[-1]
        if last.role == "user" and last.content in ("buy", "size"):
            return ToolCall("checkout" if last.content == "buy" else "pick_size", {})
        answers += 1
        if last.role == "tool":
            return f"#{answers} {last.name} said {last.content!r}"
        return f"#{answers} to {last.content!r}"

    return Agent(FunctionModel(reply), tools=[checkout, pick_size], name="shop")


# -- what each side holds, in one form --------------------------------------------------------


def kept(thread: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The thread's messages as turns: ("user", id, text), or ("assistant", text, tools) for
    what answered it (its assistant and tool messages)."""
    assert "messages" in thread, f"GET /threads failed: {thread}"
    return _turns((m["role"], m["id"], m["content"] or "", [c["name"] for c in m["tool_calls"]])
                  for m in thread["messages"])


def held(client: str, messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The client's messages as the same turns."""
    if client.startswith("ai"):
        return _turns((m["role"], m["id"],
                       "".join(p["text"] for p in m["parts"] if p["type"] == "text"),
                       [p["type"][5:] for p in m["parts"] if p["type"].startswith("tool-")])
                      for m in messages)
    return _turns((m["role"], m["id"], m.get("content") or "",
                   [c["function"]["name"] for c in m.get("toolCalls") or []]) for m in messages)


def _turns(messages: Any) -> list[tuple[Any, ...]]:
    turns: list[tuple[Any, ...]] = []
    for role, message_id, text, tools in messages:
        if role == "user":
            turns.append(("user", message_id, text))
            continue
        text = "" if role == "tool" else text  # a result is not said: tool_results() reads it
        if turns and turns[-1][0] == "assistant":
            _, said, called = turns[-1]
            turns[-1] = ("assistant", said + text, (*called, *tools))
        else:
            turns.append(("assistant", text, tuple(tools)))
    return turns


def texts(turns: list[tuple[Any, ...]]) -> list[str]:
    return [turn[2] if turn[0] == "user" else turn[1] for turn in turns]


def tool_results(thread: dict[str, Any]) -> list[str]:
    return [m["content"] for m in thread["messages"] if m["role"] == "tool"]


Converse = Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]


@pytest.fixture
def converse(serve: Callable[[Any], str], run_node: Callable[..., dict[str, Any]],
             tmp_path: Path) -> Converse:
    """`converse(client, steps)`: the steps run by that client against a new server; each
    step's record, checked: no error, and the client holds what the server keeps."""

    def run(client: str, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
        base = serve(create_app({"shop": shop()}, store=SQLiteStore(tmp_path / f"{client}.db")))
        out = run_node("conversation.mjs", base, {"client": client, "steps": steps})
        assert out["warnings"] == [], out["warnings"]
        for number, step in enumerate(out["steps"]):
            where = f"{client}, step {number} {steps[number]}"
            assert step["error"] is None, f"{where}: {step['error']}"
            assert held(client, step["messages"]) == kept(step["thread"]), where
            if not client.startswith("ai"):  # AG-UI: every message under the server's id
                assert [(m["id"], m["role"]) for m in step["messages"]] == [
                    (m["id"], m["role"]) for m in step["thread"]["messages"]], where
        return list(out["steps"])

    return run


@pytest.mark.parametrize("client", CLIENTS)
def test_a_regenerate_or_an_edit_branches_the_kept_thread_as_the_client_does(
        client: str, converse: Converse) -> None:
    steps = converse(client, [
        {"op": "send", "text": "one"}, {"op": "send", "text": "two"},
        {"op": "regenerate"},                          # the last answer again
        {"op": "regenerate", "user": 0},               # an earlier one: what followed it goes
        {"op": "send", "text": "three"},
        {"op": "edit", "user": 1, "text": "THREE"},    # same id, new text
    ])
    first, _, again, earlier, _, edited = (kept(step["thread"]) for step in steps)
    assert texts(first) == ["one", "#1 to 'one'"]
    assert texts(again) == ["one", "#1 to 'one'", "two", "#3 to 'two'"]
    assert texts(earlier) == ["one", "#4 to 'one'"]
    assert texts(edited) == ["one", "#4 to 'one'", "THREE", "#6 to 'THREE'"]
    assert edited[2][1] == kept(steps[4]["thread"])[2][1]  # the edited message kept its id


@pytest.mark.parametrize("client", CLIENTS)
def test_a_message_typed_over_an_approval_or_a_question_never_breaks_the_thread(
        client: str, converse: Converse) -> None:
    """The pending call is declined, the message answered; regenerating or editing that
    message keeps the decline (the server asked the approval again before); a question
    typed over the same way; the thread goes on."""
    steps = converse(client, [
        {"op": "send", "text": "buy"},
        {"op": "send", "text": "wait"},                # typed over the approval
        {"op": "regenerate"},
        {"op": "edit", "user": 1, "text": "wait!"},
        {"op": "send", "text": "size"},
        {"op": "send", "text": "never mind"},          # typed over the question
        {"op": "send", "text": "thanks"},
    ])
    assert steps[0]["pending"]["tool"] == "checkout"
    assert [step["pending"] for step in steps[1:4]] == [None] * 3
    assert texts(kept(steps[1]["thread"])) == ["buy", "", "wait", "#1 to 'wait'"]
    assert texts(kept(steps[2]["thread"])) == ["buy", "", "wait", "#2 to 'wait'"]
    assert texts(kept(steps[3]["thread"])) == ["buy", "", "wait!", "#3 to 'wait!'"]
    assert tool_results(steps[3]["thread"]) == [DECLINED]
    assert steps[4]["pending"]["tool"] == "pick_size"
    last = steps[-1]["thread"]
    assert texts(kept(last))[-6:] == ["size", "", "never mind", "#4 to 'never mind'",
                                      "thanks", "#5 to 'thanks'"]
    assert tool_results(last) == [DECLINED, DECLINED]
    assert steps[-1]["pending"] is None


@pytest.mark.parametrize("client", CLIENTS)
def test_going_back_while_an_approval_waits_cancels_it_and_branches(
        client: str, converse: Converse) -> None:
    steps = converse(client, [
        {"op": "send", "text": "hello"}, {"op": "send", "text": "buy"},
        {"op": "regenerate", "user": 0},
        {"op": "send", "text": "buy"},
        {"op": "edit", "user": 0, "text": "hi"},
        {"op": "send", "text": "buy"}, {"op": "answer", "answer": False},
    ])
    assert [step["pending"] is not None for step in steps] == [
        False, True, False, True, False, True, False]
    assert texts(kept(steps[2]["thread"])) == ["hello", "#2 to 'hello'"]
    assert texts(kept(steps[4]["thread"])) == ["hi", "#3 to 'hi'"]
    assert texts(kept(steps[6]["thread"]))[-2:] == ["buy", "#4 checkout said 'denied by a person'"]
    assert tool_results(steps[6]["thread"]) == ["denied by a person"]


@pytest.mark.parametrize("client", CLIENTS)
def test_a_reloaded_client_shows_the_pending_approval_or_question_and_its_answer_works(
        client: str, converse: Converse) -> None:
    """A reload while a question waits: the reloaded client has it open and answers it; while an
    approval waits: the reloaded client types over it, or approves it."""
    steps = converse(client, [
        {"op": "send", "text": "size"}, {"op": "reload"}, {"op": "answer", "answer": "M"},
        {"op": "send", "text": "buy"}, {"op": "reload"}, {"op": "send", "text": "no"},
        {"op": "send", "text": "buy"}, {"op": "reload"}, {"op": "answer", "answer": True},
        {"op": "reload"},
    ])
    reloaded = [steps[1], steps[4], steps[7]]
    assert [step["pending"]["tool"] for step in reloaded] == ["pick_size", "checkout",
                                                             "checkout"]
    assert [step["pending"] for step in steps if step["op"] != "reload"][1::2] == [None] * 3
    assert texts(kept(steps[2]["thread"]))[-2:] == ["size", "#1 pick_size said 'size M'"]
    assert texts(kept(steps[5]["thread"]))[-2:] == ["no", "#2 to 'no'"]
    assert texts(kept(steps[8]["thread"]))[-2:] == ["buy", "#3 checkout said 'paid'"]
    assert tool_results(steps[-1]["thread"]) == ["size M", DECLINED, "paid"]
    assert steps[-1]["pending"] is None


@pytest.mark.parametrize("client", ["agui", "agui0059"])
def test_a_page_that_missed_another_pages_exchange_gets_it_in_the_threads_order(
        client: str, serve: Callable[[Any], str], run_node: Callable[..., dict[str, Any]],
        tmp_path: Path) -> None:
    """Rule: a page's next run gives it what another page said meanwhile, in the thread's
    order, and its later messages are taken. The client keeps the messages it holds in its own
    order and drops those a MESSAGES_SNAPSHOT leaves out: the run's stream ended with the
    page's messages and its own (the other exchange lost until a reload), then, with the
    thread's in one snapshot, left the page's message ahead of the exchange, and every next
    message was refused (409) as out of the thread's order."""
    base = serve(create_app({"shop": shop()}, store=SQLiteStore(tmp_path / f"{client}.db")))
    out = run_node("conversation.mjs", base, {"client": client, "steps": [
        {"op": "send", "text": "hi"}, {"op": "elsewhere", "text": "from another page"},
        {"op": "send", "text": "back here"}, {"op": "send", "text": "and again"}]})
    assert out["warnings"] == [], out["warnings"]
    for number, step in enumerate(out["steps"]):
        assert step["error"] is None, f"{client}, step {number}: {step['error']}"
    for step in out["steps"][2:]:  # from its next run on, it holds the thread as kept
        assert held(client, step["messages"]) == kept(step["thread"])
        assert [(m["id"], m["role"]) for m in step["messages"]] == [
            (m["id"], m["role"]) for m in step["thread"]["messages"]]
    assert texts(kept(out["steps"][-1]["thread"]))[2] == "from another page"
