"""A thread's owner is a fact kept with the thread and checked before anything else: another
principal's thread, run, approval or question is not there (404, the same as a thread that does
not exist), however many other threads the server has seen, after a restart too, and nothing
of its pending request is told (issue "nobody acts where they don't belong")."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import FunctionModel, ScriptedModel, ToolCall
from pyox_agents.runtime._paused import Paused, PausedRuns
from pyox_agents.server import ServerLimits, bearer_tokens, create_app
from pyox_agents.service import RequestError, RunRequest, RunService
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message
from pyox_agents.state.run import RunState
from pyox_agents.stores import MemoryStore, SQLiteStore

pytestmark = pytest.mark.anyio

TOKENS = {"tok-ann": "ann", "tok-bob": "bob"}
PAID: list[dict[str, Any]] = []


@tool(approval=True)
def pay(ctx: RunContext, amount: int, iban: str) -> str:
    """Send money (a person approves first)."""
    PAID.append({"amount": amount, "iban": iban})
    return "paid"


def payer(store: Any = None) -> Agent:
    def reply(messages: list[Message], tools: Any) -> Any:
        if messages[-1].role == "user":
            return ToolCall("pay", {"amount": 4200, "iban": "DE89 3704 0044 0532 0130 00"})
        return "Done."

    return Agent(FunctionModel(reply), tools=[pay], store=store)


def body(thread: str, **fields: Any) -> dict[str, Any]:
    return {"threadId": thread, "runId": "r", "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [{"id": "u1", "role": "user", "content": "pay"}],
            **fields}


def as_(who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer tok-{who}"}


def paused_by_bob(http: httpx.Client) -> str:
    """Bob's run on thread "bobs" pauses for his approval of a payment; its interrupt id."""
    response = http.post("/agents/pay/ag-ui", json=body("bobs"), headers=as_("bob"))
    assert response.status_code == 200, response.text
    assert '"interrupt"' in response.text
    return response.text.split('"interrupts":[{"id":"')[1].split('"')[0]


def approve(thread: str, interrupt: str, **arguments: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {"approved": True}
    if arguments:
        payload["arguments"] = arguments
    return body(thread, resume=[{"interruptId": interrupt, "status": "resolved",
                                 "payload": payload}])


@pytest.mark.parametrize("kept", ["no store", "store"])
def test_another_principals_approval_is_not_there_and_tells_nothing(
        live_server: Any, tmp_path: Path, kept: str) -> None:
    PAID.clear()
    store = SQLiteStore(tmp_path / "t.db") if kept == "store" else None
    url = live_server(create_app({"pay": payer()}, store=store, auth=bearer_tokens(TOKENS)))
    with httpx.Client(base_url=url, timeout=30) as http:
        interrupt = paused_by_bob(http)
        wrong = http.post("/agents/pay/ag-ui", json=approve("bobs", "not-the-id"),
                          headers=as_("ann"))
        right = http.post("/agents/pay/ag-ui", headers=as_("ann"),
                          json=approve("bobs", interrupt, amount=1, iban="ANN"))
        for answer in (wrong, right):
            assert answer.status_code == 404, answer.text
            assert answer.json() == {"error": "no thread 'bobs'"}
        connect = http.post("/agents/pay/ag-ui/connect", json=body("bobs"), headers=as_("ann"))
        assert connect.status_code == 404 and "4200" not in connect.text
    assert PAID == []


def test_an_agents_own_store_is_the_servers_so_a_restart_keeps_the_owners(
        live_server: Any, tmp_path: Path) -> None:
    """create_app without `store=` over an agent with a store of its own: owners are read from
    that store, before and after a restart."""
    PAID.clear()
    path = tmp_path / "agent.db"
    first = live_server(create_app({"pay": payer(SQLiteStore(path))},
                                   auth=bearer_tokens(TOKENS)))
    with httpx.Client(base_url=first, timeout=30) as http:
        interrupt = paused_by_bob(http)
    again = live_server(create_app({"pay": payer(SQLiteStore(path))},
                                   auth=bearer_tokens(TOKENS)))  # a restart, same store
    with httpx.Client(base_url=again, timeout=30) as http:
        connect = http.post("/agents/pay/ag-ui/connect", json=body("bobs"), headers=as_("ann"))
        assert connect.status_code == 404 and "4200" not in connect.text
        stolen = http.post("/agents/pay/ag-ui", headers=as_("ann"),
                           json=approve("bobs", interrupt, amount=1, iban="ANN"))
        assert stolen.status_code == 404
        assert http.get("/threads/bobs", headers=as_("ann")).status_code == 404
        assert http.get("/threads/bobs", headers=as_("bob")).status_code == 200
        mine = http.post("/agents/pay/ag-ui", json=approve("bobs", interrupt),
                         headers=as_("bob"))
        assert mine.status_code == 200 and "RUN_FINISHED" in mine.text
    assert PAID == [{"amount": 4200, "iban": "DE89 3704 0044 0532 0130 00"}]


def test_a_server_and_its_agents_keep_one_store() -> None:
    with pytest.raises(ValueError, match="agent 'pay' saves to a store of its own"):
        create_app({"pay": payer(MemoryStore())}, store=MemoryStore())
    with pytest.raises(ValueError, match="save to different stores"):
        create_app({"pay": payer(MemoryStore()), "two": payer(MemoryStore())})
    shared = MemoryStore()
    app = create_app({"pay": payer(shared), "plain": Agent(ScriptedModel(["hi"]))})
    assert app.state.pyox.store is shared
    assert all(agent.store is shared for agent in app.state.pyox.agents.values())


async def test_the_owner_of_a_paused_thread_is_kept_however_many_threads_follow() -> None:
    """Without a store, the owner lives with the paused run, not in a cache of recent threads:
    10,001 runs by ann later, bob's paused thread is still bob's."""
    agent = payer().with_store(None)
    cheap = Agent(FunctionModel(lambda messages, tools: "ok"))
    service = RunService(None)
    live = await service.start(agent, RunRequest(thread_id="bobs", messages=(Message.user("pay"),),
                                                 state={}), principal="bob")
    [_ async for _ in live.follow()]
    for n in range(10_001):
        run = await service.start(cheap, RunRequest(thread_id=f"a{n}", messages=(
            Message.user("hi"),), state={}), principal="ann")
        [_ async for _ in run.follow()]
    with pytest.raises(RequestError, match="no thread 'bobs'") as refused:
        await service.check_owner("bobs", "ann", agent)
    assert refused.value.status == 404
    await service.check_owner("bobs", "bob", agent)
    assert (await service.paused(agent, "bobs")) is not None


def test_paused_runs_without_a_store_are_bounded_and_expire(live_server: Any) -> None:
    """A paused run let go (over `paused_runs`, or kept `paused_seconds`) is no longer there to
    answer: an answer to it is ignored, as AG-UI says of an interrupt not open, and the request
    is an ordinary new run (which here asks again, under a new id)."""
    PAID.clear()
    limits = ServerLimits(paused_runs=2, paused_seconds=0.5)
    url = live_server(create_app({"pay": payer()}, limits=limits))

    def interrupt_of(response: httpx.Response) -> str:
        assert response.status_code == 200, response.text
        return response.text.split('"interrupts":[{"id":"')[1].split('"')[0]

    with httpx.Client(base_url=url, timeout=30) as http:
        ids = {thread: interrupt_of(http.post("/agents/pay/ag-ui", json=body(thread)))
               for thread in ("one", "two", "three")}
        kept = http.post("/agents/pay/ag-ui", json=approve("two", ids["two"]))
        assert kept.status_code == 200 and '"outcome":{"type":"success"' in kept.text
        assert len(PAID) == 1
        gone = interrupt_of(http.post("/agents/pay/ag-ui", json=approve("one", ids["one"])))
        assert gone != ids["one"] and len(PAID) == 1
        time.sleep(0.6)
        expired = interrupt_of(http.post("/agents/pay/ag-ui",
                                         json=approve("three", ids["three"])))
        assert expired != ids["three"] and len(PAID) == 1


def test_paused_runs_keep_the_latest_of_each_thread_and_let_the_oldest_go() -> None:
    runs = PausedRuns(limit=2, seconds=60)

    def paused(thread: str, run_id: str) -> Paused:
        return Paused(RunState(run_id, "goal"), State(id=thread), owner=thread)

    runs.keep(paused("t1", "a" * 64))
    runs.keep(paused("t1", "b" * 64))  # the thread's later pause replaces its earlier
    runs.keep(paused("t2", "c" * 64))
    assert runs.get("a" * 64) is None and len(runs) == 2
    runs.keep(paused("t3", "d" * 64))  # over the limit: the oldest goes
    assert runs.of_thread("t1") is None and runs.of_thread("t3") is not None
    with pytest.raises(ValueError, match="a limit >= 1"):
        PausedRuns(limit=0)


def test_paused_runs_hold_no_more_memory_than_their_byte_bound() -> None:
    """80 paused runs of 2 MB each (the tester's 80 requests of 2 MB grew a server by 230-280 MiB,
    never freed): with a 20 MB bound, the runs kept hold about that much, and the oldest go."""
    runs = PausedRuns(limit=1_000, seconds=3_600, max_bytes=20_000_000)
    tracemalloc.start()
    try:
        for n in range(80):
            big = "x" * 2_000_000 + str(n)  # a fresh 2 MB string each time
            conversation = State(id=f"t{n}", messages=[Message.user(big)])
            runs.keep(Paused(RunState(f"{n:064x}", "goal"), conversation, {"n": n}))
            del big, conversation
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(runs) <= 10 and runs.of_thread("t79") is not None
    assert runs.of_thread("t0") is None
    assert held < 40_000_000, held
