"""Whatever a person does with a chat page, the thread the server keeps is what the page shows,
message for message (issue "the conversation as real clients send it").

A model of each client (what `ai` 7's Chat and `@ag-ui/client` send, as observed: see
tests/e2e for the clients themselves) draws a sequence of actions: send, send only the newest
message, regenerate the k-th reply, edit the k-th message, reload, buy (an approval the model
asks for) then type over it instead of answering. After every action, the page's messages equal
the kept thread's (`GET /threads/{id}`, without a store the messages the model read), on both
protocols, with no store, SQLite and Redis.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.state.messages import Message
from pyox_agents.stores import SQLiteStore
from pyox_agents.stores.redis import RedisStore
from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name

Pair = tuple[str, str]
SEP = " | read: "


@tool(approval=True)
def checkout(ctx: RunContext) -> str:
    """Pay (a person approves first)."""
    return "paid"


def model(messages: list[Message], tools: Any) -> Any:
    """Asks to check out when told "buy"; else answers naming every user message it read."""
    if messages[-1].role == "user" and messages[-1].content == "buy":
        return ToolCall("checkout", {})
    users = [m.content for m in messages if m.role == "user"]
    return f"re {users[-1]}{SEP}{json.dumps(users)}"


@pytest.fixture(scope="module", params=["no store", "sqlite", "redis"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[str, bool]]:
    """A real server on 127.0.0.1 (uvicorn in a thread), and whether it keeps threads."""
    from tests.conftest import _serving

    kind = request.param
    store: Any = None
    if kind == "sqlite":
        store = SQLiteStore(tmp_path_factory.mktemp("s") / "t.db")
    elif kind == "redis":
        url = request.getfixturevalue("redis_server")
        store = RedisStore(url, prefix=f"prop-{uuid.uuid4().hex[:8]}:")
    app = create_app({"a": Agent(FunctionModel(model), tools=[checkout])}, store=store)
    with _serving(app) as base:
        yield base, store is not None


class Page:
    """What a page shows and sends: its messages, as its client keeps them."""

    def __init__(self, base: str, protocol: str, keeps: bool) -> None:
        self.base, self.protocol, self.keeps = base, protocol, keeps
        self.thread = uuid.uuid4().hex[:12]
        self.messages: list[dict[str, Any]] = []
        self.ids = itertools.count()
        self.pending: str | None = None  # an open interrupt (AG-UI) the page knows of
        self.read: list[str] | None = None  # the user messages the model read last

    # -- what the page shows --------------------------------------------------------------

    def shown(self) -> list[Pair]:
        out = []
        for m in self.messages:
            text = m.get("content") if self.protocol == "ag-ui" else "".join(
                p.get("text", "") for p in m.get("parts", []) if p.get("type") == "text")
            if m["role"] in ("user", "assistant") and text:
                out.append((m["role"], text))
        return out

    def user_at(self, k: int) -> int | None:
        users = [i for i, m in enumerate(self.messages) if m["role"] == "user"]
        return users[k % len(users)] if users else None

    # -- requests ----------------------------------------------------------------------------

    def _new_user(self, text: str) -> dict[str, Any]:
        message_id = f"u{next(self.ids)}-{self.thread}"
        if self.protocol == "ag-ui":
            return {"id": message_id, "role": "user", "content": text}
        return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}

    def _post(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        path = "ag-ui" if self.protocol == "ag-ui" else "ai-sdk"
        response = httpx.post(f"{self.base}/agents/a/{path}", json=body, timeout=30)
        assert response.status_code == 200, response.text
        return [json.loads(line[5:]) for line in response.text.splitlines()
                if line.startswith("data: {")]

    def run(self, sent: list[dict[str, Any]], *, last_only: bool = False,
            regenerate: str | None = None) -> None:
        """Send `sent` (the page's messages now), and show the reply as the client does."""
        if self.protocol == "ag-ui":
            body: dict[str, Any] = {"threadId": self.thread, "runId": uuid.uuid4().hex,
                                    "state": {}, "tools": [], "context": [],
                                    "forwardedProps": {}, "messages": sent,
                                    "protocolVersion": "1.0"}
            if self.pending is not None:  # the client refuses to run unless it is addressed
                body["resume"] = [{"interruptId": self.pending, "status": "cancelled"}]
            events = self._post(body)
            self.messages = [e for e in events if e["type"] == "MESSAGES_SNAPSHOT"][-1][
                "messages"]
            outcome = events[-1].get("outcome") or {}
            interrupts = outcome.get("interrupts") or []
            self.pending = interrupts[0]["id"] if interrupts else None
        else:
            body = {"id": self.thread, "message": sent[-1]} if last_only else {
                "id": self.thread, "messages": sent,
                "trigger": "regenerate-message" if regenerate else "submit-message",
                **({"messageId": regenerate} if regenerate else {})}
            chunks = self._post(body)
            text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
            parts: list[dict[str, Any]] = [{"type": "step-start"}]
            for c in chunks:
                if c["type"] == "tool-input-available":
                    parts.append({"type": f"tool-{c['toolName']}", "toolCallId": c["toolCallId"],
                                  "state": "approval-requested", "input": c["input"]})
            if text:
                parts.append({"type": "text", "text": text, "state": "done"})
            self.messages = [*sent, {"id": chunks[0]["messageId"], "role": "assistant",
                                     "parts": parts}]
        reply = self.shown()[-1][1] if self.shown() else ""
        self.read = json.loads(reply.split(SEP)[1]) if SEP in reply else None

    # -- the person's actions --------------------------------------------------------------------

    def send(self, text: str) -> None:
        self.run([*self.messages, self._new_user(text)])

    def send_newest_only(self, text: str) -> None:
        if self.protocol == "ag-ui" or not self.keeps:  # (an AG-UI page sends all it holds;
            return self.send(text)  # the recipe needs a server that keeps the thread)
        new = self._new_user(text)
        return self.run([*self.messages, new], last_only=True)

    def regenerate(self, k: int) -> None:
        at = self.user_at(k)
        if at is None or self.pending is not None:
            return
        reply = next((m for m in self.messages[at + 1:] if m["role"] == "assistant"), None)
        if reply is None:
            return
        self.run(self.messages[:at + 1], regenerate=reply["id"])

    def edit(self, k: int, text: str) -> None:
        at = self.user_at(k)
        if at is None or self.pending is not None:
            return
        edited = dict(self.messages[at])
        if self.protocol == "ag-ui":
            edited["content"] = text
        else:
            edited["parts"] = [{"type": "text", "text": text}]
        self.run([*self.messages[:at], edited])

    def reload(self) -> None:
        if not self.keeps:
            return
        if self.protocol == "ai-sdk":
            loaded = httpx.get(f"{self.base}/agents/a/ai-sdk/{self.thread}/messages")
            self.messages = loaded.json() if loaded.status_code == 200 else []  # 404: new
            return
        body = {"threadId": self.thread, "runId": "r", "messages": [], "protocolVersion": "1.0"}
        text = httpx.post(f"{self.base}/agents/a/ag-ui/connect", json=body).text
        events = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
        self.messages = next(e for e in events if e["type"] == "MESSAGES_SNAPSHOT")["messages"]
        outcome = events[-1].get("outcome") or {}
        interrupts = outcome.get("interrupts") or []
        self.pending = interrupts[0]["id"] if interrupts else None


ACTIONS = st.lists(st.one_of(
    st.tuples(st.just("send"), st.sampled_from(["hi", "more", "buy"])),
    st.tuples(st.just("send_newest_only"), st.sampled_from(["alone", "buy"])),
    st.tuples(st.just("regenerate"), st.integers(0, 5)),
    st.tuples(st.just("edit"), st.integers(0, 5), st.sampled_from(["edited", "again"])),
    st.tuples(st.just("reload")),
), min_size=1, max_size=7)


def kept(base: str, thread: str) -> list[Pair]:
    response = httpx.get(f"{base}/threads/{thread}")
    if response.status_code == 404:  # nothing sent yet
        return []
    got = response.json()["messages"]
    return [(m["role"], m["content"]) for m in got
            if m["role"] in ("user", "assistant") and m["content"]]


@pytest.mark.parametrize("protocol", ["ag-ui", "ai-sdk"])
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(actions=ACTIONS)
def test_the_kept_thread_is_what_the_page_shows(served: tuple[str, bool], protocol: str,
                                                tmp_path: Path, actions: list[Any]) -> None:
    base, keeps = served
    page = Page(base, protocol, keeps)
    for action in actions:
        name, *args = action
        getattr(page, name)(*args)
        shown = page.shown()
        if keeps:
            assert kept(base, page.thread) == shown, (action, page.messages)
        if page.read is not None:  # what the model read: the user messages the page shows
            assert page.read == [text for role, text in shown if role == "user"], action
