"""A run's frames have the same ids on every process, so a client that got some of a run on A
resumes after the last one on B (`Last-Event-ID`): on one real Redis and on one real PostgreSQL
(the `cluster` fixture), on the AI SDK resume route and on AG-UI `connect`. (With real clients
and a cut connection: tests/e2e/test_gapless_reconnect_e2e.py.)"""

from __future__ import annotations

import uuid

import httpx

from tests.multiprocess.test_shared_redis import (
    AGENT,
    Cluster,
    ag_ui_body,
    ai_sdk_body,
    cluster,  # noqa: F401 - a fixture, used by name
)
from tests.postgres_server import postgres_server  # noqa: F401 - a fixture, used by name
from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name
from tests.server.test_resume_after_an_id import Reader


def test_a_run_on_a_resumes_on_b_after_the_last_frame_got_on_a(
    cluster: Cluster,  # noqa: F811 - the fixture
) -> None:
    a, b = cluster.start("A", "B", lease_ttl=10)
    chat, thread = f"c-{uuid.uuid4().hex[:8]}", f"t-{uuid.uuid4().hex[:8]}"
    sdk = Reader("POST", f"{a.url}/agents/{AGENT}/ai-sdk",
                 json=ai_sdk_body(chat, "note:one note:two wait:g1", state={"notes": []}))
    agui = Reader("POST", f"{a.url}/agents/{AGENT}/ag-ui",
                  json=ag_ui_body(thread, "r1", "note:one wait:g2", protocolVersion="1.0"))
    cluster.started("g1")
    cluster.started("g2")
    got = sdk.until(lambda f: any(d["type"] == "tool-input-available" and
                                  d["toolName"] == "wait_gate" for _, d in f))
    got_agui = agui.until(lambda f: any(d["type"] == "TOOL_CALL_END" for _, d in f)
                          and sum(d["type"] == "TOOL_CALL_END" for _, d in f) == 2)
    last, last_agui = got[-1][0], got_agui[-1][0]
    assert last is not None and last_agui is not None
    resume = f"{b.url}/agents/{AGENT}/ai-sdk/{chat}/stream"
    rest = Reader("GET", resume, headers={"Last-Event-ID": last})
    whole = Reader("GET", resume)  # (the store logs a change without its state: B makes it)
    connect = Reader("POST", f"{b.url}/agents/{AGENT}/ag-ui/connect",
                     headers={"Last-Event-ID": last_agui}, json=ag_ui_body(thread, "r2"))
    past = httpx.get(resume, headers={"Last-Event-ID": "9999"}, timeout=10)
    assert past.status_code == 400 and "has no event 9999" in past.text
    rest.until(lambda f: rest.status != 0)
    whole.until(lambda f: whole.status != 0)
    connect.until(lambda f: connect.status != 0)
    cluster.open("g1")
    cluster.open("g2")
    everything, everything_agui = sdk.done(), agui.done()
    assert got + rest.done() == everything  # on B, the frames after the last one A gave
    assert whole.done() == everything
    notes = [d["data"]["notes"] for _, d in everything
             if isinstance(d, dict) and d["type"] == "data-state"]
    assert ["one"] in notes and notes[-1] == ["one", "two"], notes
    tail = [(i, d) for i, d in connect.done() if i is not None]
    want = everything_agui[len(got_agui):]
    assert [i for i, _ in tail] == [i for i, _ in want]
    assert [d["type"] for _, d in tail] == [d["type"] for _, d in want]
