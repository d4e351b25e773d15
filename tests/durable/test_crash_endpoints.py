"""Crash and continue over both endpoints: a server killed during runs, its threads continued.

A seeded random loop (`PYOX_CRASH_SEED` replays one) makes threads whose plan calls an
idempotent tool (`idem`) and a plain one (`plain`), each counting its side effects in a file
(tests/durable/crash_app.py). The threads run at once on a real uvicorn process ("victim"); each
plan has one step, picked at random, that the victim never finishes, and once every thread is in
that step the victim is killed with SIGKILL. Every thread is then continued on another uvicorn
process on the same store (SQLite, or Redis once the victim's lease expired) the way its client
would: the next ordinary request with a new user message (AG-UI or AI SDK), then, if the cut call
was put to a person, the answer the way the protocol gives one (AG-UI: `resume` of the interrupt;
AI SDK: the `approval-responded` tool part), approving or denying at random.

What must hold (the rule of durable runs): no plain side effect ran twice unless a person
approved it, idempotent re-runs got the same idempotency key, the new message is answered once
the question is settled, every stream ends with its terminal event, and every run's audit chain
verifies.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents import verify_audit
from pyox_agents.stores import SQLiteStore
from pyox_agents.stores.redis import RedisStore
from tests.ag_ui.verify import results_before_their_calls
from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name

ROOT = Path(__file__).resolve().parents[2]
APP = "tests.durable.crash_app:app"
CRASH_PROMPT = "outcome unknown after a crash: run again?"
WAIT = 20.0
"""Seconds a server may take to start, a step to be reached, a request to end: a bound."""
THREADS = 8
"""Threads per store: half continued over AG-UI, half over the AI SDK."""
LEASE_TTL = 1.0


# -- processes -----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


@dataclass
class Setting:
    """Where the servers keep their threads, and the file the tools count side effects in."""

    where: str
    prefix: str
    effects: Path
    logs: Path

    def start(self, name: str, *, victim: bool) -> Server:
        port = _free_port()
        log = self.logs / f"{name}.log"
        env = {**os.environ, "PYOX_CRASH_STORE": self.where, "PYOX_CRASH_PREFIX": self.prefix,
               "PYOX_CRASH_EFFECTS": str(self.effects), "PYOX_CRASH_LEASE_TTL": str(LEASE_TTL),
               "PYOX_CRASH_VICTIM": "1" if victim else "0"}
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", APP, "--port", str(port), "--host",
                 "127.0.0.1", "--log-level", "warning", "--timeout-graceful-shutdown", "1"],
                cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)
        return Server(f"http://127.0.0.1:{port}", process, log)

    def store(self) -> Any:
        if self.where.startswith("redis://"):
            return RedisStore(self.where, prefix=self.prefix)
        return SQLiteStore(self.where)

    def effects_of(self, thread: str) -> list[dict[str, Any]]:
        if not self.effects.exists():
            return []
        lines = [json.loads(line) for line in self.effects.read_text().splitlines() if line]
        return [line for line in lines if line["thread"] == thread]


def wait_until(check: Callable[[], Any], what: str, servers: list[Server]) -> Any:
    deadline = time.monotonic() + WAIT
    while not (value := check()):
        if time.monotonic() > deadline:
            logs = "\n".join(s.output() for s in servers)
            pytest.fail(f"waited {WAIT} s for {what}\n{logs}", pytrace=False)
        time.sleep(0.02)
    return value


def healthy(server: Server) -> bool:
    if server.process.poll() is not None:
        pytest.fail(f"a server exited with {server.process.returncode}:\n{server.output()}",
                    pytrace=False)
    with contextlib.suppress(httpx.HTTPError):
        return httpx.get(f"{server.url}/healthz", timeout=1).status_code == 200
    return False


@pytest.fixture(params=["sqlite", "redis"])
def setting(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Setting]:
    if request.param == "redis":
        where = request.getfixturevalue("redis_server")
    else:
        where = str(tmp_path / "threads.sqlite")
    logs = tmp_path / "logs"
    logs.mkdir()
    made = Setting(where, f"crash-{uuid.uuid4().hex[:12]}:", tmp_path / "effects.jsonl", logs)
    yield made
    if request.param == "redis":
        store = made.store()
        try:
            keys = list(store.client.scan_iter(match=f"{made.prefix}*", count=1000))
            if keys:
                store.client.delete(*keys)
        finally:
            store.close()


# -- what the clients send -----------------------------------------------------------------------


def sse(text: str) -> list[Any]:
    frames = []
    for line in text.splitlines():
        if line.startswith("data:"):
            data = line[5:].strip()
            frames.append(data if data == "[DONE]" else json.loads(data))
    return frames


@dataclass
class Case:
    """One thread: its plan, the step the victim never finishes, and the person's answer."""

    thread: str
    protocol: str
    plan: list[tuple[str, str]]
    cut: int
    approve: bool

    @property
    def first(self) -> str:
        return " ".join(f"{tool}:{what}" for tool, what in self.plan)

    @property
    def next(self) -> str:
        return f"and then {self.thread}"

    def body(self, texts: list[str], **extra: Any) -> dict[str, Any]:
        if self.protocol == "ag-ui":
            messages = [{"id": f"u{i}", "role": "user", "content": t} for i, t in enumerate(texts)]
            return {"threadId": self.thread, "runId": uuid.uuid4().hex, "messages": messages,
                    "state": {}, "tools": [], "context": [], "forwardedProps": {}, **extra}
        ui: list[dict[str, Any]] = [
            {"id": f"u{i}", "role": "user", "parts": [{"type": "text", "text": t}]}
            for i, t in enumerate(texts)]
        return {"id": self.thread, "messages": [*ui, *extra.get("after", [])],
                "trigger": "submit-message"}


def make_cases(rng: random.Random) -> list[Case]:
    cases = []
    for number in range(THREADS):
        plan = [(rng.choice(["idem", "plain"]), f"s{step}") for step in range(rng.randint(1, 3))]
        cut = rng.randrange(len(plan))
        plan[cut] = (plan[cut][0], plan[cut][1] + "!")
        cases.append(Case(f"t{number}-{uuid.uuid4().hex[:6]}",
                          "ag-ui" if number % 2 == 0 else "ai-sdk", plan, cut, rng.random() < 0.5))
    return cases


def post(server: Server, case: Case, body: dict[str, Any], servers: list[Server]) -> list[Any]:
    """POST `body` to the case's endpoint; its frames, after checking the stream ended well.
    A thread still leased by the dead victim answers 409 until its lease expires: retried."""
    url = f"{server.url}/agents/worker/{case.protocol}"
    deadline = time.monotonic() + WAIT
    while True:
        response = httpx.post(url, json=body, timeout=WAIT)
        if response.status_code != 409 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert response.status_code == 200, response.text
    frames = sse(response.text)
    if case.protocol == "ag-ui":
        assert frames[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR"), frames[-3:]
        assert frames[-1]["type"] == "RUN_FINISHED", frames[-1]
        assert results_before_their_calls(frames) == []  # a cut call's result names its call first
    else:
        assert frames[-1] == "[DONE]" and frames[-2]["type"] == "finish", frames[-3:]
    return frames


def answer_text(case: Case, frames: list[Any]) -> str:
    kind, key = (("TEXT_MESSAGE_CONTENT", "delta") if case.protocol == "ag-ui"
                 else ("text-delta", "delta"))
    return "".join(f[key] for f in frames if isinstance(f, dict) and f.get("type") == kind)


def question(case: Case, frames: list[Any]) -> dict[str, Any] | None:
    """The approval the stream ended with: {"id", "call_id", "prompt"}, or None."""
    if case.protocol == "ag-ui":
        outcome = frames[-1].get("outcome") or {}
        if outcome.get("type") != "interrupt":
            return None
        (interrupt,) = outcome["interrupts"]
        return {"id": interrupt["id"], "call_id": interrupt["toolCallId"],
                "prompt": interrupt["message"]}
    asked = [f for f in frames if isinstance(f, dict) and f["type"] == "tool-approval-request"]
    if not asked:
        return None
    (request,) = asked
    return {"id": request["approvalId"], "call_id": request["toolCallId"],
            "prompt": request.get("reason")}


def answer(case: Case, asked: dict[str, Any], texts: list[str] | None = None) -> dict[str, Any]:
    """The next request answering `asked` the way the case's protocol answers an approval, the
    client holding the user messages `texts` (the case's two by default)."""
    texts = texts or [case.first, case.next]
    if case.protocol == "ag-ui":
        return case.body(texts, resume=[{"interruptId": asked["id"], "status": "resolved",
                                         "payload": {"approved": case.approve}}])
    tool, what = case.plan[case.cut]
    part = {"type": f"tool-{tool}", "toolCallId": asked["call_id"], "input": {"what": what},
            "state": "approval-responded",
            "approval": {"id": asked["id"], "approved": case.approve}}
    return case.body(texts, after=[{"id": "a1", "role": "assistant", "parts": [part]}])


# -- the test ------------------------------------------------------------------------------------


def test_threads_of_a_killed_server_continue_by_the_rule_of_durable_runs(
        setting: Setting) -> None:
    """"an idempotent call re-runs with the same idempotency key; a non-idempotent call is put to
    a person ("outcome unknown after a crash: run again?") and runs only if approved; the new
    user message waits (held, as seed 000 says for messages during pending calls)"."""
    seed = int(os.environ.get("PYOX_CRASH_SEED", random.SystemRandom().randrange(2**32)))
    rng = random.Random(seed)
    cases = make_cases(rng)
    victim = setting.start("victim", victim=True)
    survivor = setting.start("survivor", victim=False)
    servers = [victim, survivor]
    started: list[threading.Thread] = []
    try:
        for server in servers:
            wait_until(lambda s=server: healthy(s), "a server to answer /healthz", servers)
        for case in cases:  # every first request at once, on the victim; it never answers
            body = case.body([case.first])
            url = f"{victim.url}/agents/worker/{case.protocol}"
            reader = threading.Thread(target=_read_until_dropped, args=(url, body), daemon=True)
            reader.start()
            started.append(reader)
        for case in cases:
            wait_until(lambda c=case: len(setting.effects_of(c.thread)) == c.cut + 1,
                       f"thread {case.thread} to reach step {case.cut}", servers)
        victim.process.send_signal(signal.SIGKILL)
        victim.process.wait(timeout=WAIT)
        for case in cases:
            continue_case(setting, survivor, case, servers, seed)
    except BaseException as exc:
        exc.add_note(f"replay these cases with PYOX_CRASH_SEED={seed}")
        raise
    finally:
        for server in servers:
            if server.process.poll() is None:
                server.process.kill()
                server.process.wait(timeout=WAIT)
        for reader in started:
            reader.join(timeout=WAIT)


def _read_until_dropped(url: str, body: dict[str, Any]) -> None:
    with contextlib.suppress(httpx.HTTPError), httpx.stream("POST", url, json=body,
                                                            timeout=WAIT * 3) as response:
        for _ in response.iter_bytes():
            pass


def continue_case(setting: Setting, survivor: Server, case: Case, servers: list[Server],
                  seed: int) -> None:
    """Send the case's next message to the survivor, answer the question if one is asked, and
    check what happened."""
    where = f"(seed {seed}, thread {case.thread}, {case.protocol}, plan {case.first!r})"
    tool, what = case.plan[case.cut]
    before = setting.effects_of(case.thread)
    cut_key = before[-1]["key"]
    assert before[-1]["what"] == what and cut_key is not None, where
    frames = post(survivor, case, case.body([case.first, case.next]), servers)
    asked = question(case, frames)
    if tool == "idem":
        assert asked is None, f"an idempotent call was put to a person {where}"
        after = setting.effects_of(case.thread)
        assert len(after) == len(before) + 1, where
        assert after[-1]["what"] == what and after[-1]["key"] == cut_key, (
            f"the idempotent re-run got another key {where}")
    else:
        assert asked is not None, f"a plain call cut by the crash was not put to a person {where}"
        assert asked["prompt"] == CRASH_PROMPT, where
        assert setting.effects_of(case.thread) == before, f"a plain call ran unasked {where}"
        assert answer_text(case, frames) == "", f"the new message was answered first {where}"
        if case.protocol == "ai-sdk":
            asked_in_a_new_message(survivor, case, frames, asked, where)
        frames = post(survivor, case, answer(case, asked), servers)
        assert question(case, frames) is None, where
        after = setting.effects_of(case.thread)
        if case.approve:
            assert len(after) == len(before) + 1, where
            assert after[-1]["what"] == what and after[-1]["key"] == cut_key, where
        else:
            assert after == before, f"a denied plain call ran {where}"
    assert answer_text(case, frames) == f"done: {case.next}", where
    store = setting.store()
    try:
        entries = store.load_thread(case.thread).entries
        runs = {str(e["content"]) for e in entries if e.get("kind") == "run_start"}
        assert len(runs) == 1, f"the cut run did not go on; new runs {runs} {where}"
        for run_id in runs:
            verify_audit(store, run_id)
    finally:
        store.close()


def asked_in_a_new_message(survivor: Server, case: Case, frames: list[Any],
                           asked: dict[str, Any], where: str) -> dict[str, Any]:
    """Check that the AI SDK stream asked about the cut call as an `ai` client can show and
    answer it: in a new assistant message after the typed one (not the cut message again:
    two messages with one id), whose tool part for the call comes before the request (`ai`
    fails on a request for a call its message has no part of: "No tool invocation found"),
    and that a reloaded page's messages end with that message, its part waiting for the
    answer (`addToolApprovalResponse` answers in the last message). That message, answered
    in place as the client does."""
    started = frames[0]["messageId"]
    kinds = [(f["type"], f.get("toolCallId")) for f in frames if isinstance(f, dict)]
    assert kinds.index(("tool-input-available", asked["call_id"])) < kinds.index(
        ("tool-approval-request", asked["call_id"])), f"{kinds} {where}"
    reloaded = httpx.get(f"{survivor.url}/agents/worker/ai-sdk/{case.thread}/messages",
                         timeout=WAIT).json()
    last = reloaded[-1]
    assert [m["role"] for m in reloaded[-2:]] == ["user", "assistant"], where
    assert last["id"] == started, where
    assert started not in [m["id"] for m in reloaded[:-1]], f"two messages {started} {where}"
    (part,) = [p for p in last["parts"] if p.get("toolCallId") == asked["call_id"]]
    assert part["state"] == "approval-requested" and part["approval"]["id"] == asked["id"]
    part.update(state="approval-responded", approval={"id": asked["id"],
                                                      "approved": case.approve})
    return last


@pytest.mark.parametrize("setting", ["sqlite"], indirect=True)
def test_a_message_typed_on_a_thread_of_a_killed_server_is_answered_after_the_question(
        setting: Setting) -> None:
    """AI SDK: a message typed after a crash cut a plain call gets the question in a new
    message the `ai` client can show; answered as a reloaded page answers it (its messages
    from the server, the part answered in place), the call runs and the message is answered."""
    case = Case(f"typed-{uuid.uuid4().hex[:6]}", "ai-sdk", [("plain", "s0!")], 0, True)
    with cut_by_a_crash(setting, case) as (survivor, servers):
        frames = post(survivor, case, case.body([case.first, case.next]), servers)
        asked = question(case, frames)
        assert asked is not None and asked["prompt"] == CRASH_PROMPT
        answered = asked_in_a_new_message(survivor, case, frames, asked, case.thread)
        reloaded = httpx.get(f"{survivor.url}/agents/worker/ai-sdk/{case.thread}/messages",
                             timeout=WAIT).json()
        body = {"id": case.thread, "trigger": "submit-message",
                "messages": [*reloaded[:-1], answered]}
        frames = post(survivor, case, body, servers)
        assert question(case, frames) is None
        assert len(setting.effects_of(case.thread)) == 2
        assert answer_text(case, frames) == f"done: {case.next}"
        ended = [f for f in frames if isinstance(f, dict)
                 and f["type"] == "tool-output-available"]
        assert [f["toolCallId"] for f in ended] == [asked["call_id"]]


@pytest.mark.parametrize("setting", ["sqlite"], indirect=True)
def test_regenerating_on_a_thread_of_a_killed_server_settles_the_cut_call_first(
        setting: Setting) -> None:
    """AI SDK `regenerate-message` after a crash: the reply cannot be taken back while the cut
    call has no result, so the cut run goes on (a plain call: the question) and nothing runs
    unasked; approved, the call runs once more and the run goes on."""
    case = Case(f"regen-{uuid.uuid4().hex[:6]}", "ai-sdk", [("plain", "s0!")], 0, True)
    with cut_by_a_crash(setting, case) as (survivor, servers):
        body = {**case.body([case.first]), "trigger": "regenerate-message"}
        frames = post(survivor, case, body, servers)
        asked = question(case, frames)
        assert asked is not None and asked["prompt"] == CRASH_PROMPT
        assert len(setting.effects_of(case.thread)) == 1
        frames = post(survivor, case, answer(case, asked, [case.first]), servers)
        effects = setting.effects_of(case.thread)
        assert len(effects) == 2 and effects[0]["key"] == effects[1]["key"]
        assert answer_text(case, frames) == f"done: {case.first}"


@contextlib.contextmanager
def cut_by_a_crash(setting: Setting, case: Case) -> Iterator[tuple[Server, list[Server]]]:
    """A victim server killed while the case's first request runs its cut call, and the
    survivor on the same store, which continues the thread: (survivor, both servers)."""
    victim = setting.start("victim", victim=True)
    survivor = setting.start("survivor", victim=False)
    servers = [victim, survivor]
    try:
        for server in servers:
            wait_until(lambda s=server: healthy(s), "a server to answer /healthz", servers)
        reader = threading.Thread(target=_read_until_dropped, daemon=True, args=(
            f"{victim.url}/agents/worker/ai-sdk", case.body([case.first])))
        reader.start()
        wait_until(lambda: setting.effects_of(case.thread), "the plain call to start", servers)
        victim.process.send_signal(signal.SIGKILL)
        victim.process.wait(timeout=WAIT)
        yield survivor, servers
    finally:
        for server in servers:
            if server.process.poll() is None:
                server.process.kill()
                server.process.wait(timeout=WAIT)
