"""Issue 22: process churn. Three server processes on one Redis, each SIGKILLed and started
again at random moments, while 200 runs with tools and approvals go through them.

Each run is a thread whose plan is `note:a<i> charge:x<i> note:b<i>`: `charge` needs approval
and has a side effect outside the state (a line appended to a file, counted across processes).
A client sends its run to any of the three processes, follows its AG-UI stream (replaying the
state from the snapshot and the deltas it sees), answers each approval it is asked, and when a
stream is cut, refused (409 while a dead process's lease lasts) or the process is down, tries
again on whichever process answers. At the end:

- every run completed (each thread's last run finished with success);
- no side-effecting tool ran more often than its client approved it (a call a kill cut is asked
  about again, "outcome unknown after a crash", never run again unasked);
- every thread's state (`GET /threads/{id}`) equals the replay of the deltas its client saw;
- every run's audit chain verifies.

The counts are printed (`-s`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jsonpatch
import pytest

from pyox_agents.state.audit import verify_audit
from tests.redis_server import redis_server  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
RUNS = int(os.environ.get("PYOX_CHURN_RUNS", "200"))
CLIENTS = 25


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Process:
    """One uvicorn process of `churn_app`, on a port of its own, that can be killed and
    started again."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.kills = 0

    def start(self) -> None:
        log = Path(self.env["PYOX_CHURN_EFFECTS"]) / f"server-{self.port}.log"
        with log.open("ab") as output:  # what a process said, kept for a failure's message
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "tests.reliability.churn_app:app", "--host",
                 "127.0.0.1", "--port", str(self.port), "--log-level", "error"],
                cwd=ROOT, env=self.env, stdout=output, stderr=subprocess.STDOUT)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()
        self.kills += 1


class Client:
    """One thread's client: what it saw and what it approved."""

    def __init__(self, index: int) -> None:
        self.thread = f"churn-{index}"
        self.plan = f"note:a{index} charge:x{index} note:b{index}"
        self.what = f"x{index}"
        self.view: Any = None
        self.approvals = 0
        self.asked_again = 0
        self.tries = 0
        self.done = False
        self.seen: list[Any] = []  # (status, last event) of each try, for a failure's message


async def follow(client: httpx.AsyncClient, url: str, body: dict[str, Any]
                 ) -> tuple[int, list[dict[str, Any]]]:
    """POST a run and read its events until the stream ends (or is cut)."""
    events: list[dict[str, Any]] = []
    with contextlib.suppress(httpx.TransportError):
        async with client.stream("POST", f"{url}/agents/worker/ag-ui", json=body) as response:
            if response.status_code != 200:
                return response.status_code, events
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    events.append(json.loads(line[5:]))
        return 200, events
    return 0 if not events else 200, events


async def drive(client: httpx.AsyncClient, processes: list[Process], user: Client) -> None:
    resume: list[dict[str, Any]] | None = None
    while not user.done:
        user.tries += 1
        assert user.tries < 200, f"{user.thread} did not complete: {user.seen[-6:]}"
        body: dict[str, Any] = {
            "threadId": user.thread, "runId": f"r{user.tries}", "protocolVersion": "1.0",
            "state": user.view if user.view is not None else {},
            "messages": [{"id": f"u{user.tries}", "role": "user", "content": user.plan}]}
        if resume is not None:
            body["resume"] = resume
            user.approvals += 1  # counted as sent: the tool may run from here on
        status, events = await follow(client, random.choice(processes).url, body)
        user.seen.append((status, events[-1] if events else None))
        if status != 200:
            if status == 422:  # the question it answered was withdrawn: ask what is open now
                resume = None
            await asyncio.sleep(0.2)
            continue
        resume = None
        for event in events:
            if event["type"] == "STATE_SNAPSHOT":
                user.view = event["snapshot"]
            elif event["type"] == "STATE_DELTA":
                user.view = jsonpatch.apply_patch(user.view, event["delta"])
        last = events[-1] if events else {}
        if last.get("type") != "RUN_FINISHED":
            await asyncio.sleep(0.2)  # cut, or RUN_ERROR: go on, on any process
            continue
        if last["outcome"]["type"] == "success":
            user.done = True
        elif last["outcome"]["type"] == "interrupt":
            (asked,) = last["outcome"]["interrupts"]
            user.asked_again += "outcome unknown" in asked.get("message", "")
            resume = [{"interruptId": asked["id"], "status": "resolved",
                       "payload": {"approved": True}}]


async def churn(processes: list[Process], stop: asyncio.Event) -> None:
    """Kill a random process at random moments and start it again."""
    rng = random.Random(2222)
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), rng.uniform(1.0, 3.0))
        if stop.is_set():
            return
        victim = rng.choice(processes)
        victim.kill()
        await asyncio.sleep(0.3)
        victim.start()


def after_the_churn(users: list[Client], folder: Path, url: str, prefix: str
                    ) -> tuple[dict[str, int], int]:
    """No process failed a request with a traceback; each charge's side effects, counted; and
    every run's audit chain verified (how many)."""
    from pyox_agents.stores.redis import RedisStore

    for log in folder.glob("server-*.log"):
        assert "Traceback" not in log.read_text(), log.read_text()[-5000:]
    effects = {u.what: len((folder / u.what).read_text().splitlines())
               if (folder / u.what).exists() else 0 for u in users}
    audits = 0
    with contextlib.closing(RedisStore(url, prefix=prefix)) as store:
        for user in users:
            entries = store.load_thread(user.thread).entries
            for run_id in {str(e["content"]) for e in entries if e.get("kind") == "run_start"}:
                verify_audit(store, run_id)
                audits += 1
    return effects, audits


async def settled(client: httpx.AsyncClient, url: str) -> Any:
    """The thread at `url` once no run holds it (a lease a kill left lasts 2 s), or as it is
    after 10 s."""
    for _ in range(100):
        thread = (await client.get(url)).json()
        if not thread["running"]:
            break
        await asyncio.sleep(0.1)
    return thread


@dataclass
class Churned:
    """What a churn left: its clients, the threads as the server shows them, the side effects
    of each charge, and the counts."""

    users: list[Client]
    states: dict[str, Any]
    effects: dict[str, int]
    counts: Counter[str]


async def run_churn(url: str, folder: Path) -> Churned:
    """RUNS runs through three processes killed at random; every client drives its run to the
    end."""
    prefix = f"churn-{uuid.uuid4().hex[:8]}:"
    env = {**os.environ, "PYOX_CHURN_REDIS": url, "PYOX_CHURN_PREFIX": prefix,
           "PYOX_CHURN_EFFECTS": str(folder),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    processes = [Process(env) for _ in range(3)]
    for process in processes:
        process.start()
    users = [Client(i) for i in range(RUNS)]
    started = time.monotonic()
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            gate = asyncio.Semaphore(CLIENTS)
            stop = asyncio.Event()

            async def one(user: Client) -> None:
                async with gate:
                    await drive(client, processes, user)

            killer = asyncio.create_task(churn(processes, stop))
            await asyncio.gather(*(one(user) for user in users))
            stop.set()
            await killer
            await asyncio.sleep(2.5)  # every lease a kill left has expired
            check = processes[0]
            for _ in range(100):  # the last one started may still be starting
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get(f"{check.url}/healthz")).status_code == 200:
                        break
                await asyncio.sleep(0.1)
            states = {u.thread: await settled(client, f"{check.url}/threads/{u.thread}")
                      for u in users}
    finally:
        for process in processes:
            if process.proc is not None and process.proc.poll() is None:
                process.kill()
    effects, audits = after_the_churn(users, folder, url, prefix)
    counts = Counter(
        completed=sum(u.done for u in users), kills=sum(p.kills for p in processes),
        tries=sum(u.tries for u in users), approvals=sum(u.approvals for u in users),
        asked_again=sum(u.asked_again for u in users), side_effects=sum(effects.values()),
        audit_chains=audits)
    print(f"\nchurn: {dict(counts)} in {time.monotonic() - started:.0f} s")
    return Churned(users, states, effects, counts)


@pytest.fixture(scope="module")
def churned(redis_server: str, tmp_path_factory: pytest.TempPathFactory  # noqa: F811
            ) -> Churned:
    return asyncio.run(run_churn(redis_server, tmp_path_factory.mktemp("churn")))


@pytest.mark.timeout(600)
def test_every_run_completes_no_tool_runs_twice_unasked_and_every_audit_verifies(
    churned: Churned
) -> None:
    """Every run completed through the kills; each charge ran at least once and never more
    often than its client approved it; every audit chain verified (in `after_the_churn`)."""
    assert churned.counts["completed"] == RUNS
    assert churned.counts["kills"] >= 3
    for user in churned.users:
        assert 1 <= churned.effects[user.what] <= user.approvals, (
            user.thread, churned.effects[user.what], user.approvals)
        assert not churned.states[user.thread]["running"], user.thread


def test_every_threads_state_is_the_replay_of_the_deltas_its_client_saw(
    churned: Churned
) -> None:
    """A thread's state (`GET /threads/{id}`) is never behind what its client saw, whenever
    a process was killed: each version is kept before a client is shown it."""
    for user in churned.users:
        state = churned.states[user.thread]["state"]
        assert state == user.view, (user.thread, state, user.view)
        assert state["notes"] == [f"a{user.thread[6:]}", f"b{user.thread[6:]}"]
