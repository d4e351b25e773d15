"""Several server processes share the work through one real Redis, or one real PostgreSQL.

Each test runs once per backend: it starts separate uvicorn processes ("A", "B") of
`app_shared.py` on the session's redis-server (tests/redis_server.py) under a key prefix of its
own, or on the session's PostgreSQL (tests/postgres_server.py) in a schema of its own, and
drives them over HTTP.
The tools talk to the test through files (processes share no memory): `wait_gate` writes
`<gate>.started` and waits for `<gate>.open`. Every wait is polled against a deadline, and every
process is killed when its test ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents.state.audit import verify_audit
from pyox_agents.stores import Store
from tests.multiprocess.shared_store import shared_store
from tests.postgres_server import (
    drop_schema,
    fresh_schema,
    postgres_server,  # noqa: F401 - a fixture, used by name
)
from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name

ROOT = Path(__file__).resolve().parents[2]
APP = "tests.multiprocess.app_shared:app"
STARTUP = 20.0
"""Seconds a uvicorn process may take to answer /healthz: a bound for a broken start."""
WAIT = 15.0
"""Seconds any awaited thing (a marker, a stream's end) may take: a bound, not a pace."""
AGENT = "worker"


# -- processes -----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    """One uvicorn process of `app_shared`."""

    name: str
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


@dataclass
class Cluster:
    """Server processes on one Redis and one key prefix (or one PostgreSQL database and one
    schema); the gate folder the tools use."""

    store_url: str
    prefix: str
    gates: Path
    logs: Path
    servers: list[Server] = field(default_factory=list)

    def start(self, *names: str, lease_ttl: float) -> list[Server]:
        """Start one process per name (in parallel) and wait until each answers /healthz."""
        started = []
        for name in names:
            port = _free_port()
            log = self.logs / f"{name}.log"
            env = {**os.environ, "PYOX_MP_STORE_URL": self.store_url,
                   "PYOX_MP_PREFIX": self.prefix, "PYOX_MP_LEASE_TTL": str(lease_ttl),
                   "PYOX_MP_GATES": str(self.gates), "PYOX_MP_NAME": name}
            with log.open("wb") as sink:
                process = subprocess.Popen(
                    [sys.executable, "-m", "uvicorn", APP, "--port", str(port),
                     "--host", "127.0.0.1", "--log-level", "warning",
                     "--timeout-graceful-shutdown", "1"],
                    cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT,
                )
            server = Server(name, f"http://127.0.0.1:{port}", process, log)
            self.servers.append(server)
            started.append(server)
        deadline = time.monotonic() + STARTUP
        for server in started:
            while not _healthy(server):
                if server.process.poll() is not None:
                    pytest.fail(f"server {server.name} exited with {server.process.returncode} "
                                f"before answering /healthz:\n{server.output()}", pytrace=False)
                if time.monotonic() > deadline:
                    pytest.fail(f"server {server.name} did not answer /healthz within {STARTUP} "
                                f"s:\n{server.output()}", pytrace=False)
                time.sleep(0.05)
        return started

    def store(self) -> Any:
        """A store on the processes' keys or schema (the test's own view of what they saved)."""
        return shared_store(self.store_url, self.prefix)

    def started(self, gate: str) -> str:
        """Who started waiting at `gate` ("A 1234": name and pid), waiting for it."""
        marker = self.gates / f"{gate}.started"
        wait_until(marker.exists, f"a tool to reach gate {gate!r}", self)
        return marker.read_text()

    def open(self, gate: str) -> None:
        (self.gates / f"{gate}.open").write_text("open")

    def logs_text(self) -> str:
        return "\n".join(f"--- {s.name} ---\n{s.output()}" for s in self.servers)


def _healthy(server: Server) -> bool:
    with contextlib.suppress(httpx.HTTPError):
        return httpx.get(f"{server.url}/healthz", timeout=1).status_code == 200
    return False


def wait_until(check: Callable[[], Any], what: str, cluster: Cluster | None = None,
               timeout: float = WAIT) -> Any:
    """Poll `check` until it is truthy (its value), or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            logs = f"\n{cluster.logs_text()}" if cluster else ""
            pytest.fail(f"waited {timeout} s for {what}{logs}", pytrace=False)
        time.sleep(0.02)


@pytest.fixture(params=["redis", "postgres"])
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cluster]:
    """Processes started by the test; all are killed, and their keys (or schema) deleted, at its
    end."""
    gates, logs = tmp_path / "gates", tmp_path / "logs"
    gates.mkdir()
    logs.mkdir()
    if request.param == "postgres":
        url = request.getfixturevalue("postgres_server")
        made = Cluster(url, fresh_schema(), gates, logs)
    else:
        made = Cluster(request.getfixturevalue("redis_server"), f"mp-{uuid.uuid4().hex[:12]}:",
                       gates, logs)
    try:
        yield made
    finally:
        for server in made.servers:
            server.stop()
        if request.param == "postgres":
            drop_schema(made.store_url, made.prefix)
        else:
            _drop_keys(made)


def _drop_keys(made: Cluster) -> None:
    """Delete every Redis key under the cluster's prefix."""
    store = made.store()
    try:
        keys = list(store.client.scan_iter(match=f"{made.prefix}*", count=1000))
        if keys:
            store.client.delete(*keys)
    finally:
        store.close()


# -- HTTP ----------------------------------------------------------------------------------------


class Stream(threading.Thread):
    """Reads one SSE response in the background: its status, and its `data:` frames as they
    come (JSON, or the text "[DONE]")."""

    def __init__(self, method: str, url: str, body: Any = None) -> None:
        super().__init__(daemon=True)
        self.method, self.url, self.body = method, url, body
        self.status: int | None = None
        self.text = ""
        self.frames: list[Any] = []
        self.error: BaseException | None = None
        self.ended = threading.Event()
        self.start()

    def run(self) -> None:
        try:
            with httpx.Client(timeout=httpx.Timeout(WAIT * 2)) as client, client.stream(
                self.method, self.url, json=self.body
            ) as response:
                self.status = response.status_code
                if response.status_code != 200:
                    self.text = response.read().decode(errors="replace")
                    return
                for line in response.iter_lines():
                    if line.startswith("data:"):
                        data = line[5:].strip()
                        self.frames.append(data if data == "[DONE]" else json.loads(data))
        except BaseException as exc:  # the test reads it
            self.error = exc
        finally:
            self.ended.set()

    def finish(self, cluster: Cluster) -> list[Any]:
        """Wait until the stream ended; its frames."""
        if not self.ended.wait(WAIT):
            pytest.fail(f"{self.method} {self.url} did not end within {WAIT} s; got "
                        f"{self.frames}\n{cluster.logs_text()}", pytrace=False)
        assert self.error is None, f"{self.method} {self.url} broke: {self.error!r}"
        return self.frames


def ai_sdk_body(chat_id: str, *texts: str, state: Any = None) -> dict[str, Any]:
    """A DefaultChatTransport body with the user messages `texts`."""
    messages = [{"id": f"u{i}", "role": "user", "parts": [{"type": "text", "text": text}]}
                for i, text in enumerate(texts)]
    body: dict[str, Any] = {"id": chat_id, "messages": messages, "trigger": "submit-message"}
    if state is not None:
        body["state"] = state
    return body


def ag_ui_body(thread_id: str, run_id: str, *texts: str, **extra: Any) -> dict[str, Any]:
    """A RunAgentInput with the user messages `texts`."""
    messages = [{"id": f"u{i}", "role": "user", "content": text} for i, text in enumerate(texts)]
    return {"threadId": thread_id, "runId": run_id, "messages": messages, "state": {},
            "tools": [], "context": [], "forwardedProps": {}, **extra}


def post(server: Server, path: str, body: Any) -> httpx.Response:
    return httpx.post(f"{server.url}{path}", json=body, timeout=WAIT)


def sse_frames(text: str) -> list[Any]:
    out = []
    for line in text.splitlines():
        if line.startswith("data:"):
            data = line[5:].strip()
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


def run_ids(store: Store, thread_id: str) -> list[str]:
    """The runtime ids of the runs of `thread_id`, oldest first (its run_start entries)."""
    entries = store.load_thread(thread_id).entries
    return [str(e["content"]) for e in entries if e.get("kind") == "run_start" and e["content"]]


def text_of(chunks: list[Any]) -> str:
    return "".join(c["delta"] for c in chunks if isinstance(c, dict) and c["type"] == "text-delta")


# -- tests ---------------------------------------------------------------------------------------


def test_a_run_on_a_is_replayed_and_followed_on_b_which_refuses_a_second_run(
    cluster: Cluster,
) -> None:
    """A runs a chat; B's resume stream replays it from its first chunk, then follows it live
    to its end (the same chunks A's own client got); B answers 409 to a second run on the
    thread (AI SDK and AG-UI) while A holds the lease; once A's run ended, B serves the thread."""
    a, b = cluster.start("A", "B", lease_ttl=10)
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    store = cluster.store()
    try:
        on_a = Stream("POST", f"{a.url}/agents/{AGENT}/ai-sdk",
                      ai_sdk_body(chat, "note:one wait:g1", state={"notes": []}))
        assert cluster.started("g1").startswith("A ")
        assert store.lease_holder(chat) is not None
        assert store.lease_holder(chat)[0].startswith("A:")  # type: ignore[index]

        resumed = Stream("GET", f"{b.url}/agents/{AGENT}/ai-sdk/{chat}/stream")
        # B replays what A streamed so far (the note step's committed state among it) ...
        wait_until(lambda: any(isinstance(c, dict) and c.get("toolName") == "wait_gate"
                               and c["type"] == "tool-input-available" for c in resumed.frames),
                   "B's resume stream to replay up to the waiting tool call", cluster)
        assert resumed.status == 200
        assert not resumed.ended.is_set()  # ... and is still open: the run has not ended

        again = post(b, f"/agents/{AGENT}/ai-sdk",  # (a request that does not wait)
                     {**ai_sdk_body(chat, "note:one wait:g1", "note:two"),
                      "doubleTexting": "reject"})
        assert again.status_code == 409, again.text
        ag_ui = post(b, f"/agents/{AGENT}/ag-ui", ag_ui_body(
            chat, "r2", "note:two", forwardedProps={"doubleTexting": "reject"}))
        assert ag_ui.status_code == 409, ag_ui.text
        assert "already active" in ag_ui.json()["error"]
        # what A committed so far is visible through B
        assert httpx.get(f"{b.url}/threads/{chat}").json()["state"] == {"notes": ["one"],
                                                                         "by": "A"}

        cluster.open("g1")
        on_a_chunks = on_a.finish(cluster)
        on_b_chunks = resumed.finish(cluster)
        assert on_a.status == 200
        assert on_a_chunks[-1] == "[DONE]"
        assert _bare(on_a_chunks[-2]) == {"type": "finish", "finishReason": "stop"}
        assert text_of(on_a_chunks) == "finished 2 steps on A"
        assert on_b_chunks == on_a_chunks  # from the first chunk ("start") to [DONE]

        # the run ended and released the lease: B takes the next message itself
        wait_until(lambda: store.lease_holder(chat) is None, "A to release the lease", cluster)
        assert httpx.get(f"{b.url}/agents/{AGENT}/ai-sdk/{chat}/stream").status_code == 204
        next_run = post(b, f"/agents/{AGENT}/ai-sdk",
                        ai_sdk_body(chat, "note:one wait:g1", "note:two"))
        assert next_run.status_code == 200, next_run.text
        chunks = sse_frames(next_run.text)
        assert [_bare(c) for c in chunks[-2:]] == [{"type": "finish", "finishReason": "stop"},
                                                   "[DONE]"]
        assert text_of(chunks) == "finished 1 steps on B"
        assert store.load_kept_state(chat)["state"] == {"notes": ["one", "two"], "by": "B"}
        assert store.load_thread(chat).shared_state is None  # the run ended: it keeps none
        assert len(run_ids(store, chat)) == 2
    finally:
        store.close()


def test_an_ag_ui_connect_on_b_restores_the_thread_then_follows_the_run_on_a(
    cluster: Cluster,
) -> None:
    """AG-UI connect on B while A runs the thread: the history before the run, then A's run
    replayed from its start and followed live, each message once and under the ids A's own
    client got."""
    a, b = cluster.start("A", "B", lease_ttl=10)
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    first = post(a, f"/agents/{AGENT}/ag-ui",
                 ag_ui_body(thread, "r1", "note:one", state={"notes": []}))
    assert first.status_code == 200, first.text
    on_a = Stream("POST", f"{a.url}/agents/{AGENT}/ag-ui",
                  ag_ui_body(thread, "r2", "note:one", "wait:g1"))
    assert cluster.started("g1").startswith("A ")
    back = Stream("POST", f"{b.url}/agents/{AGENT}/ag-ui/connect", ag_ui_body(thread, "c1"))
    wait_until(lambda: any(f.get("toolCallName") == "wait_gate" for f in back.frames),
               "B's connect to replay A's run up to the waiting tool call", cluster)
    assert not back.ended.is_set()  # ... and it follows the run, which has not ended
    cluster.open("g1")
    on_a_events, on_b_events = on_a.finish(cluster), back.finish(cluster)
    assert [e["type"] for e in on_b_events[:3]] == ["RUN_STARTED", "MESSAGES_SNAPSHOT",
                                                    "STATE_SNAPSHOT"]
    before = on_b_events[1]["messages"]
    assert [m["role"] for m in before] == ["user", "assistant", "tool", "assistant", "user"]
    starts = [e["messageId"] for e in on_b_events if e["type"] == "TEXT_MESSAGE_START"]
    assert starts == [e["messageId"] for e in on_a_events if e["type"] == "TEXT_MESSAGE_START"]
    # A's client sent only its user messages: its stream gave it the first run's replies too
    # (a client drops what a MESSAGES_SNAPSHOT leaves out), so both hold the same thread
    final_a = [m for m in on_a_events[-2]["messages"] if m["role"] != "user"]
    final_b = [m for m in on_b_events[-2]["messages"] if m["role"] != "user"]
    earlier = [m for m in before if m["role"] != "user"]
    assert final_b == final_a and final_a[:len(earlier)] == earlier
    assert len(final_a) > len(earlier)  # and this run's own after them
    assert on_b_events[-1]["type"] == "RUN_FINISHED"


def test_an_approval_issued_by_a_is_answered_through_b(cluster: Cluster) -> None:
    """AG-UI: A's run ends with an approval interrupt; the resume goes to B, the approved tool
    runs on B and the run completes; GET /runs/{id} says "completed" on both processes."""
    a, b = cluster.start("A", "B", lease_ttl=10)
    thread = f"thread-{uuid.uuid4().hex[:8]}"
    store = cluster.store()
    try:
        first = post(a, f"/agents/{AGENT}/ag-ui",
                     ag_ui_body(thread, "r1", "risky:launch", state={"notes": []}))
        assert first.status_code == 200, first.text
        finished = sse_frames(first.text)[-1]
        assert finished["type"] == "RUN_FINISHED"
        assert finished["outcome"]["type"] == "interrupt"
        (interrupt,) = finished["outcome"]["interrupts"]
        assert interrupt["reason"] == "approval"
        assert interrupt["metadata"] == {"tool": "risky", "arguments": {"what": "launch"}}
        ran = cluster.gates / "risky-launch.ran"
        assert not ran.exists()  # nothing ran before the approval
        (run_id,) = set(run_ids(store, thread))
        assert httpx.get(f"{a.url}/runs/{run_id}").json()["status"] == "paused"
        # A's run ended: the thread is free (A releases the lease just after its last event)
        wait_until(lambda: store.lease_holder(thread) is None, "A to release the lease", cluster)

        answer = post(b, f"/agents/{AGENT}/ag-ui", ag_ui_body(
            thread, "r2", "risky:launch",
            resume=[{"interruptId": interrupt["id"], "status": "resolved",
                     "payload": {"approved": True}}]))
        assert answer.status_code == 200, answer.text
        events = sse_frames(answer.text)
        assert events[-1]["type"] == "RUN_FINISHED"
        assert events[-1]["outcome"] == {"type": "success"}
        results = [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"]
        assert results == ["did launch on B"]
        assert ran.read_text().startswith("B ")  # the tool ran on B, once
        assert "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT") == (
            "finished 1 steps on B")

        assert set(run_ids(store, thread)) == {run_id}  # the paused run went on, not a new one
        records = [httpx.get(f"{server.url}/runs/{run_id}").json() for server in (a, b)]
        assert records[0] == records[1]
        assert records[0]["status"] == "completed"
        verify_audit(store, run_id)
        for server in (a, b):
            assert httpx.get(f"{server.url}/threads/{thread}").json()["state"] == {
                "notes": [], "done": "launch", "by": "B"}
    finally:
        store.close()


def test_b_takes_a_thread_over_once_the_lease_of_a_killed_a_expires(cluster: Cluster) -> None:
    """A is killed (SIGKILL) while its tool waits. Until its lease expires B answers 409 for
    the thread; after it, B's request is accepted and A's run goes on on B from the shared
    state A committed: the cut (idempotent) call runs again, then the new message is answered,
    and the audit chain of the run verifies across both processes."""
    lease_ttl = 3.0
    a, b = cluster.start("A", "B", lease_ttl=lease_ttl)
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    store = cluster.store()
    try:
        on_a = Stream("POST", f"{a.url}/agents/{AGENT}/ai-sdk",
                      ai_sdk_body(chat, "note:alpha wait:g1", state={"notes": []}))
        assert cluster.started("g1").startswith("A ")
        committed = store.load_thread(chat).shared_state
        assert committed == {"notes": ["alpha"], "by": "A"}  # the note step, committed by A
        (a_run,) = run_ids(store, chat)

        a.process.send_signal(signal.SIGKILL)
        a.process.wait(timeout=5)
        killed = time.monotonic()
        on_a.ended.wait(WAIT)  # its client saw the connection drop

        holder = store.lease_holder(chat)
        assert holder is not None and holder[0].startswith("A:")
        busy = post(b, f"/agents/{AGENT}/ai-sdk",  # (a request that does not wait)
                    {**ai_sdk_body(chat, "note:alpha wait:g1", "note:beta"),
                     "doubleTexting": "reject"})
        assert store.lease_holder(chat) == holder  # still within A's TTL when B answered
        assert busy.status_code == 409, busy.text

        wait_until(lambda: store.lease_holder(chat) is None, "A's lease to expire", cluster,
                   timeout=lease_ttl + 5)
        assert time.monotonic() - killed <= lease_ttl + 1
        # the dead run's record is what A committed; B reads the same
        assert store.load_thread(chat).shared_state == committed
        assert httpx.get(f"{b.url}/threads/{chat}").json()["state"] == committed
        verify_audit(store, a_run)
        assert httpx.get(f"{b.url}/agents/{AGENT}/ai-sdk/{chat}/stream").status_code == 204

        cluster.open("g1")  # (A's run goes on with its cut call first: let it pass)
        taken = post(b, f"/agents/{AGENT}/ai-sdk",
                     ai_sdk_body(chat, "note:alpha wait:g1", "note:beta"))
        assert taken.status_code == 200, taken.text
        chunks = sse_frames(taken.text)
        assert [_bare(c) for c in chunks[-2:]] == [{"type": "finish", "finishReason": "stop"},
                                                   "[DONE]"], chunks
        assert {"type": "data-state", "id": "state", "data": committed} in chunks  # its start
        assert text_of(chunks) == "finished 1 steps on B"
        assert store.load_kept_state(chat)["state"] == {"notes": ["alpha", "beta"], "by": "B"}
        assert store.load_thread(chat).shared_state is None  # the run ended: it keeps none
        wait_until(lambda: store.lease_holder(chat) is None, "B to release the lease", cluster)

        # the run B executed is A's, continued (not a new run that would run A's call anew)
        assert set(run_ids(store, chat)) == {a_run}
        assert httpx.get(f"{b.url}/runs/{a_run}").json()["status"] == "completed"
        verify_audit(store, a_run)  # one chain, on across both processes
    finally:
        store.close()


def test_a_state_the_client_was_shown_is_kept_before_the_process_can_die(
        cluster: Cluster) -> None:
    """Every version of the shared state a client was shown is already the thread's kept
    state: a process killed right after showing it (even after its run's last step) leaves
    nothing behind what the client saw."""
    a, b = cluster.start("A", "B", lease_ttl=2.0)
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    store = cluster.store()
    try:
        on_a = Stream("POST", f"{a.url}/agents/{AGENT}/ai-sdk",
                      ai_sdk_body(chat, "note:alpha wait:g1", state={"notes": []}))
        seen = {"type": "data-state", "id": "state", "data": {"notes": ["alpha"], "by": "A"}}
        wait_until(lambda: seen in [_bare(frame) for frame in on_a.frames],
                   "A's client to be shown the note", cluster)
        kept = store.load_kept_state(chat)
        a.process.send_signal(signal.SIGKILL)
        a.process.wait(timeout=5)
        assert kept is not None, "A showed its client a state it had not kept"
        assert kept["state"] == {"notes": ["alpha"], "by": "A"}
        assert httpx.get(f"{b.url}/threads/{chat}").json()["state"] == kept["state"]
    finally:
        cluster.open("g1")
        store.close()


@dataclass
class Takeover:
    """What `pause_a_while_b_takes_over` left: the store's thread after B finished it, B's kept
    state, and A's run id."""

    store: Any
    chat: str
    a_run: str
    after_b: tuple[Any, ...]
    kept: Any


@contextlib.contextmanager
def pause_a_while_b_takes_over(cluster: Cluster) -> Iterator[Takeover]:
    """A is paused (SIGSTOP) while its tool waits; its lease expires and B takes the thread
    over and finishes it; then A wakes up (SIGCONT), its tool returns and A tries to go on."""
    lease_ttl = 2.0
    a, b = cluster.start("A", "B", lease_ttl=lease_ttl)
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    store = cluster.store()
    try:
        on_a = Stream("POST", f"{a.url}/agents/{AGENT}/ai-sdk",
                      ai_sdk_body(chat, "note:alpha wait:g1", state={"notes": []}))
        assert cluster.started("g1").startswith("A ")
        (a_run,) = run_ids(store, chat)
        a.process.send_signal(signal.SIGSTOP)
        try:
            wait_until(lambda: store.lease_holder(chat) is None, "A's lease to expire", cluster,
                       timeout=lease_ttl + 5)
            cluster.open("g1")
            taken = post(b, f"/agents/{AGENT}/ai-sdk",
                         ai_sdk_body(chat, "note:alpha wait:g1", "note:beta"))
            assert taken.status_code == 200, taken.text
            assert text_of(sse_frames(taken.text)) == "finished 1 steps on B"
            wait_until(lambda: store.lease_holder(chat) is None, "B to release the lease",
                       cluster)
            after_b = store.load_thread(chat).entries
            kept = store.load_kept_state(chat)
        finally:
            a.process.send_signal(signal.SIGCONT)
        on_a.ended.wait(WAIT)  # A's tool returned, its write was refused, its run ended
        assert a.process.poll() is None, a.output()  # A lives on, refused, not crashed
        yield Takeover(store, chat, a_run, after_b, kept)
    finally:
        store.close()


def test_a_paused_process_cannot_write_a_step_after_its_lease_was_taken_over(
        cluster: Cluster) -> None:
    """When A wakes up after B took its thread over, A's step write carries its old fencing
    token: the store refuses it, so no step of A's lands after the takeover."""
    with pause_a_while_b_takes_over(cluster) as done:
        assert done.store.load_thread(done.chat).entries == done.after_b  # nothing of A's
        assert not any("on A" in json.dumps(entry) for entry in done.after_b[-4:])
        assert done.kept is not None
        assert done.kept["state"] == {"notes": ["alpha", "beta"], "by": "B"}
        verify_audit(done.store, done.a_run)


def test_a_paused_process_cannot_overwrite_the_kept_state_after_a_takeover(
        cluster: Cluster) -> None:
    """When A wakes up after B took its thread over, what the server keeps of the thread's
    shared state stays B's: A's kept-state write carries its old lease token, and the store
    refuses it."""
    with pause_a_while_b_takes_over(cluster) as done:
        assert done.store.load_kept_state(done.chat) == done.kept


def test_a_live_process_keeps_its_lease_through_a_silent_tool(cluster: Cluster) -> None:
    """A's tool waits (no events) for twice the lease TTL: A is alive, so it must keep the
    thread (B: 409, B's resume stream follows it), and its run must then complete."""
    lease_ttl = 1.5
    a, b = cluster.start("A", "B", lease_ttl=lease_ttl)
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    store = cluster.store()
    try:
        on_a = Stream("POST", f"{a.url}/agents/{AGENT}/ai-sdk",
                      ai_sdk_body(chat, "wait:g1", state={"notes": []}))
        cluster.started("g1")
        waiting = time.monotonic()
        wait_until(lambda: time.monotonic() - waiting > 2 * lease_ttl, "twice the lease TTL")
        holder = store.lease_holder(chat)
        resume_status = httpx.get(f"{b.url}/agents/{AGENT}/ai-sdk/{chat}/stream",
                                  timeout=1).status_code if holder is None else 200
        cluster.open("g1")
        chunks = on_a.finish(cluster)
        assert holder is not None and holder[0].startswith("A:"), "A lost its lease while alive"
        assert resume_status == 200, "B's resume answered 204 while A's run was going on"
        assert _bare(chunks[-2]) == {"type": "finish", "finishReason": "stop"}, chunks[-3:]
    finally:
        store.close()


def test_thread_says_running_on_every_process(cluster: Cluster) -> None:
    """GET /threads/{id} on B while A runs the thread says "running": true."""
    a, b = cluster.start("A", "B", lease_ttl=10)
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    on_a = Stream("POST", f"{a.url}/agents/{AGENT}/ai-sdk",
                  ai_sdk_body(chat, "wait:g1", state={"notes": []}))
    cluster.started("g1")
    on_the_runner = httpx.get(f"{a.url}/threads/{chat}").json()["running"]
    elsewhere = httpx.get(f"{b.url}/threads/{chat}").json()["running"]
    cluster.open("g1")
    on_a.finish(cluster)
    assert on_the_runner is True
    assert elsewhere is True


def test_following_on_b_survives_a_silent_stretch_of_the_run(cluster: Cluster) -> None:
    """A's tool waits 6 s without an event; B's resume stream must still reach [DONE] with
    exactly A's chunks."""
    a, b = cluster.start("A", "B", lease_ttl=30)  # far above the wait: the lease stays A's
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    on_a = Stream("POST", f"{a.url}/agents/{AGENT}/ai-sdk",
                  ai_sdk_body(chat, "wait:g1", state={"notes": []}))
    cluster.started("g1")
    resumed = Stream("GET", f"{b.url}/agents/{AGENT}/ai-sdk/{chat}/stream")
    wait_until(lambda: resumed.frames, "B's resume stream to replay A's run", cluster)
    silent = time.monotonic()
    wait_until(lambda: resumed.ended.is_set() or time.monotonic() - silent > 6.0,
               "6 s of silence, or B's stream to break off")
    cluster.open("g1")
    on_a_chunks = on_a.finish(cluster)
    resumed.ended.wait(WAIT)
    assert resumed.error is None, f"B's resume stream broke off: {resumed.error!r}"
    assert resumed.frames == on_a_chunks


def test_following_a_run_whose_process_died_ends(cluster: Cluster) -> None:
    """B's resume stream of A's run ends (with [DONE]) once A is dead and its lease expired."""
    lease_ttl = 2.0
    a, b = cluster.start("A", "B", lease_ttl=lease_ttl)
    chat = f"chat-{uuid.uuid4().hex[:8]}"
    Stream("POST", f"{a.url}/agents/{AGENT}/ai-sdk",
           ai_sdk_body(chat, "wait:g1", state={"notes": []}))
    cluster.started("g1")
    resumed = Stream("GET", f"{b.url}/agents/{AGENT}/ai-sdk/{chat}/stream")
    wait_until(lambda: resumed.frames, "B's resume stream to replay A's run", cluster)
    a.process.send_signal(signal.SIGKILL)
    a.process.wait(timeout=5)
    # the lease expires within lease_ttl; the log is read in XREAD BLOCKs of 5 s
    ended = resumed.ended.wait(lease_ttl + 5 + 2)
    assert ended, "B's resume stream of a dead process's run never ends"
    assert resumed.error is None
    assert resumed.frames[-1] == "[DONE]"


def _bare(chunk: Any) -> Any:
    """An AI SDK chunk without its `messageMetadata` (the usage a `finish` carries)."""
    return {k: v for k, v in chunk.items() if k != "messageMetadata"} if isinstance(
        chunk, dict) else chunk
