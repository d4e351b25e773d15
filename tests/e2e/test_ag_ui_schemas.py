"""Every event of the AG-UI test corpus parses with the clients' own zod schemas.

`@ag-ui/client` 0.0.59 (what `@copilotkit/react-core` 1.74 and `@copilotkit/runtime` 1.75 bundle)
parses each event with `@ag-ui/core` 0.0.59's strict `EventSchemas`; one event it refuses fails
the run in the browser. The corpus: the streams of the requests of
`tests/reliability/corpus_ag_ui.py` that the server accepts (and of the runs that seed its
threads: a backend tool's state change, an approval interrupt), served by `create_app`, and
hand-made runtime-event sequences (the cases of tests/ag_ui/test_translate.py) for what a
scripted run rarely produces: reasoning, subagents, a frontend tool's pending call, a cancelled
run, an input interrupt, a failed run, usage, a tool's live events (custom, activity, sources,
files, preliminary results, PredictState). Without `protocolVersion` in the request every
event must parse with 0.0.59's schemas; with "1.0", with 1.0's.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents.adapters.ag_ui import connect_batches, encode_event, thread_messages, translate
from pyox_agents.events import (
    ApprovalRequested,
    CustomEvent,
    FileAttached,
    PreliminaryResult,
    Progress,
    ReasoningDelta,
    ReasoningEnded,
    ReasoningStarted,
    RunFailed,
    RunFinished,
    RuntimeEvent,
    SourceCited,
    StateChanged,
    StepFinished,
    StepStarted,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    TextStarted,
    ToolCallStarted,
    ToolResult,
)
from pyox_agents.server import ServerLimits, bearer_tokens, create_app
from pyox_agents.state.frozen import freeze
from pyox_agents.state.messages import Usage
from pyox_agents.state.run import AgentError
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.helpers import run_input
from tests.ag_ui.test_translate import START, approval, call, text
from tests.ag_ui.verify import check_stream, sse_events
from tests.reliability import corpus_ag_ui
from tests.reliability.corpus_common import (
    INTERRUPT,
    MAX_BODY,
    MESSAGES,
    RUNS_PER_PRINCIPAL,
    STATE_BYTES,
    TOKENS,
)
from tests.reliability.test_bad_requests import Gate, agents, auth

RunNode = Any
SCHEMAS = {"0.0": "agui0059-core", "1.0": "@ag-ui/core/schemas"}
"""The module whose `EventSchemas` the client of each declared version parses events with."""

SUB, INNER = "b" * 64, "c" * 64
SEQUENCES: dict[str, list[RuntimeEvent]] = {
    "text-and-steps": [START, StepStarted(0), *text("m1", "Hel", "lo"), StepFinished(0),
                       RunFinished("Hello", freeze({}), usage=Usage(10, 5, 1))],
    "reasoning": [START, ReasoningStarted("m1"), ReasoningDelta("m1", "think"),
                  ReasoningEnded("m1", "think"), *text("m1", "done"),
                  RunFinished("done", freeze({}))],
    "backend-tool": [START, *call("c1", "add", "m1"),
                     ToolResult("c1", "add", result={"added": 1}),
                     StateChanged(({"op": "add", "path": "/todos/0", "value": "a"},),
                                  freeze({"todos": ["a"]}), call_id="c1", version=1),
                     ToolResult("c2", "add", error="the service is down"),
                     RunFinished(None, freeze({"todos": ["a"]}))],
    "frontend-tool": [START, *call("c1", "pick_color", "m1"),
                      RunFinished(None, freeze({}), pending_call_ids=("c1",))],
    "cancelled": [START, StepStarted(0), TextStarted("m1"), TextDelta("m1", "par"),
                  ToolCallStarted("c1", "t", "m1"),
                  RunFinished(None, freeze({}), outcome="cancelled")],
    "approval-interrupt": [START, *call("c1", "delete", "m1"), ApprovalRequested(approval()),
                           RunFinished(None, freeze({}), outcome="interrupt")],
    "input-interrupt": [START, ApprovalRequested(approval({"type": "string"})),
                        RunFinished(None, freeze({}), outcome="interrupt")],
    "subagents": [START, *call("c1", "r", "m1"), SubagentStarted(SUB, "c1", "r", "ch"),
                  *call("c2", "deep", "m2", run_id=SUB),
                  SubagentStarted(INNER, "c2", "deep", "ch2"),
                  *text("m3", "found", run_id=INNER), SubagentFinished(INNER, "c2", answer=1),
                  SubagentFinished(SUB, "c1", answer=2), RunFinished("ok", freeze({}))],
    "failed-subagent": [START, *call("c1", "r", "m1"), SubagentStarted(SUB, "c1", "r", "ch"),
                        StepStarted(0, run_id=SUB), SubagentFinished(SUB, "c1", error="down"),
                        RunFinished("ok", freeze({}))],
    "open-subagent-cancelled": [START, SubagentStarted(SUB, "c1", "r", "ch"),
                                TextStarted("m2", run_id=SUB),
                                RunFinished(None, freeze({}), outcome="cancelled")],
    "run-failed": [START, StepStarted(0), ReasoningStarted("m1"), TextStarted("m1"),
                   ToolCallStarted("c1", "t", "m1"),
                   RunFailed(AgentError("model_error", "the provider answered 503"))],
    "internal-error": [START, RunFailed(AgentError("internal_error", "KeyError: 'x'"))],
    "failed-before-start": [RunFailed(AgentError("model_error", "down"))],
    "tool-events": [START, CustomEvent("PredictState", freeze([
                        {"state_key": "document", "tool": "write", "tool_argument": "text"}])),
                    *call("c1", "write", "m1"),
                    CustomEvent("weather", freeze({"city": "Oslo"}), call_id="c1"),
                    CustomEvent("nothing", None, call_id="c1"),
                    Progress("c1-steps", "steps", freeze({"done": []}), call_id="c1"),
                    Progress("c1-steps", "steps", freeze({"done": ["a"]}),
                             [{"op": "add", "path": "/done/0", "value": "a"}], call_id="c1"),
                    Progress("c1-n", "count", 1, call_id="c1"),
                    Progress("c1-n", "count", 2, [{"op": "replace", "path": "", "value": 2}],
                             call_id="c1"),
                    SourceCited("c1-source-1", url="https://example.com", call_id="c1"),
                    SourceCited("c1-source-2", title="Q3", media_type="application/pdf",
                                call_id="c1"),
                    FileAttached("data:text/plain;base64,aGk=", "text/plain", call_id="c1"),
                    PreliminaryResult("c1", "write", freeze({"n": 1})),
                    ToolResult("c1", "write", result="ok"),
                    SubagentStarted(SUB, "c1", "r", "ch"),
                    CustomEvent("tick", 1, call_id="c2", run_id=SUB),
                    Progress("c2-p", "p", freeze({"n": 1}), call_id="c2", run_id=SUB),
                    Progress("c2-p", "p", freeze({"n": 2}),
                             [{"op": "replace", "path": "/n", "value": 2}], call_id="c2",
                             run_id=SUB),
                    SubagentFinished(SUB, "c1", answer=1), RunFinished("ok", freeze({}))],
}


async def _iterate(events: Iterable[RuntimeEvent]) -> AsyncIterator[RuntimeEvent]:
    for event in events:
        yield event


async def translated_streams(declared: str | None) -> list[list[dict[str, Any]]]:
    given = run_input(protocolVersion=declared)
    streams = [[json.loads(encode_event(event)) async for event in translate(given, _iterate(seq))]
               for seq in SEQUENCES.values()]
    child = run_input(protocolVersion=declared, parentRunId="run-before")
    streams.append([json.loads(encode_event(e))
                    async for e in translate(child, _iterate(SEQUENCES["text-and-steps"]))])
    return streams + await connect_streams(given)


async def connect_streams(given: Any) -> list[list[dict[str, Any]]]:
    """A connect's streams: a paused thread's history, and a run's live tail."""
    records = [{"id": "u1", "role": "user", "content": "hi", "tool_calls": [], "call_id": None},
               {"id": "m1", "role": "assistant", "content": "", "call_id": None,
                "tool_calls": [{"id": "c1", "name": "delete", "arguments": {"x": 1}}]},
               {"id": "result-c0", "role": "tool", "content": "boom", "call_id": "c0",
                "tool_calls": [], "is_error": True, "result": None}]
    messages = thread_messages(records, [])

    async def tail() -> AsyncIterator[list[RuntimeEvent]]:
        yield SEQUENCES["tool-events"]

    out = []
    for batches in (connect_batches(given, messages, state={"n": 1}, pending=approval()),
                    connect_batches(given, messages, tail=tail())):
        out.append([json.loads(encode_event(e)) async for batch in batches for e in batch])
    return out


def declaring(body: bytes, declared: str | None) -> bytes:
    """`body` (a JSON object) with `protocolVersion` set to `declared`, or without it."""
    data = json.loads(body)
    data.pop("protocolVersion", None)
    if declared is not None:
        data["protocolVersion"] = declared
    return json.dumps(data).encode()


async def corpus_streams(tmp_path: Path, declared: str | None) -> list[list[dict[str, Any]]]:
    """The streams of the seed runs and of the accepted requests of `corpus_ag_ui`."""
    accepted = [case for case in corpus_ag_ui.CASES if case.status == 200]
    assert accepted, "the corpus has requests the server accepts"
    gate = Gate()
    app = create_app(agents(gate), store=SQLiteStore(tmp_path / "store.db"),
                     auth=bearer_tokens(TOKENS), max_body=MAX_BODY,
                     limits=ServerLimits(state_bytes=STATE_BYTES, messages=MESSAGES,
                                         runs_per_principal=RUNS_PER_PRINCIPAL))
    streams = []
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:

        async def post(body: bytes) -> list[dict[str, Any]]:
            response = await client.post(
                "/agents/todo/ag-ui", content=declaring(body, declared),
                headers={"content-type": "application/json", **auth("tok-ann")})
            assert response.status_code == 200, response.text
            return sse_events(response.text)

        for thread, words in (("ann-thread", "add one"), ("ann-paused", "wipe")):
            streams.append(await post(json.dumps({
                "threadId": thread, "runId": "seed", "state": {"items": ["kept"]},
                "messages": [{"id": "u1", "role": "user", "content": words}]}).encode()))
        interrupt = streams[-1][-1]["outcome"]["interrupts"][0]["id"]
        for case in accepted:
            streams.append(await post(case.body.replace(INTERRUPT.encode(), interrupt.encode())))
    gate.close()
    return streams


@pytest.mark.parametrize("declared", [None, "1.0"])
def test_every_event_of_the_corpus_parses_with_the_declared_clients_schemas(
        run_node: RunNode, tmp_path: Path, declared: str | None) -> None:
    """Without protocolVersion: 0.0.59's `EventSchemas`; with "1.0": 1.0's."""
    client = "1.0" if declared else "0.0"
    streams = anyio.run(translated_streams, declared)
    streams += anyio.run(corpus_streams, tmp_path, declared)
    kinds = {event["type"] for events in streams for event in events}
    assert {"REASONING_START", "SUBAGENT_STARTED", "SUBAGENT_ERROR", "STATE_DELTA", "RUN_ERROR",
            "TOOL_CALL_RESULT", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT", "CUSTOM",
            "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"} <= kinds
    outcomes = [e.get("outcome", {}).get("type") for s in streams for e in s
                if e["type"] == "RUN_FINISHED"]
    assert "interrupt" in outcomes
    for events in streams:
        check_stream(events, client=client)
    path = tmp_path / "streams.json"
    path.write_text(json.dumps(streams))
    report = run_node("agui_schemas.mjs", SCHEMAS[client], str(path))
    assert report["checked"] == sum(len(events) for events in streams)
    assert report["failures"] == [], json.dumps(report["failures"][:5], indent=1)


@pytest.mark.parametrize("client", ["1.0", "0.0"])
def test_the_capabilities_parse_with_the_clients_agent_capabilities_schema(
        run_node: RunNode, serve: Any, tmp_path: Path, client: str) -> None:
    """`GET /agents/{name}/ag-ui/capabilities` "answers a body that `@ag-ui/core`'s
    `AgentCapabilitiesSchema` accepts"."""
    gate = Gate()
    app = create_app(agents(gate), store=SQLiteStore(tmp_path / "store.db"))
    url = f"{serve(app)}/agents/todo/ag-ui/capabilities"
    report = run_node("agui_capabilities.mjs", SCHEMAS[client], url)
    gate.close()
    assert report["status"] == 200 and report["success"], report["issues"]
    assert report["body"]["tools"]["items"] and report["body"]["state"]["deltas"] is True
