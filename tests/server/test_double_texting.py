"""A second message while a run is going on its thread (double texting): "enqueue" (the
default) waits for the run's end, then answers it with the first exchange in view; "reject"
answers 409; "interrupt" stops the running run at its next step boundary, its finished steps
kept and its stream ended "cancelled", then answers. Per agent and per request."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.state.messages import Message
from pyox_agents.stores import SQLiteStore


@tool
async def step(ctx: RunContext, n: int) -> str:
    """One slow step of a long task."""
    await asyncio.sleep(0.15)
    return f"step {n} done"


async def model(messages: list[Message], tools: Any) -> Any:
    """Works through 8 steps when asked to "work"; answers anything else after a pause."""
    users = [m for m in messages if m.role == "user"]
    since = messages[len(messages) - 1 - [m.role for m in reversed(messages)].index("user"):]
    steps = [m for m in since if m.role == "tool"]
    if users[-1].content == "work" and len(steps) < 8:
        return ToolCall("step", {"n": len(steps)})
    await asyncio.sleep(0.3)
    return f"answered {users[-1].content!r} knowing {[u.content for u in users]}"


def app(tmp_path: Path, **agent: Any) -> Any:
    return create_app({"a": Agent(FunctionModel(model), tools=[step], **agent)},
                      store=SQLiteStore(tmp_path / "t.db"))


def post(url: str, messages: list[dict[str, Any]], **props: Any) -> httpx.Response:
    body = {"threadId": "t", "runId": "r", "state": {}, "tools": [], "context": [],
            "forwardedProps": props, "messages": messages, "protocolVersion": "1.0"}
    return httpx.post(f"{url}/agents/a/ag-ui", json=body, timeout=60)


def events(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in response.text.splitlines()
            if line.startswith("data:")]


def user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "content": text}


def thread(url: str) -> list[tuple[str, str]]:
    got = httpx.get(f"{url}/threads/t").json()["messages"]
    return [(m["role"], m["content"]) for m in got]


def second_while_first_runs(url: str, first: list[dict[str, Any]],
                            second: list[dict[str, Any]], **props: Any
                            ) -> tuple[httpx.Response, httpx.Response, float]:
    """Send `first`, then `second` while its run goes; both answers and when the first
    ended, relative to the second's answer."""
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        one = pool.submit(post, url, first)
        time.sleep(0.25)  # the first run is going
        two = pool.submit(post, url, second, **props)
        first_answer = one.result()
        ended = time.monotonic()
        second_answer = two.result()
        return first_answer, second_answer, time.monotonic() - ended


def test_a_second_message_waits_for_the_run_then_is_answered(live_server: Any,
                                                              tmp_path: Path) -> None:
    url = live_server(app(tmp_path))
    one, two, _ = second_while_first_runs(url, [user("u1", "hello")],
                                          [user("u1", "hello"), user("u2", "and also")])
    assert one.status_code == two.status_code == 200
    assert events(one)[-1]["type"] == events(two)[-1]["type"] == "RUN_FINISHED"
    assert thread(url) == [
        ("user", "hello"), ("assistant", "answered 'hello' knowing ['hello']"),
        ("user", "and also"), ("assistant", "answered 'and also' knowing ['hello', 'and also']")]


def test_a_queued_run_gives_its_client_the_reply_it_missed(live_server: Any,
                                                            tmp_path: Path) -> None:
    """Rule: a client drops every message a MESSAGES_SNAPSHOT does not hold (`@ag-ui/client`
    0.0.x and 1.x alike), so a stream whose client missed some of the thread's messages (it
    sent while the first run went on) names them: it ended with the client's messages and its
    own, and the client lost the first run's reply until a reload."""
    url = live_server(app(tmp_path))
    _, two, _ = second_while_first_runs(url, [user("u1", "hello")],
                                        [user("u1", "hello"), user("u2", "and also")])
    got = events(two)
    snapshots = [e["messages"] for e in got if e["type"] == "MESSAGES_SNAPSHOT"]
    kept = httpx.get(f"{url}/threads/t").json()["messages"]
    assert [(m["role"], m.get("content")) for m in snapshots[-1]] == [
        (m["role"], m["content"]) for m in kept]
    assert [m["id"] for m in snapshots[-1] if m["role"] == "user"] == ["u1", "u2"]
    # it opens with what the client holds before the reply it missed, then the thread's
    # messages (a client keeps the ones it holds in its own order: u2 goes, then comes back
    # after the reply), all before the run's own
    assert [e["type"] for e in got[:3]] == ["RUN_STARTED", "MESSAGES_SNAPSHOT",
                                           "MESSAGES_SNAPSHOT"]
    assert [(m["id"], m["role"]) for m in snapshots[0]] == [("u1", "user")]
    opening = [(m["role"], m.get("content")) for m in snapshots[1]]
    assert opening == [(m["role"], m["content"]) for m in kept[:3]]
    assert ("assistant", "answered 'hello' knowing ['hello']") in opening


def test_reject_answers_409_and_changes_nothing(live_server: Any, tmp_path: Path) -> None:
    url = live_server(app(tmp_path))
    one, two, _ = second_while_first_runs(url, [user("u1", "hello")],
                                          [user("u1", "hello"), user("u2", "x")],
                                          doubleTexting="reject")
    assert one.status_code == 200 and two.status_code == 409
    assert "/ag-ui/t/stop" in two.json()["error"]  # it names how to stop the run
    assert [c for _, c in thread(url)] == ["hello", "answered 'hello' knowing ['hello']"]


def test_an_agent_that_rejects_answers_409(live_server: Any, tmp_path: Path) -> None:
    url = live_server(app(tmp_path, double_texting="reject"))
    _, two, _ = second_while_first_runs(url, [user("u1", "hello")],
                                        [user("u1", "hello"), user("u2", "x")])
    assert two.status_code == 409


def test_interrupt_stops_the_run_at_its_next_step_and_answers(live_server: Any,
                                                               tmp_path: Path) -> None:
    url = live_server(app(tmp_path))
    one, two, _ = second_while_first_runs(url, [user("u1", "work")],
                                          [user("u1", "work"), user("u2", "stop, do this")],
                                          doubleTexting="interrupt")
    first = events(one)
    assert first[-1]["type"] == "RUN_FINISHED"
    assert first[-1]["outcome"] == {"type": "cancelled"}
    done = [e for e in first if e["type"] == "TOOL_CALL_RESULT"]
    assert 1 <= len(done) < 8  # stopped after some steps, each one kept whole
    kept = thread(url)
    assert [c for r, c in kept if r == "tool"] == [f"step {n} done" for n in range(len(done))]
    assert kept[-2:] == [("user", "stop, do this"), (
        "assistant", "answered 'stop, do this' knowing ['work', 'stop, do this']")]
    assert two.status_code == 200


def test_at_most_four_requests_wait_for_one_thread(live_server: Any, tmp_path: Path) -> None:
    url = live_server(app(tmp_path))
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        running = pool.submit(post, url, [user("u1", "work")])
        time.sleep(0.25)
        waiting = [pool.submit(post, url, [user("u1", "work"), user(f"w{n}", f"w{n}")])
                   for n in range(5)]
        statuses = sorted(f.result().status_code for f in waiting)
        assert running.result().status_code == 200
    assert statuses == [200, 200, 200, 200, 409]


def test_an_unknown_choice_is_a_422_naming_the_field(live_server: Any, tmp_path: Path) -> None:
    url = live_server(app(tmp_path))
    answer = post(url, [user("u1", "hello")], doubleTexting="queue")
    assert answer.status_code == 422
    assert answer.json()["field"] == "forwardedProps.doubleTexting"
    with pytest.raises(ValueError, match="double_texting"):
        Agent(FunctionModel(model), double_texting="queue")  # type: ignore[arg-type]
