"""Everything the server sends, it accepts back; bad JSON is refused before a stream, with its path.

A real uvicorn server on 127.0.0.1 (in a thread of its own, so hypothesis can drive it from
plain sync tests). A state a tool produced, up to the limits on a request's state (depth, bytes,
`state_type`), comes back in the next request and is accepted; a tool write past a limit gets an
error result naming it. Random JSON with hostile strings and a depth around the limit, sent as a
request's state or written by a tool: never a 500, never a stream cut without its terminal event,
and a refusal names the path.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonpatch
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.server import ServerLimits, create_app
from pyox_agents.state.frozen import MAX_DEPTH
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.servers import frames, serving
from tests.state.test_json_rules import DOCS, nested

STATE_BYTES = 3_000
WRITE: dict[str, Any] = {"value": None}
"""What the `put` tool writes at state["doc"] (set by a test before its request)."""


class Todos(pydantic.BaseModel, extra="forbid"):
    items: list[str] = []


def _model(tool_name: str) -> FunctionModel:
    """Calls `tool_name` once after each user message, then answers "done"."""
    def reply(messages: list[Any], tools: list[Any]) -> Any:
        return ToolCall(tool_name, {}) if messages[-1].role == "user" else "done"
    return FunctionModel(reply)


def _agents() -> dict[str, Agent]:
    @tool
    def dig(ctx: RunContext) -> str:
        """Put a value as deep as the state may nest."""
        ctx.state["x"] = nested(MAX_DEPTH - 1)
        return "dug"

    @tool
    def fill(ctx: RunContext) -> str:
        """Add items of 100 characters, one at a time, until the state is full."""
        items = ctx.state.setdefault("items", [])
        items.append("y" * 100)
        return "filled"

    @tool
    def add_owner(ctx: RunContext) -> str:
        """Add a key the state type does not have."""
        ctx.state["owner"] = "ann"
        return "added"

    @tool
    def add_item(ctx: RunContext) -> str:
        """Add an item."""
        ctx.state.setdefault("items", []).append("milk")
        return "added"

    @tool
    def put(ctx: RunContext) -> str:
        """Write the test's value."""
        ctx.state["doc"] = WRITE["value"]
        return "put"

    return {
        "dig": Agent(model=_model("dig"), tools=[dig]),
        "fill": Agent(model=_model("fill"), tools=[fill]),
        "typed": Agent(model=_model("add_owner"), tools=[add_owner, add_item],
                       state_type=Todos),
        "typed_ok": Agent(model=_model("add_item"), tools=[add_owner, add_item],
                          state_type=Todos),
        "put": Agent(model=_model("put"), tools=[put]),
        "echo": Agent(model=FunctionModel(lambda messages, tools: "done")),
    }


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One server for the module, on an event loop in a thread of its own."""
    store = SQLiteStore(Path(tmp_path_factory.mktemp("db")) / "s.db")
    app = create_app(_agents(), store=store, limits=ServerLimits(state_bytes=STATE_BYTES))
    started: list[tuple[str, asyncio.AbstractEventLoop, asyncio.Event]] = []
    ready = threading.Event()

    async def main() -> None:
        stop = asyncio.Event()
        async with serving(app) as url:
            started.append((url, asyncio.get_running_loop(), stop))
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    assert ready.wait(30)
    url, loop, stop = started[0]
    yield url
    loop.call_soon_threadsafe(stop.set)
    thread.join(30)


_threads = iter(range(10**9))


def _thread() -> str:
    return f"t{next(_threads)}"


def ag_ui(client: httpx.Client, agent: str, thread: str, state: Any, turn: int = 0
          ) -> httpx.Response:
    """POST turn number `turn` of a thread (the client restates its earlier user messages)."""
    users = [{"id": f"u{n}", "role": "user", "content": f"go {n}"} for n in range(turn + 1)]
    body = {"threadId": thread, "runId": "r", "state": state, "tools": [], "context": [],
            "forwardedProps": {}, "messages": users}
    return client.post(f"/agents/{agent}/ag-ui", content=json.dumps(body), timeout=60,
                       headers={"content-type": "application/json"})


def ai_sdk(client: httpx.Client, agent: str, chat: str, state: Any) -> httpx.Response:
    body = {"id": chat, "trigger": "submit-message", "state": state,
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "go"}]}]}
    return client.post(f"/agents/{agent}/ai-sdk", content=json.dumps(body), timeout=60,
                       headers={"content-type": "application/json"})


def ag_ui_state(response: httpx.Response) -> tuple[Any, list[dict[str, Any]]]:
    """The state the client holds at the end of an AG-UI stream, and the stream's events."""
    assert response.status_code == 200, response.text
    events = frames(response.text)
    assert events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR"), events[-1]
    state: Any = None
    for event in events:
        if event["type"] == "STATE_SNAPSHOT":
            state = event["snapshot"]
        elif event["type"] == "STATE_DELTA":
            state = jsonpatch.apply_patch(state, event["delta"])
    return state, events


def tool_errors(events: list[dict[str, Any]]) -> list[str]:
    """The results of tool calls that did not succeed (every tool here answers one word)."""
    return [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"
            and e["content"] not in ("dug", "filled", "added", "put")]


def ai_sdk_chunks(response: httpx.Response) -> list[Any]:
    assert response.status_code == 200, response.text
    data = [line[5:].strip() for line in response.text.replace("\r\n", "\n").split("\n")
            if line.startswith("data:")]
    assert data[-1] == "[DONE]", data[-3:]
    return [json.loads(item) for item in data[:-1]]


# -- symmetry ----------------------------------------------------------------------------------


def test_state_a_tool_made_as_deep_as_allowed_is_accepted_back(base_url: str) -> None:
    with httpx.Client(base_url=base_url) as client:
        thread = _thread()
        state, events = ag_ui_state(ag_ui(client, "dig", thread, {}))
        assert state == {"x": nested(MAX_DEPTH - 1)} and events[-1]["type"] == "RUN_FINISHED"
        again, events = ag_ui_state(ag_ui(client, "echo", thread, state, 1))
        assert again == state and events[-1]["type"] == "RUN_FINISHED"
        chunks = ai_sdk_chunks(ai_sdk(client, "echo", _thread(), state))
        assert chunks[-1]["type"] == "finish"


def test_state_as_deep_as_allowed_comes_back_in_an_ai_sdk_data_state_part(base_url: str) -> None:
    state = {"x": nested(MAX_DEPTH - 1)}
    deep_input = {"x": nested(MAX_DEPTH - 1)}
    messages = [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "go"}]},
        {"id": "a1", "role": "assistant", "parts": [
            {"type": "data-state", "id": "state", "data": state},
            {"type": "tool-dig", "toolCallId": "c1", "state": "output-available",
             "input": deep_input, "output": "dug"}]},
        {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "again"}]},
    ]
    body = {"id": _thread(), "trigger": "submit-message", "messages": messages}
    with httpx.Client(base_url=base_url) as client:
        response = client.post("/agents/echo/ai-sdk", content=json.dumps(body), timeout=60,
                               headers={"content-type": "application/json"})
    chunks = ai_sdk_chunks(response)
    states = [c["data"] for c in chunks if c["type"] == "data-state"]
    assert states and states[-1] == state and chunks[-1]["type"] == "finish"


def test_tool_write_over_max_state_bytes_is_refused_and_what_was_sent_comes_back(
        base_url: str) -> None:
    with httpx.Client(base_url=base_url) as client:
        thread, state, refused = _thread(), {}, []
        for turn in range(40):
            state, events = ag_ui_state(ag_ui(client, "fill", thread, state, turn))
            assert events[-1]["type"] == "RUN_FINISHED"
            refused += tool_errors(events)
            if refused:
                break
        assert refused and f"is {STATE_BYTES:,}" in refused[0] and "max_state_bytes" in refused[0]
        assert len(json.dumps(state, separators=(",", ":"))) <= STATE_BYTES
        _, events = ag_ui_state(ag_ui(client, "echo", thread, state, turn + 1))
        assert events[-1]["type"] == "RUN_FINISHED"


def test_tool_commit_failing_the_state_type_is_refused_naming_the_field(base_url: str) -> None:
    with httpx.Client(base_url=base_url) as client:
        thread = _thread()
        state, events = ag_ui_state(ag_ui(client, "typed", thread, {"items": []}))
        (error,) = tool_errors(events)
        assert "owner: Extra inputs are not permitted" in error
        assert state == {"items": []}
        _, events = ag_ui_state(ag_ui(client, "typed", thread, state, 1))
        assert events[-1]["type"] == "RUN_FINISHED"


def test_a_state_deeper_than_the_limit_is_refused_with_its_path(base_url: str) -> None:
    with httpx.Client(base_url=base_url) as client:
        response = ag_ui(client, "echo", _thread(), {"x": nested(MAX_DEPTH)})
        assert response.status_code == 422
        assert 'state["x"]["a"]' in response.json()["error"]
        assert f"at most {MAX_DEPTH} levels" in response.json()["error"]


# -- hostile JSON, through every entry -----------------------------------------------------


@st.composite
def hostile(draw: st.DrawFn) -> Any:
    doc = draw(DOCS)
    if draw(st.booleans()):
        doc = nested(draw(st.integers(MAX_DEPTH - 3, MAX_DEPTH + 10)), doc)
    return {"doc": doc}


def _names_a_path(text: str) -> bool:
    return 'state["doc"]' in text or 'body["state"]' in text


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(doc=hostile())
def test_hostile_state_in_an_ag_ui_body_is_run_or_refused_with_its_path(
        base_url: str, doc: Any) -> None:
    with httpx.Client(base_url=base_url) as client:
        response = ag_ui(client, "echo", _thread(), doc)
    assert response.status_code in (200, 400, 413, 422), response.text
    if response.status_code == 200:
        state, events = ag_ui_state(response)
        # as JSON text: an escaped pair (\\ud83d\\ude00) is one character for every parser
        assert events[-1]["type"] == "RUN_FINISHED" and state == json.loads(json.dumps(doc))
    else:
        assert _names_a_path(response.json()["error"]), response.text


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(doc=hostile())
def test_hostile_state_in_an_ai_sdk_body_is_run_or_refused_with_its_path(
        base_url: str, doc: Any) -> None:
    with httpx.Client(base_url=base_url) as client:
        response = ai_sdk(client, "echo", _thread(), doc)
    assert response.status_code in (200, 400, 413, 422), response.text
    if response.status_code == 200:
        chunks = ai_sdk_chunks(response)
        assert chunks[-1]["type"] == "finish"
    else:
        assert _names_a_path(response.text), response.text


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(doc=hostile())
def test_hostile_value_written_by_a_tool_is_kept_or_refused_and_comes_back(
        base_url: str, doc: Any) -> None:
    WRITE["value"] = doc["doc"]
    thread = _thread()
    with httpx.Client(base_url=base_url) as client:
        state, events = ag_ui_state(ag_ui(client, "put", thread, {}))
        assert events[-1]["type"] == "RUN_FINISHED"
        errors = tool_errors(events)
        if errors:
            assert 'ctx.state["doc"]' in errors[0] and state == {}
        else:
            assert state == doc
        thread_view = client.get(f"/threads/{thread}")
        assert thread_view.status_code == 200, thread_view.text
        _, events = ag_ui_state(ag_ui(client, "echo", thread, state, 1))
        assert events[-1]["type"] == "RUN_FINISHED"


@pytest.mark.parametrize("send", [ag_ui, ai_sdk], ids=["ag-ui", "ai-sdk"])
def test_a_refused_path_through_a_lone_surrogate_key_is_named_escaped(
        base_url: str, send: Any) -> None:
    """A state nested too deep through a key holding a lone surrogate is refused with a 4xx naming
    the path, the key written escaped: the error body is JSON text that encodes (never a 500)."""
    doc = {"doc": nested(MAX_DEPTH, {"k\udcff": nested(10, 1)})}
    with httpx.Client(base_url=base_url) as client:
        response = send(client, "echo", _thread(), doc)
    assert response.status_code in (400, 422), response.text
    is_json = response.headers["content-type"].startswith("application/json")
    assert _names_a_path(str(response.json()) if is_json else response.text), response.text
