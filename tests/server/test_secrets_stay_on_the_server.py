"""Nothing secret leaves the server: a client gets a public message and a code; a store's URL,
a model provider's and a remote agent's URL, their credentials and an exception's text go to
the server's log and the run's record only (the record with every password hidden).

Each rule against a real server (`live_server`): a real `redis-server` that asks for a password
and a real PostgreSQL, both stopped under a running app; a local HTTP server speaking OpenAI's
wire format; a remote AG-UI endpoint that refuses; a tool whose exception quotes a connection
string. What the client reads is everything it can: both protocols' streams, `GET /threads`,
the AI SDK's messages of the chat, and every 503.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from pyox_agents import Agent, RemoteAgent, RunContext, ToolError, tool
from pyox_agents.models import OpenAIModel, ScriptedModel, ToolCall
from pyox_agents.models._provider import PUBLIC_MESSAGES
from pyox_agents.server import create_app
from pyox_agents.state.history import RunStartEntry
from pyox_agents.stores import MemoryStore
from pyox_agents.stores.base import Store
from tests.models.fake_providers import Fail, FakeProvider, serving
from tests.reliability.outages import postgres_process, redis_process

Serve = Callable[[Any], str]

SECRET = "hunter2-Xq9"
"""The password, token or key a test puts where the issue found it leaking."""


# -- what a client reads -------------------------------------------------------------------------


def ag_ui_body(thread: str) -> dict[str, Any]:
    return {"threadId": thread, "runId": "r1", "protocolVersion": "1.0", "state": {},
            "messages": [{"id": "u1", "role": "user", "content": "go"}]}


def ai_sdk_body(thread: str) -> dict[str, Any]:
    return {"id": thread, "trigger": "submit-message",
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "go"}]}]}


def events(body: str) -> list[dict[str, Any]]:
    """The JSON events of an SSE body (the AI SDK's `[DONE]` left out)."""
    found = []
    for line in body.replace("\r\n", "\n").split("\n"):
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            found.append(json.loads(line[5:]))
    return found


Events = list[dict[str, Any]]


def run_on_both(base: str, agent: str, thread: str) -> tuple[Events, Events, str]:
    """Run `agent` on `thread` over AG-UI, then on `thread`-ai over the AI SDK: the events of
    each, and everything a client could read of both threads (streams, `GET /threads`, the
    AI SDK's messages)."""
    with httpx.Client(base_url=base, timeout=30) as client:
        ag_ui = client.post(f"/agents/{agent}/ag-ui", json=ag_ui_body(thread))
        ai_sdk = client.post(f"/agents/{agent}/ai-sdk", json=ai_sdk_body(f"{thread}-ai"))
        assert ag_ui.status_code == ai_sdk.status_code == 200, (ag_ui.text, ai_sdk.text)
        threads = [client.get(f"/threads/{t}") for t in (thread, f"{thread}-ai")]
        messages = client.get(f"/agents/{agent}/ai-sdk/{thread}-ai/messages")
    assert all(r.status_code == 200 for r in [*threads, messages])
    read = [ag_ui.text, ai_sdk.text, *(r.text for r in threads), messages.text]
    return events(ag_ui.text), events(ai_sdk.text), "\n".join(read)


def run_record(store: MemoryStore, thread: str) -> dict[str, Any]:
    """The run's record of the (only) run on `thread`, as `GET /runs/{run_id}` gives it."""
    [run_id] = [e.content for e in store.load(thread).history if isinstance(e, RunStartEntry)]
    return store.load_run(str(run_id)).to_dict()


def dead_port() -> int:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- a store that goes away ----------------------------------------------------------------------


@contextlib.contextmanager
def stopped_store(kind: str) -> Iterator[tuple[Callable[[], Store], Callable[[], None], str]]:
    """(make the store, stop its server, the store's address) of a real store server whose URL
    holds `SECRET`: Redis as `redis://:SECRET@...`, PostgreSQL as `...?password=SECRET` (the
    cluster trusts local connections, so the password is carried and never checked)."""
    if kind == "redis":
        from pyox_agents.stores import RedisStore

        with redis_process(password=SECRET) as redis:
            yield (lambda: RedisStore(redis.url, connect_timeout=0.5, command_timeout=1.0),
                   redis.stop, f"127.0.0.1:{redis.port}")
        return
    from pyox_agents.stores import PostgresStore

    with postgres_process() as postgres:
        url = f"{postgres.url}?password={SECRET}&application_name=pyox"
        yield (lambda: PostgresStore(url, connect_timeout=1.0, pool_timeout=1.0),
               postgres.stop, f"127.0.0.1:{postgres.port}")


@pytest.mark.parametrize("kind", ["redis", "postgres"])
def test_a_store_outage_is_a_503_that_names_no_store(
    kind: str, live_server: Serve, caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue: "When Redis is unreachable every route answers 503 quoting the Redis URL with
    its password, to anonymous clients too; the PostgreSQL redaction misses `?password=`"."""
    with stopped_store(kind) as (make_store, stop, address):
        store = make_store()
        base = live_server(create_app({"chat": Agent(ScriptedModel(["hi"]))}, store=store))
        stop()
        with httpx.Client(base_url=base, timeout=30) as client, \
                caplog.at_level(logging.WARNING, logger="pyox_agents"):
            answers = [client.post("/agents/chat/ag-ui", json=ag_ui_body("t")),
                       client.post("/agents/chat/ai-sdk", json=ai_sdk_body("t")),
                       client.get("/threads/t"), client.get(f"/runs/{'a' * 64}")]
        store.close()
    for answer in answers:
        assert answer.status_code == 503, answer.text
        assert int(answer.headers["retry-after"]) >= 1
        assert answer.text.startswith(("the store is unreachable", '{"error":"the store is'))
        assert SECRET not in answer.text and address not in answer.text, answer.text
    assert all(a.json()["store"] == "unreachable" for a in answers if a.headers[
        "content-type"].startswith("application/json"))
    assert address in caplog.text, "the store's own words are in the server's log"
    assert SECRET not in caplog.text, "with its password hidden"


# -- a model provider that fails -----------------------------------------------------------------


@pytest.fixture
def provider() -> Iterator[tuple[FakeProvider, str]]:
    """An OpenAI-compatible server that answers every request 404, quoting `SECRET`."""
    fake = FakeProvider("/v1/chat/completions")
    fake.always(Fail(404, {"error": {"message": f"no model gpt-x (api_key={SECRET})",
                                     "type": "invalid_request_error"}}))
    with serving(fake.app) as url:
        yield fake, url


@pytest.mark.parametrize("answer", ["refused", "unreachable"])
def test_a_model_providers_url_and_words_stay_on_the_server(
    answer: str, provider: tuple[FakeProvider, str], live_server: Serve,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue: "A model provider's base URL ..., credentials included, reach the browser in
    `RUN_ERROR`, the AI SDK `error`"."""
    if answer == "refused":  # the provider answers (404), its URL holding a user and password
        host = provider[1].removeprefix("http://")
        base_url, code = f"http://svc:{SECRET}@{host}/v1", "not_found"
    else:  # nothing answers there; the key is in the query string
        host = f"127.0.0.1:{dead_port()}"
        base_url, code = f"http://{host}/v1?api-key={SECRET}", "connection"
    model = OpenAIModel("gpt-x", base_url=base_url, api_key="sk-test", max_retries=0)
    store = MemoryStore()
    base = live_server(create_app({"chat": Agent(model)}, store=store))
    with caplog.at_level(logging.WARNING, logger="pyox_agents"):
        ag_ui, ai_sdk, read = run_on_both(base, "chat", "t")
    assert SECRET not in read and host not in read
    assert (ag_ui[-1]["type"], ag_ui[-1]["code"]) == ("RUN_ERROR", code)
    assert ag_ui[-1]["message"] == PUBLIC_MESSAGES[code]
    assert {"type": "error", "errorText": PUBLIC_MESSAGES[code]} in ai_sdk
    error = run_record(store, "t")["error"]
    assert error["code"] == code and host in error["message"], "the record has the details"
    assert SECRET not in error["message"] and "***" in error["message"], "no password, though"
    assert host in caplog.text and SECRET not in caplog.text


# -- a remote agent that refuses ------------------------------------------------------------------


def test_a_remote_agents_url_stays_on_the_server(
    live_server: Serve, caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue: "a RemoteAgent's URL, credentials included, reach the browser in ... tool
    errors"."""

    async def refuse(request: Request) -> PlainTextResponse:
        return PlainTextResponse(f"token={SECRET} may not call this agent", status_code=403)

    remote = live_server(Starlette(routes=[Route("/agents/research/ag-ui", refuse,
                                                 methods=["POST"])]))
    host = remote.removeprefix("http://")
    url = f"http://svc:{SECRET}@{host}/agents/research/ag-ui?token={SECRET}"
    research = RemoteAgent(url, name="research").as_tool()
    parent = Agent(ScriptedModel([ToolCall("research", {"task": "find"}, id="c1"), "done"] * 2),
                   tools=[research])
    store = MemoryStore()
    base = live_server(create_app({"parent": parent}, store=store))
    with caplog.at_level(logging.WARNING, logger="pyox_agents"):
        ag_ui, _, read = run_on_both(base, "parent", "t")
    assert SECRET not in read and host not in read
    [result] = [e for e in ag_ui if e["type"] == "TOOL_CALL_RESULT"]
    assert result["content"] == "the remote agent 'research' answered HTTP 403"
    [step] = [s for s in run_record(store, "t")["steps"] if s["kind"] == "tool"]
    assert host in step["error"]["message"] and "answered HTTP 403" in step["error"]["message"]
    assert SECRET not in step["error"]["message"]
    assert host in caplog.text and SECRET not in caplog.text


# -- a tool that raises --------------------------------------------------------------------------


@tool
def load_orders(ctx: RunContext) -> str:
    """Load the orders."""
    raise ValueError(f"cannot connect to postgresql://app:{SECRET}@db.internal/app (see "
                     "/srv/app/settings.toml)")


@tool
def book_flight(ctx: RunContext) -> str:
    """Book the flight."""
    raise ToolError("no flight on 3 May; ask for another date")


def test_a_tools_exception_text_stays_on_the_server(
    live_server: Serve, caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue: "A tool's raw exception text (a connection string with its password, file
    paths) reaches both streams and stays in `GET /threads`"."""
    model = ScriptedModel([ToolCall("load_orders", {}, id="c1"), "sorry"] * 2)
    store = MemoryStore()
    base = live_server(create_app({"orders": Agent(model, tools=[load_orders])}, store=store))
    with caplog.at_level(logging.WARNING, logger="pyox_agents"):
        ag_ui, _, read = run_on_both(base, "orders", "t")
    for private in (SECRET, "db.internal", "/srv/app", "cannot connect"):
        assert private not in read, private
    [result] = [e for e in ag_ui if e["type"] == "TOOL_CALL_RESULT"]
    assert result["content"] == ("the tool failed with an unexpected ValueError; the server's "
                                 "log has the details")
    [step] = [s for s in run_record(store, "t")["steps"] if s["kind"] == "tool"]
    assert step["error"] == {"code": "tool_error", "message": (
        "ValueError: cannot connect to postgresql://app:***@db.internal/app (see "
        "/srv/app/settings.toml)")}
    assert "Traceback" in caplog.text and "/srv/app/settings.toml" in caplog.text
    assert SECRET not in caplog.text


def test_a_tool_error_is_shown_as_written(live_server: Serve) -> None:
    """`ToolError`: a message meant for the model and the person, shown as is."""
    model = ScriptedModel([ToolCall("book_flight", {}, id="c1"), "sorry"] * 2)
    base = live_server(create_app({"travel": Agent(model, tools=[book_flight])},
                                  store=MemoryStore()))
    ag_ui, _, read = run_on_both(base, "travel", "t")
    [result] = [e for e in ag_ui if e["type"] == "TOOL_CALL_RESULT"]
    assert result["content"] == "no flight on 3 May; ask for another date"
    assert read.count("no flight on 3 May; ask for another date") >= 5, "in every view"
