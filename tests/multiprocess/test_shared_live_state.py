"""Live shared state across server processes, on one real Redis and on one real PostgreSQL.

A tab follows a thread on process B (`GET /threads/{id}/events`) while the run goes on process A,
and a person's edit reaches process B: the tab sees every version and the run's start and end,
from either process, in one order; an edit sent to B during A's run is committed once that run
ends (rebased over it, the person's write kept), never refused or lost; an idle edit on one
process reaches the tabs of the other. Each test runs once per backend (the `cluster` fixture).
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

import anyio
import httpx
import pytest

from tests.multiprocess.test_shared_redis import (
    AGENT,
    WAIT,
    Cluster,
    Server,
    Stream,
    ag_ui_body,
    cluster,  # noqa: F401 - a fixture, used by name
    wait_until,
)
from tests.postgres_server import postgres_server  # noqa: F401 - a fixture, used by name
from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name


def run_on(server: Server, thread: str, plan: str, state: Any = None,
           run_id: str | None = None) -> Stream:
    """An AG-UI run of `plan` on `server` (its request's `runId`: `run_id`, or a new one),
    streamed in the background."""
    body = ag_ui_body(thread, run_id or f"r-{uuid.uuid4().hex[:8]}", plan)
    body["messages"][0]["id"] = f"u-{uuid.uuid4().hex[:8]}"  # (only its new message, as
    if state is not None:                                    # clients send it)
        body["state"] = state
    return Stream("POST", f"{server.url}/agents/{AGENT}/ag-ui", body)


def follow(server: Server, thread: str) -> Stream:
    """A tab following the thread's feed on `server`."""
    return Stream("GET", f"{server.url}/threads/{thread}/events")


def items(tab: Stream, kind: str) -> list[dict[str, Any]]:
    return [item for item in tab.frames if isinstance(item, dict) and item["type"] == kind]


def tab_state(tab: Stream) -> tuple[int, Any]:
    """The version and state a tab holds: its snapshot with every state item after it, in the
    order of their numbers (two processes append to the feed log each in its own order; a
    client that sees a gap takes a fresh snapshot), with none missing."""
    import jsonpatch  # (a test-only dependency)

    (snapshot,) = items(tab, "snapshot")
    version, state = snapshot["version"], snapshot["state"]
    for item in sorted(items(tab, "state"), key=lambda item: int(item["version"])):
        assert item["version"] == version + 1, f"version {item['version']} after {version}"
        state = jsonpatch.apply_patch(state, item["delta"])
        version = item["version"]
    return version, state


def kept(server: Server, thread: str) -> dict[str, Any]:
    answer = httpx.get(f"{server.url}/threads/{thread}", timeout=WAIT)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_a_tab_on_b_follows_a_run_on_a_and_an_edit_on_b_waits_for_it(
    cluster: Cluster,  # noqa: F811 - the fixture
) -> None:
    """Rule: a tab follows its thread whichever process runs it, and a person's edit sent to
    another process than the run's is committed once the run ends, rebased over it (the
    person's write kept), with the same versions on every tab and in the kept state."""
    a, b = cluster.start("A", "B", lease_ttl=10)
    thread = f"t-{uuid.uuid4().hex[:8]}"
    first = run_on(a, thread, "note:one", state={"notes": []}).finish(cluster)
    assert first[-1]["type"] == "RUN_FINISHED", first

    on_b, on_a = follow(b, thread), follow(a, thread)
    wait_until(lambda: items(on_b, "snapshot") and items(on_a, "snapshot"), "both snapshots",
               cluster)
    base, state = tab_state(on_b)
    assert state["notes"] == ["one"]

    running = run_on(a, thread, "note:two wait:g1")
    assert cluster.started("g1").startswith("A ")
    wait_until(lambda: items(on_b, "state"), "the run's version on B's tab", cluster)
    assert items(on_b, "run_started")

    answer: dict[str, Any] = {}

    def edit() -> None:  # the person, on B, during A's run, on the version B's tab showed
        sent = httpx.patch(f"{b.url}/agents/{AGENT}/threads/{thread}/state", timeout=WAIT * 2,
                           json={"base": base,
                                 "patch": [{"op": "replace", "path": "/notes/0",
                                            "value": "one, by hand"}]})
        answer.update(status=sent.status_code, body=sent.json())

    editing = threading.Thread(target=edit)
    editing.start()
    cluster.open("g1")
    assert running.finish(cluster)[-1]["type"] == "RUN_FINISHED"
    editing.join(WAIT * 2)
    assert answer.get("status") == 200, answer

    want = ["one, by hand", "two"]
    for tab in (on_a, on_b):
        wait_until(lambda tab=tab: tab_state(tab)[1].get("notes") == want,  # type: ignore[misc]
                   "the edit on every tab", cluster)
        assert items(tab, "run_finished")
        assert [i["by"] for i in items(tab, "state")][-1] == "person"
    assert tab_state(on_a)[0] == tab_state(on_b)[0] == answer["body"]["version"]
    for server in (a, b):
        assert kept(server, thread)["state"]["notes"] == want


def test_an_idle_edit_on_one_process_reaches_the_tabs_of_the_other(
    cluster: Cluster,  # noqa: F811 - the fixture
) -> None:
    """Rule: every open tab sees a person's edit, whichever process took it: an edit made on A
    with no run going reaches a tab that follows on B, and B's next run starts from it."""
    a, b = cluster.start("A", "B", lease_ttl=10)
    thread = f"t-{uuid.uuid4().hex[:8]}"
    run_on(b, thread, "note:one", state={"notes": []}).finish(cluster)
    on_b = follow(b, thread)
    wait_until(lambda: items(on_b, "snapshot"), "B's snapshot", cluster)
    base, _ = tab_state(on_b)

    sent = httpx.patch(f"{a.url}/agents/{AGENT}/threads/{thread}/state", timeout=WAIT,
                       json={"base": base, "patch": [{"op": "add", "path": "/notes/-",
                                                      "value": "by hand"}]})
    assert sent.status_code == 200, sent.text
    wait_until(lambda: tab_state(on_b)[1]["notes"] == ["one", "by hand"],
               "A's edit on B's tab", cluster)

    assert run_on(b, thread, "note:two").finish(cluster)[-1]["type"] == "RUN_FINISHED"
    wait_until(lambda: tab_state(on_b)[1]["notes"] == ["one", "by hand", "two"],
               "B's run after the edit", cluster)


def test_edits_on_a_process_that_just_learnt_nobody_follows_reach_a_new_tab_elsewhere(
    cluster: Cluster,  # noqa: F811 - the fixture
) -> None:
    """Rule: every open tab sees every version. A process trusts for a second what it read of
    whether anyone follows a thread (so a thread nobody follows costs no appends); edits it
    took in that second, after a tab began to follow on the other process, were dropped from
    the feed (the tab saw a gap, and a hand-written client drifted)."""
    a, b = cluster.start("A", "B", lease_ttl=10)
    thread = f"t-{uuid.uuid4().hex[:8]}"
    run_on(b, thread, "note:one", state={"notes": []}).finish(cluster)

    def edit(base: int, value: str) -> None:
        sent = httpx.patch(f"{a.url}/agents/{AGENT}/threads/{thread}/state", timeout=WAIT,
                           json={"base": base, "patch": [{"op": "add", "path": "/notes/-",
                                                          "value": value}]})
        assert sent.status_code == 200, sent.text

    edit(kept(b, thread)["version"], "unseen")  # A looks: nobody follows the thread yet
    on_b = follow(b, thread)
    wait_until(lambda: items(on_b, "snapshot"), "B's snapshot", cluster)
    base, _ = tab_state(on_b)
    for n in range(3):  # at once, while A still trusts what it read
        edit(base + n, f"edit {n}")
    wait_until(lambda: len(items(on_b, "state")) >= 3, "A's edits on B's tab", cluster)
    assert tab_state(on_b)[1]["notes"] == ["one", "unseen", "edit 0", "edit 1", "edit 2"]


@pytest.mark.anyio
async def test_a_run_waits_out_another_processs_edit_holding_the_thread(
    cluster: Cluster,  # noqa: F811 - the fixture
) -> None:
    """Rule: a person's edit on one process holds the thread a moment (its lease), and a run
    that starts meanwhile on another process waits for it, not refused with 409."""
    (a,) = cluster.start("A", lease_ttl=10)
    thread = f"t-{uuid.uuid4().hex[:8]}"
    run_on(a, thread, "note:one", state={"notes": []}).finish(cluster)
    store = cluster.store()
    try:
        token = await store.aacquire_lease(thread, "B:an edit", 10)  # as B's edit holds it
        assert token is not None
        running = run_on(a, thread, "note:two")
        await anyio.sleep(0.15)
        assert await store.arelease_lease(thread, "B:an edit", token)
    finally:
        await store.aclose()
    frames = running.finish(cluster)
    assert running.status == 200, running.text
    assert frames[-1]["type"] == "RUN_FINISHED"
    assert kept(a, thread)["state"]["notes"] == ["one", "two"]


def test_a_stop_sent_to_b_stops_the_run_on_a(
    cluster: Cluster,  # noqa: F811 - the fixture
) -> None:
    """Rule: a stop reaches the thread's run whichever process it is sent to (CopilotKit's
    stop button, a load balancer between): B asks A through the store, A's run ends cancelled
    (its stream with RUN_FINISHED, what it committed kept), and B answers once it ended."""
    a, b = cluster.start("A", "B", lease_ttl=10)
    thread = f"t-{uuid.uuid4().hex[:8]}"
    stop = f"{b.url}/agents/{AGENT}/ag-ui/{thread}/stop"
    running = run_on(a, thread, "note:one wait:g-stop note:never", state={"notes": []})
    assert cluster.started("g-stop").startswith("A ")

    answer = httpx.post(stop, timeout=WAIT)
    assert answer.status_code == 200 and answer.json() == {"stopped": True}, answer.text
    frames = running.finish(cluster)
    assert frames[-1]["type"] == "RUN_FINISHED", frames[-3:]
    view = kept(b, thread)
    assert view["state"]["notes"] == ["one"] and not view["running"], view
    assert httpx.post(stop, timeout=WAIT).json() == {"stopped": False}  # nothing runs now


def test_a_stop_sent_to_b_that_names_an_ended_run_leaves_the_next_run_on_a_going(
    cluster: Cluster,  # noqa: F811 - the fixture
) -> None:
    """Rule: a stop that names a runId (CopilotKit's) stops only the run that request started,
    whichever process it is sent to: one that names the thread's run that ended leaves the
    next run, on A, going (`stopped: false`); one that names that run stops it."""
    a, b = cluster.start("A", "B", lease_ttl=10)
    thread = f"t-{uuid.uuid4().hex[:8]}"
    stop = f"{b.url}/agents/{AGENT}/ag-ui/{thread}/stop"
    run_on(a, thread, "note:one", state={"notes": []}, run_id="run-1").finish(cluster)
    running = run_on(a, thread, "note:two wait:g-named note:never", run_id="run-2")
    assert cluster.started("g-named").startswith("A ")

    stale = httpx.post(stop, json={"runId": "run-1"}, timeout=WAIT)
    assert stale.status_code == 200 and stale.json() == {"stopped": False}, stale.text
    assert kept(b, thread)["running"] and not running.ended.is_set()
    answer = httpx.post(stop, json={"runId": "run-2"}, timeout=WAIT)
    assert answer.status_code == 200 and answer.json() == {"stopped": True}, answer.text
    frames = running.finish(cluster)
    assert frames[-1]["type"] == "RUN_FINISHED", frames[-3:]
    assert kept(b, thread)["state"]["notes"] == ["one", "two"]
