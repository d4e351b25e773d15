"""A page on another site cannot make a browser change anything on the server, nor reach it by
a name of its own (DNS rebinding): checked against a real server on 127.0.0.1."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore

EVIL = "https://evil.example"
FRONTEND = "http://localhost:3000"

Serve = Callable[[Any], str]


@tool
def add(ctx: RunContext, text: str) -> str:
    """Add an item."""
    ctx.state["items"] = [*ctx.state.get("items", []), text]
    return "added"


def agent() -> Agent:
    return Agent(ScriptedModel([ToolCall("add", {"text": "a"}), "done"] * 5), tools=[add])


def ag_ui_body(thread: str) -> bytes:
    return json.dumps({"threadId": thread, "runId": "r1", "state": {"items": []},
                       "messages": [{"id": "m1", "role": "user", "content": "go"}],
                       "tools": [], "context": [], "forwardedProps": {}}).encode()


def ai_sdk_body(chat: str) -> bytes:
    return json.dumps({"id": chat, "trigger": "submit-message", "state": {"items": []},
                       "messages": [{"id": "m1", "role": "user",
                                     "parts": [{"type": "text", "text": "go"}]}]}).encode()


def served(live_server: Serve, **options: Any) -> tuple[str, MemoryStore]:
    store = MemoryStore()
    return live_server(create_app({"todo": agent()}, store=store, **options)), store


def test_a_cross_site_text_plain_post_is_refused_and_changes_nothing(
        live_server: Serve) -> None:
    base, store = served(live_server)
    response = httpx.post(f"{base}/agents/todo/ag-ui", content=ag_ui_body("t1"),
                          headers={"Origin": EVIL, "Content-Type": "text/plain"})
    assert response.status_code == 403
    error = response.json()["error"]
    assert EVIL in error and "--cors" in error and "cors_origins" in error
    assert store.list_threads() == []
    assert httpx.get(f"{base}/threads/t1").status_code == 404


def test_a_json_body_sent_as_a_simple_type_is_refused_415(live_server: Serve) -> None:
    base, store = served(live_server)
    for kind in ("text/plain", "application/x-www-form-urlencoded",
                 "multipart/form-data; boundary=x"):
        response = httpx.post(f"{base}/agents/todo/ag-ui", content=ag_ui_body("t1"),
                              headers={"Content-Type": kind})
        assert response.status_code == 415
        assert kind.split(";")[0] in response.json()["error"]
        assert "application/json" in response.json()["error"]
        sdk = httpx.post(f"{base}/agents/todo/ai-sdk", content=ai_sdk_body("c1"),
                         headers={"Content-Type": kind})
        assert sdk.status_code == 415 and "application/json" in sdk.text
    assert store.list_threads() == []


def test_a_foreign_origin_on_the_ai_sdk_route_is_refused_as_text(live_server: Serve) -> None:
    base, store = served(live_server)
    response = httpx.post(f"{base}/agents/todo/ai-sdk", content=ai_sdk_body("c1"),
                          headers={"Origin": EVIL, "Content-Type": "application/json"})
    assert response.status_code == 403
    assert response.headers["content-type"].startswith("text/plain")
    assert EVIL in response.text and "--cors" in response.text
    stop = httpx.post(f"{base}/agents/todo/ai-sdk/c1/stop", headers={"Origin": EVIL})
    assert stop.status_code == 403
    assert store.list_threads() == []


def test_origin_null_is_refused(live_server: Serve) -> None:
    base, _ = served(live_server)
    response = httpx.post(f"{base}/agents/todo/ag-ui", content=ag_ui_body("t1"),
                          headers={"Origin": "null", "Content-Type": "application/json"})
    assert response.status_code == 403 and "Origin: null" in response.json()["error"]


def test_the_servers_own_pages_and_clients_without_origin_are_served(
        live_server: Serve) -> None:
    base, _ = served(live_server)
    own = httpx.post(f"{base}/agents/todo/ag-ui", content=ag_ui_body("own"),
                     headers={"Origin": base, "Content-Type": "application/json"})
    assert own.status_code == 200 and "RUN_FINISHED" in own.text
    bare = httpx.post(f"{base}/agents/todo/ag-ui", content=ag_ui_body("bare"))
    assert bare.status_code == 200 and "RUN_FINISHED" in bare.text  # no Content-Type: JSON
    assert httpx.get(f"{base}/threads/own").json()["state"] == {"items": ["a"]}


def test_a_read_from_another_origin_is_not_refused(live_server: Serve) -> None:
    base, _ = served(live_server)
    response = httpx.get(f"{base}/agents", headers={"Origin": EVIL})
    assert response.status_code == 200
    assert "access-control-allow-origin" not in response.headers  # the page cannot read it


def test_an_allowed_origin_works_with_a_preflight(live_server: Serve) -> None:
    base, _ = served(live_server, cors_origins=[FRONTEND])
    preflight = httpx.options(f"{base}/agents/todo/ai-sdk", headers={
        "Origin": FRONTEND, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type"})
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == FRONTEND
    response = httpx.post(f"{base}/agents/todo/ai-sdk", content=ai_sdk_body("c1"),
                          headers={"Origin": FRONTEND, "Content-Type": "application/json"})
    assert response.status_code == 200 and "[DONE]" in response.text
    assert response.headers["access-control-allow-origin"] == FRONTEND
    other = httpx.post(f"{base}/agents/todo/ai-sdk", content=ai_sdk_body("c2"),
                       headers={"Origin": EVIL, "Content-Type": "application/json"})
    assert other.status_code == 403


def test_a_refused_preflight_says_in_the_log_how_to_allow_the_origin(
        live_server: Serve, caplog: pytest.LogCaptureFixture) -> None:
    """Rule: an error says what to do. A server that allows no other origin answers a page's
    CORS preflight 405, which the browser shows its page only as "blocked by CORS policy": the
    server's log says which origin asked and how to allow it (it said nothing)."""
    base, _ = served(live_server)
    with caplog.at_level(logging.WARNING, logger="pyox_agents.server._cross_site"):
        preflight = httpx.options(f"{base}/agents/todo/ai-sdk", headers={
            "Origin": FRONTEND, "Access-Control-Request-Method": "POST"})
        plain = httpx.request("DELETE", f"{base}/agents/todo/ai-sdk")  # not a preflight
    assert preflight.status_code == plain.status_code == 405
    assert "access-control-allow-origin" not in preflight.headers
    (said,) = [r.getMessage() for r in caplog.records if "CORS preflight" in r.getMessage()]
    assert FRONTEND in said and f"--cors {FRONTEND}" in said


def test_cors_origins_must_be_origins() -> None:
    for bad in ("http://localhost:3000/", "localhost:3000", "http://x.example/app"):
        with pytest.raises(ValueError, match="scheme://host"):
            create_app({"todo": agent()}, cors_origins=[bad])


def test_a_foreign_host_is_refused_when_hosts_are_allowed(live_server: Serve) -> None:
    base, _ = served(live_server, allowed_hosts=["127.0.0.1", "*.example.com"])
    port = base.rsplit(":", 1)[1]
    refused = httpx.get(f"{base}/threads/t1", headers={"Host": f"evil.example:{port}"})
    assert refused.status_code == 400
    assert "'evil.example:" in refused.text and "--allowed-host evil.example" in refused.text
    assert httpx.get(f"{base}/agents", headers={"Host": f"app.example.com:{port}"}
                     ).status_code == 200
    assert httpx.get(f"{base}/agents").status_code == 200
    assert httpx.get(f"{base}/healthz", headers={"Host": "10.0.0.7"}).status_code == 200


def test_without_allowed_hosts_any_host_is_served(live_server: Serve) -> None:
    base, _ = served(live_server)
    assert httpx.get(f"{base}/agents", headers={"Host": "evil.example"}).status_code == 200


@pytest.mark.parametrize("bad", ["http://x.example", "x.example:80", "a.*.example"])
def test_allowed_hosts_must_be_names(bad: str) -> None:
    with pytest.raises(ValueError, match="allowed host"):
        create_app({"todo": agent()}, allowed_hosts=[bad])
