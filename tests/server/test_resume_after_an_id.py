"""Every frame of a run's stream carries its SSE `id:` (its event's index in the run's log, and
how many frames of that event follow it), and a stream resumed after an id (`Last-Event-ID`,
or `?startIndex=`) gives exactly the frames after it: on the AI SDK resume route and on AG-UI
`connect`. Bad ids are refused 400 before any stream. Against a real server on 127.0.0.1 (the
cut connection, real clients and two processes: tests/e2e/test_gapless_reconnect_e2e.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, tool
from pyox_agents.adapters import Cursor, parse_cursor
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore

Serve = Callable[[Any], str]
Frame = tuple[str | None, Any]
"""A frame's id (None: it has none) and its data (JSON, or "[DONE]")."""


class Reader(threading.Thread):
    """Reads one SSE response in the background, frame by frame."""

    def __init__(self, method: str, url: str, **kwargs: Any) -> None:
        super().__init__(daemon=True)
        self.method, self.url, self.kwargs = method, url, kwargs
        self.frames: list[Frame] = []
        self.status = 0
        self.text = ""
        self.start()

    def run(self) -> None:
        with httpx.Client(timeout=20) as client, \
                client.stream(self.method, self.url, **self.kwargs) as response:
            self.status = response.status_code
            if response.status_code != 200:
                self.text = response.read().decode()
                return
            ident: str | None = None
            data: list[str] = []
            for line in response.iter_lines():
                if line.startswith("id: "):
                    ident = line[4:]
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif not line and data:
                    text = "\n".join(data)
                    self.frames.append((ident, text if text == "[DONE]" else json.loads(text)))
                    ident, data = None, []

    def until(self, found: Callable[[list[Frame]], bool]) -> list[Frame]:
        """The frames so far, once `found` says they are enough."""
        for _ in range(1000):
            if found(self.frames) or not self.is_alive():
                break
            threading.Event().wait(0.01)
        assert found(self.frames), (self.status, self.text, self.frames)
        return list(self.frames)

    def done(self) -> list[Frame]:
        self.join(20)
        assert not self.is_alive() and self.status == 200, (self.status, self.text)
        return self.frames


Served = tuple[str, threading.Event, threading.Event]


@pytest.fixture
def served(live_server: Serve) -> Iterator[Served]:
    """A server whose agent writes a few words, calls a tool that waits for the test (the
    gate), then answers: its URL, the event the tool sets once it waits, and the gate."""
    gate, entered = threading.Event(), threading.Event()

    @tool
    def wait() -> str:
        """Wait for the test."""
        entered.set()
        gate.wait(20)
        return "opened"

    agent = Agent(ScriptedModel([["a few words first ", ToolCall("wait", {})], "done now"]),
                  tools=[wait])
    base = live_server(create_app({"a": agent}, store=MemoryStore()))
    yield base, entered, gate
    gate.set()


def _bare(frames: list[Frame]) -> list[Frame]:
    """The frames without the time each AG-UI event was sent."""
    return [(ident, {k: v for k, v in data.items() if k != "timestamp"}
             if isinstance(data, dict) else data) for ident, data in frames]


def _after(frames: list[Frame], ident: str) -> list[Frame]:
    at = [i for i, _ in frames].index(ident)
    return frames[at + 1:]


def _order(ident: str | None) -> tuple[int, int]:
    cursor = parse_cursor(ident, None)
    assert cursor is not None
    return cursor.index, -cursor.left


def _opened(*readers: Reader) -> None:
    for reader in readers:
        reader.until(lambda f, reader=reader: reader.status != 0)  # type: ignore[misc]


CHAT = {"id": "c1", "trigger": "submit-message",
        "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "go"}]}]}


def test_every_ai_sdk_frame_has_an_id_and_a_resume_after_one_gives_the_rest(
        served: Served) -> None:
    base, entered, gate = served
    run = Reader("POST", f"{base}/agents/a/ai-sdk", json=CHAT)
    assert entered.wait(10)
    so_far = run.until(lambda f: any(d["type"] == "tool-input-available" for _, d in f))
    several = next(i for i, _ in so_far if i is not None and "." in i)  # a frame of `start`
    plain = so_far[-1][0]
    assert plain is not None and "." not in plain
    resume = f"{base}/agents/a/ai-sdk/c1/stream"
    whole = Reader("GET", resume)
    mid_event = Reader("GET", resume, headers={"Last-Event-ID": several})
    after = Reader("GET", resume, headers={"Last-Event-ID": plain})
    start = Reader("GET", f"{resume}?startIndex={_order(plain)[0]}")
    _opened(whole, mid_event, after, start)
    gate.set()
    everything = run.done()
    order = [_order(i) for i, _ in everything[:-1]]
    assert order == sorted(order) and len(set(order)) == len(order)  # in order, each once
    assert everything[-1] == (None, "[DONE]")
    assert whole.done() == everything
    assert mid_event.done() == _after(everything, several)
    assert after.done() == _after(everything, plain)
    assert start.done() == [f for f in everything  # (startIndex: from event `plain` on)
                            if f[0] is None or _order(f[0])[0] >= _order(plain)[0]]


def test_an_ag_ui_connect_after_an_id_starts_the_run_again_then_gives_the_rest(
        served: Served) -> None:
    """@ag-ui/client checks each stream alone: the resumed one opens with RUN_STARTED and the
    start of what the frames before the id left open (no id: they are not the log's)."""
    base, entered, gate = served
    body = {"threadId": "t1", "runId": "r1", "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [{"id": "m1", "role": "user", "content": "go"}]}
    run = Reader("POST", f"{base}/agents/a/ag-ui", json=body)
    assert entered.wait(10)
    so_far = run.until(lambda f: any(d["type"] == "TOOL_CALL_END" for _, d in f))
    in_text = next(i for i, d in so_far if d["type"] == "TEXT_MESSAGE_CONTENT")
    assert in_text is not None
    connect = {**body, "runId": "r2"}
    resumed = Reader("POST", f"{base}/agents/a/ag-ui/connect", json=connect,
                     headers={"Last-Event-ID": in_text})
    _opened(resumed)
    gate.set()
    everything, got = _bare(run.done()), _bare(resumed.done())
    order = [_order(i) for i, _ in everything]
    assert order == sorted(order) and len(set(order)) == len(order)
    opening = [d["type"] for i, d in got if i is None]
    assert opening == ["RUN_STARTED", "STEP_STARTED", "TEXT_MESSAGE_START"]
    assert got[0][1]["runId"] == "r2"
    rest = [(i, d) for i, d in got if i is not None]
    want = _after(everything, in_text)
    assert [i for i, _ in rest] == [i for i, _ in want]
    assert [d for _, d in rest][:-1] == [d for _, d in want][:-1]  # (RUN_FINISHED's runId)


@pytest.mark.parametrize(("header", "query", "says"), [
    ("abc", None, "Last-Event-ID 'abc' is not the id"),
    ("-1", None, "is not the id"),
    ("1.2.3", None, "is not the id"),
    (None, "-1", "startIndex '-1' must be a whole number"),
    (None, "x", "must be a whole number"),
    ("999", None, "has no event 999"),
    (None, "1000", "has no event 999"),
])
def test_a_bad_id_or_index_is_refused_before_the_stream(
        served: Served, header: str | None, query: str | None, says: str) -> None:
    base, entered, _ = served
    run = Reader("POST", f"{base}/agents/a/ai-sdk", json=CHAT)
    assert entered.wait(10)
    headers = {"Last-Event-ID": header} if header is not None else {}
    params = {"startIndex": query} if query is not None else {}
    sdk = httpx.get(f"{base}/agents/a/ai-sdk/c1/stream", headers=headers, params=params)
    assert sdk.status_code == 400 and says in sdk.text, sdk.text
    connect = httpx.post(f"{base}/agents/a/ag-ui/connect", headers=headers, params=params,
                         json={"threadId": "c1", "runId": "r", "messages": []})
    assert connect.status_code == 400 and says in connect.json()["error"], connect.text
    del run


def test_cursors_read_as_documented() -> None:
    assert parse_cursor(None, None) is None
    assert parse_cursor("12", "3") == Cursor(12)  # Last-Event-ID wins
    assert parse_cursor("12.2", None) == Cursor(12, 2)
    assert parse_cursor("3f2a9c1b:12.2", None) == Cursor(12, 2, "3f2a9c1b")
    assert parse_cursor(None, "0") == Cursor(-1)
    assert parse_cursor(None, "5") == Cursor(4)


def test_every_id_names_its_run_and_an_id_of_a_run_that_ended_resumes_nothing_of_another(
        served: Served) -> None:
    """Rule: an id kept from a run that has ended is never read as an index into the run going
    on now: the AI SDK resume answers 204 (nothing of that run is left to resume), AG-UI
    connect gives the thread with the run going on from its start."""
    base, entered, gate = served
    run = Reader("POST", f"{base}/agents/a/ai-sdk", json=CHAT)
    assert entered.wait(10)
    so_far = run.until(lambda f: any(d["type"] == "tool-input-available" for _, d in f))
    tags = {i.split(":")[0] for i, _ in so_far if i is not None}
    assert len(tags) == 1 and all(len(t) == 8 for t in tags), so_far  # one run, one tag
    ended = f"{'0' if next(iter(tags))[0] != '0' else '1'}{next(iter(tags))[1:]}:3"
    sdk = httpx.get(f"{base}/agents/a/ai-sdk/c1/stream", headers={"Last-Event-ID": ended})
    assert sdk.status_code == 204, sdk.text
    connect = Reader("POST", f"{base}/agents/a/ag-ui/connect", headers={"Last-Event-ID": ended},
                     json={"threadId": "c1", "runId": "r", "messages": []})
    _opened(connect)
    gate.set()
    run.done()
    kinds = [d["type"] for _, d in connect.done()]
    assert kinds[:2] == ["RUN_STARTED", "MESSAGES_SNAPSHOT"] and "TEXT_MESSAGE_START" in kinds


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ["ag-ui", "ai-sdk"])
async def test_a_resume_after_the_runs_last_frame_gives_nothing_more(protocol: str) -> None:
    """A reader that has the run's end (its last frame's id) gets no frame of the run again:
    AG-UI nothing at all (no RUN_STARTED that nothing ends), the AI SDK its `[DONE]`."""
    from ag_ui.core import RunAgentInput

    from pyox_agents.adapters import ag_ui, ai_sdk
    from pyox_agents.events import RunFinished, RunStarted, TextDelta, TextEnded, TextStarted

    events = [RunStarted("r", "t", {}), TextStarted("m"), TextDelta("m", "hi"),
              TextEnded("m", "hi"), RunFinished("hi", {})]

    async def reads() -> Any:
        yield 0, events

    last = Cursor(len(events) - 1)
    if protocol == "ag-ui":
        run_input = RunAgentInput(thread_id="t", run_id="r", state={}, messages=[], tools=[],
                                  context=[], forwarded_props={})
        assert [chunk async for chunk in ag_ui.frame_log(run_input, reads(), after=last)] == []
    else:
        chat, _ = ai_sdk.parse_request(json.dumps(CHAT).encode(), {})
        frames = [chunk async for chunk in ai_sdk.frame_log(chat, reads(), after=last)]
        assert frames == [b"data: [DONE]\n\n"]
