"""What a request's messages mean, the same on both protocols (DESIGN.md, "What a request's
messages mean"): the kept conversation is the truth; the client's user messages are matched to
it by id; what is new is appended; a known message with new text is an edit, a history that
stops at an answered message a regenerate, each a branch of the thread; a body that cannot be
placed is refused naming the message. Each case answered 200 and kept the wrong thing before.

The bodies are what the real clients send (`ai` 7's Chat, `@ag-ui/client`, CopilotKit), as
observed; tests/e2e drives the clients themselves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents import Agent
from pyox_agents.models import FunctionModel
from pyox_agents.server import create_app
from pyox_agents.state.messages import Message
from pyox_agents.stores import SQLiteStore


def echo(messages: list[Message], tools: Any) -> str:
    """A model that says which user message it answers and how many it read."""
    users = [m.content for m in messages if m.role == "user"]
    return f"re {users[-1]} ({len(users)} asked)"


@pytest.fixture
def url(live_server: Any, tmp_path: Path) -> str:
    app = create_app({"a": Agent(FunctionModel(echo))}, store=SQLiteStore(tmp_path / "t.db"))
    return str(live_server(app))


def thread(url: str, thread_id: str) -> list[tuple[str, str]]:
    """The kept thread as (role, content) pairs."""
    got = httpx.get(f"{url}/threads/{thread_id}").json()["messages"]
    return [(m["role"], m["content"]) for m in got]


# -- AG-UI ------------------------------------------------------------------------------------


def ag_ui(url: str, thread_id: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One AG-UI run; the messages the client holds after it (its final MESSAGES_SNAPSHOT)."""
    body = {"threadId": thread_id, "runId": "r", "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": messages}
    response = httpx.post(f"{url}/agents/a/ag-ui", json=body, timeout=30)
    assert response.status_code == 200, response.text
    events = [json.loads(line[5:]) for line in response.text.splitlines()
              if line.startswith("data:")]
    (snapshot,) = [e for e in events if e["type"] == "MESSAGES_SNAPSHOT"][-1:]
    held: list[dict[str, Any]] = snapshot["messages"]
    return held


def user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "content": text}


def test_ag_ui_regenerate_replaces_the_reply(url: str) -> None:
    """CopilotKit's regenerate: the history cut before the reply, every id known."""
    held = ag_ui(url, "t", [user("u1", "one")])
    first_reply = held[-1]["id"]
    again = ag_ui(url, "t", held[:-1])
    assert thread(url, "t") == [("user", "one"), ("assistant", "re one (1 asked)")]
    assert again[-1]["id"] != first_reply


def test_ag_ui_an_edited_message_branches_the_thread_before_it(url: str) -> None:
    held = ag_ui(url, "t", [user("u1", "one")])
    held = ag_ui(url, "t", [*held, user("u2", "two")])
    ag_ui(url, "t", [*held[:2], user("u2", "TWO")])  # same id, new text
    assert thread(url, "t") == [("user", "one"), ("assistant", "re one (1 asked)"),
                                ("user", "TWO"), ("assistant", "re TWO (2 asked)")]


def test_ag_ui_a_tab_that_missed_an_exchange_appends_after_it(url: str) -> None:
    """Two tabs on one thread: the second sends what it has, plus its message; the first tab's
    exchange stays, and the model reads both."""
    held = ag_ui(url, "t", [user("u1", "one")])
    ag_ui(url, "t", [*held, user("u2", "from tab 1")])
    ag_ui(url, "t", [*held, user("u3", "from tab 2")])
    assert [c for _, c in thread(url, "t")] == [
        "one", "re one (1 asked)", "from tab 1", "re from tab 1 (2 asked)", "from tab 2",
        "re from tab 2 (3 asked)"]


def test_a_body_that_cannot_be_placed_is_a_409_naming_the_message(url: str) -> None:
    held = ag_ui(url, "t", [user("u1", "one")])
    held = ag_ui(url, "t", [*held, user("u2", "two")])
    body = {"threadId": "t", "runId": "r", "messages": [held[2], held[0], user("u9", "x")]}
    response = httpx.post(f"{url}/agents/a/ag-ui", json=body)
    assert response.status_code == 409 and "'u1'" in response.json()["error"]
    assert len(thread(url, "t")) == 4


@pytest.mark.parametrize("protocol", ["ag-ui", "ai-sdk"])
def test_a_message_id_no_client_means_is_a_422_and_changes_nothing(url: str,
                                                                  protocol: str) -> None:
    """Rule: each message has an id of its own (clients merge messages of one id into one):
    two new messages with one id, or an id of 300 characters, are refused naming the id, and
    the thread stays as it was."""
    held = ag_ui(url, "t", [user("u1", "one")])
    for ids, words in [(["u2", "u2"], "two of the request's messages"),
                       (["u" * 300], "300 characters long")]:
        if protocol == "ag-ui":
            body: dict[str, Any] = {"threadId": "t", "runId": "r", "messages": [
                *held, *(user(i, f"new {n}") for n, i in enumerate(ids))]}
        else:
            body = {"id": "t", "trigger": "submit-message", "messages": [
                ui_user("u1", "one"), *(ui_user(i, f"new {n}") for n, i in enumerate(ids))]}
        response = httpx.post(f"{url}/agents/a/{protocol}", json=body)
        assert response.status_code == 422, response.text
        assert words in response.text  # (the AI SDK route answers in text, as `ai` shows it)
        if protocol == "ag-ui":
            assert response.json()["field"] == "messages"
        assert thread(url, "t") == [("user", "one"), ("assistant", "re one (1 asked)")]
        fresh = {**body, "threadId": "new", "id": "new", "messages": body["messages"][1:]}
        response = httpx.post(f"{url}/agents/a/{protocol}", json=fresh)  # a thread's first
        assert response.status_code == 422 and words in response.text, response.text
        assert httpx.get(f"{url}/threads/new").status_code == 404


# -- AI SDK -----------------------------------------------------------------------------------


def ai_sdk(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = httpx.post(f"{url}/agents/a/ai-sdk", json=body, timeout=30)
    assert response.status_code == 200, response.text
    return [json.loads(line[5:]) for line in response.text.splitlines()
            if line.startswith("data:") and line[5:].strip() != "[DONE]"]


def ui_user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def ui_assistant(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    return {"id": chunks[0]["messageId"], "role": "assistant",
            "parts": [{"type": "step-start"}, {"type": "text", "text": text, "state": "done"}]}


def test_ai_sdk_only_the_last_message_is_appended(url: str) -> None:
    """The persistence guide's recipe: `{id, message}`, the newest message only."""
    ai_sdk(url, {"id": "c", "message": ui_user("m1", "hello one")})
    ai_sdk(url, {"id": "c", "message": ui_user("m2", "hello two")})
    assert thread(url, "c") == [("user", "hello one"), ("assistant", "re hello one (1 asked)"),
                                ("user", "hello two"), ("assistant", "re hello two (2 asked)")]


def test_ai_sdk_regenerate_of_an_earlier_reply_branches_there(url: str) -> None:
    u1, u2 = ui_user("m1", "one"), ui_user("m2", "two")
    a1 = ui_assistant(ai_sdk(url, {"id": "c", "messages": [u1], "trigger": "submit-message"}))
    ai_sdk(url, {"id": "c", "messages": [u1, a1, u2], "trigger": "submit-message"})
    again = ai_sdk(url, {"id": "c", "messages": [u1], "trigger": "regenerate-message",
                         "messageId": a1["id"]})
    assert thread(url, "c") == [("user", "one"), ("assistant", "re one (1 asked)")]
    assert again[0]["messageId"] != a1["id"]


def test_ai_sdk_an_edit_keeps_the_id_and_branches(url: str) -> None:
    """`sendMessage({text, messageId})`: the message keeps its id, the history is cut after."""
    u1 = ui_user("m1", "one")
    a1 = ui_assistant(ai_sdk(url, {"id": "c", "messages": [u1], "trigger": "submit-message"}))
    ai_sdk(url, {"id": "c", "messages": [u1, a1, ui_user("m2", "two")]})
    ai_sdk(url, {"id": "c", "messages": [u1, a1, ui_user("m2", "TWO")], "messageId": "m2",
                 "trigger": "submit-message"})
    assert thread(url, "c")[2:] == [("user", "TWO"), ("assistant", "re TWO (2 asked)")]


def test_ai_sdk_an_edit_under_the_last_message_recipe_branches_too(url: str) -> None:
    ai_sdk(url, {"id": "c", "message": ui_user("m1", "one")})
    ai_sdk(url, {"id": "c", "message": ui_user("m2", "two")})
    ai_sdk(url, {"id": "c", "message": ui_user("m1", "ONE")})
    assert thread(url, "c") == [("user", "ONE"), ("assistant", "re ONE (1 asked)")]


def test_ai_sdk_a_reload_then_the_next_message_appends(url: str) -> None:
    """The page reloads (GET /messages gives the thread under the ids the client gave), then
    sends its next message with that history: nothing is doubled."""
    ai_sdk(url, {"id": "c", "messages": [ui_user("m1", "one")], "trigger": "submit-message"})
    loaded = httpx.get(f"{url}/agents/a/ai-sdk/c/messages").json()
    assert [m["id"] for m in loaded if m["role"] == "user"] == ["m1"]
    ai_sdk(url, {"id": "c", "messages": [*loaded, ui_user("m2", "two")],
                 "trigger": "submit-message"})
    assert [c for _, c in thread(url, "c")] == ["one", "re one (1 asked)", "two",
                                                "re two (2 asked)"]


def test_ag_ui_a_reload_then_the_next_message_appends(url: str) -> None:
    ag_ui(url, "t", [user("u1", "one")])
    body = {"threadId": "t", "runId": "r", "messages": []}
    connect = httpx.post(f"{url}/agents/a/ag-ui/connect", json=body).text
    events = [json.loads(line[5:]) for line in connect.splitlines() if line.startswith("data:")]
    (snapshot,) = [e["messages"] for e in events if e["type"] == "MESSAGES_SNAPSHOT"]
    assert [m["id"] for m in snapshot if m["role"] == "user"] == ["u1"]
    ag_ui(url, "t", [*snapshot, user("u2", "two")])
    assert [c for _, c in thread(url, "t")] == ["one", "re one (1 asked)", "two",
                                                "re two (2 asked)"]
