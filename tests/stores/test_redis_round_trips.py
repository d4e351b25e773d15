"""RedisStore asks Redis only what it does not know: a step is built from what this process wrote
under the lease it holds (never read back), a run ends in one round trip, and a served run's
store calls stay on the event loop (the asyncio client, no worker thread). Each short cut gives
what the long way gives: the property test compares them on every history of two processes."""

from __future__ import annotations

import collections
import threading
import uuid
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import ScriptedModel
from pyox_agents.server import create_app
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message, ToolCall
from pyox_agents.stores import StepRecord, Store, StoreConflict
from pyox_agents.stores.redis import RedisStore
from tests.ag_ui.servers import serving
from tests.stores.conftest import drop_keys

CONFLICT = "conflict"


def commands(store: RedisStore, name: str) -> int:
    """How many `name` commands Redis has run so far (INFO commandstats)."""
    stats = store.client.info("commandstats").get(f"cmdstat_{name.lower()}")
    return int(stats["calls"]) if stats else 0


def slow_record(store: RedisStore, state: State) -> StepRecord | str:
    """`Store.record_for`, the long way: the count and the last entry read from Redis."""
    try:
        return Store.record_for(store, state)
    except StoreConflict:
        return CONFLICT


def fast_record(store: RedisStore, state: State) -> StepRecord | str:
    try:
        return store.record_for(state)
    except StoreConflict:
        return CONFLICT


@pytest.mark.anyio
async def test_a_step_is_built_without_reading_back_what_this_process_wrote(
        redis_store: RedisStore) -> None:
    """DESIGN.md: "Writes per step are appends"; the count and last entry a step continues are
    the ones this process's last fenced write left, known without a round trip."""
    token = await redis_store.aacquire_lease("t", "me", 30)
    assert token is not None
    state = State(id="t", messages=[Message.user("one")])
    redis_store.write_fenced(redis_store.record_for(state), "t", token)
    before = commands(redis_store, "lindex")
    for n in range(3):
        state.add_message(Message.user(f"more {n}"))
        record = redis_store.record_for(state)
        assert record == slow_record(redis_store, state)  # the long way agrees
        redis_store.write_fenced(record, "t", token)
    assert commands(redis_store, "lindex") == before + 3  # only the long way's reads
    assert [m.content for m in redis_store.load("t").messages] == [
        "one", "more 0", "more 1", "more 2"]


@pytest.mark.anyio
async def test_a_thread_another_process_wrote_meanwhile_is_read_again(
        redis_store: RedisStore) -> None:
    """A process's lease expired and another took the thread and wrote it: the first process's
    stale write is refused by the fence, and once it holds the lease again its step follows
    what the other wrote (read from Redis, not from what it knew)."""
    async with RedisStore(redis_store.url, prefix=redis_store.prefix) as other:
        token = await redis_store.aacquire_lease("t", "a", 0.05)
        assert token is not None
        mine = State(id="t", messages=[Message.user("a1")])
        redis_store.write_fenced(redis_store.record_for(mine), "t", token)
        taken = None
        while taken is None:  # the lease expires
            taken = await other.aacquire_lease("t", "b", 30)
        theirs = other.load("t")
        theirs.add_message(Message.user("b1"))
        other.write_fenced(other.record_for(theirs), "t", taken)
        await other.arelease_lease("t", "b", taken)
        mine.add_message(Message.user("a2"))
        with pytest.raises(StoreConflict):  # by the fence, or by the count: nothing written
            redis_store.write_fenced(redis_store.record_for(mine), "t", token)
        again = await redis_store.aacquire_lease("t", "a", 30)
        assert again is not None
        assert fast_record(redis_store, mine) == CONFLICT == slow_record(redis_store, mine)
        reloaded = redis_store.load("t")
        reloaded.add_message(Message.user("a2"))
        redis_store.write_fenced(redis_store.record_for(reloaded), "t", again)
    assert [m.content for m in redis_store.load("t").messages] == ["a1", "b1", "a2"]


# one turn of one process: (which process, reload the thread first, messages per step, steps)
turns = st.lists(st.tuples(st.integers(0, 1), st.booleans(), st.integers(0, 2),
                           st.integers(1, 3)), min_size=1, max_size=6)


@pytest.mark.anyio
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=turns)
async def test_the_known_tail_gives_the_record_reading_redis_gives(redis_server: str,
                                                                   history: list[Any]) -> None:
    """Two processes take turns on one thread, each under the lease: at every step, the record
    built from what the process knows equals the one built from Redis (or both refuse), and
    the thread ends up holding exactly what was written, in order."""
    prefix = f"test-{uuid.uuid4().hex[:12]}:"
    stores = [RedisStore(redis_server, prefix=prefix) for _ in range(2)]
    states: list[State | None] = [None, None]
    written: list[Any] = []
    try:
        for turn, (who, reload, messages, steps) in enumerate(history):
            store = stores[who]
            token = await store.aacquire_lease("t", f"p{who}", 30)
            assert token is not None
            state = states[who]
            if reload or state is None:
                try:
                    state = store.load("t")
                except LookupError:
                    state = State(id="t")
            for step in range(steps):
                for n in range(messages):
                    state.add_message(Message.user(f"{turn}.{step}.{n}"))
                fast, slow = fast_record(store, state), slow_record(store, state)
                assert fast == slow
                if fast == CONFLICT:
                    break
                assert isinstance(fast, StepRecord)
                store.write_fenced(fast, "t", token)
                written = [m.content for m in state.messages]
            states[who] = state
            assert await store.arelease_lease("t", f"p{who}", token)
        if written:
            assert [m.content for m in stores[0].load("t").messages] == written
    finally:
        drop_keys(stores[0])
        for store in stores:
            await store.aclose()


@pytest.mark.anyio
async def test_ending_a_run_is_one_round_trip(redis_store: RedisStore) -> None:
    """Its last events logged, its log marked done, the thread's active run cleared and the
    lease released, at once: a follower that hears the end finds the thread free."""
    await redis_store.aend_run("warm-up", "run-0", "me", 1)  # the script known to Redis
    token = await redis_store.aacquire_lease("t", "me", 30)
    assert token is not None
    await redis_store.aset_active("t", "run-1", 30)
    await redis_store.aappend_events("run-1", ['{"n": 1}'])
    evals = commands(redis_store, "evalsha")
    assert await redis_store.aend_run("t", "run-1", "me", token, ['{"n": 2}', '{"n": 3}'])
    assert commands(redis_store, "evalsha") == evals + 1
    followed = [event async for _, event in redis_store.follow_events("run-1")]
    assert followed == ['{"n": 1}', '{"n": 2}', '{"n": 3}']
    assert await redis_store.ais_done("run-1")
    assert await redis_store.aget_active("t") is None
    assert redis_store.lease_holder("t") is None
    # once done, the log takes nothing more, and a stale holder frees nothing
    other = await redis_store.aacquire_lease("t", "you", 30)
    await redis_store.aset_active("t", "run-2", 30)
    assert not await redis_store.aend_run("t", "run-1", "me", token, ['{"late": 1}'])
    assert [e async for _, e in redis_store.follow_events("run-1")] == followed
    assert redis_store.lease_holder("t") == ("you", other)
    assert await redis_store.aget_active("t") == "run-2"
    with pytest.raises(TypeError, match="wrap it"):
        await redis_store.aend_run("t", "run-1", "me", token, '{"n": 4}')  # type: ignore[arg-type]


# --- a served run ---------------------------------------------------------------------------


@tool
def add_item(ctx: RunContext, text: str) -> str:
    """Add an item."""
    ctx.state["items"].append(text)
    return "added"


def agent(runs: int) -> Agent:
    call = [ToolCall(id="c1", name="add_item", arguments={"text": "milk"})]
    return Agent(ScriptedModel([call, "done"] * runs), tools=[add_item], name="shop")


def body(thread: str) -> dict[str, Any]:
    return {"threadId": thread, "runId": uuid.uuid4().hex, "state": {"items": []},
            "tools": [], "context": [], "forwardedProps": {},
            "messages": [{"id": "u1", "role": "user", "content": "add milk"}]}


class Monitor:
    """Every command a client sends Redis on keys under `prefix` (MONITOR), as round trips:
    a script call, a MULTI ... EXEC, or a plain command (a script's own commands are not)."""

    def __init__(self, url: str, prefix: str) -> None:
        self.url, self.prefix = url, prefix
        self.lines: list[dict[str, Any]] = []
        self._ready, self._stop = threading.Event(), threading.Event()

    def __enter__(self) -> Monitor:
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()
        assert self._ready.wait(5)
        return self

    def _listen(self) -> None:
        with redis.Redis.from_url(self.url).monitor() as monitor:
            self._ready.set()
            for line in monitor.listen():
                if self._stop.is_set():
                    return
                self.lines.append(line)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        redis.Redis.from_url(self.url).ping()
        self._thread.join(5)

    def round_trips(self) -> collections.Counter[str]:
        trips: collections.Counter[str] = collections.Counter()
        multi: list[str] | None = None
        for line in self.lines:
            if line.get("client_type") == "lua":
                continue
            command = line["command"]
            name = command.split()[0].upper()
            if name == "MULTI":
                multi = []
            elif name == "EXEC" and multi is not None:
                if any(self.prefix in part for part in multi):
                    trips["MULTI"] += 1
                multi = None
            elif multi is not None:
                multi.append(command)
            elif self.prefix in command and name == "EVALSHA":  # by its first key's kind
                trips["EVALSHA " + command.split()[3].split(":")[-2]] += 1
            elif self.prefix in command:
                trips[name] += 1
        return trips


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The functions run in a worker thread meanwhile (`anyio.to_thread.run_sync`: the store's
    calls and sync tools alike)."""
    seen: list[str] = []
    run_sync = anyio.to_thread.run_sync

    def name(function: Any) -> str:
        return str(getattr(getattr(function, "func", function), "__qualname__", "?"))

    async def counted(function: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(name(function))
        return await run_sync(function, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    return seen


@pytest.mark.anyio
async def test_a_served_run_makes_few_round_trips_and_no_worker_thread_hop_for_the_store(
        redis_store: RedisStore, hops: list[str]) -> None:
    """A run with one tool call and an answer, served with a RedisStore: every store call on
    the asyncio client (the only worker thread is the sync tool's own), and at most 18 round
    trips to Redis (25 before: reads of what this process had just written, a thread hop per
    step, four calls to end a run, the thread read three times), the run's checkpoint among
    them (its entry count known, not read). One of them is the price of a crash never
    applying a change twice: the tool's change is saved with its result before it is shown;
    another, of a stop that names its run (CopilotKit's) reaching it on any process."""
    app = create_app({"shop": agent(2)}, store=redis_store)
    async with serving(app) as url, httpx.AsyncClient(base_url=url) as client:
        await client.post("/agents/shop/ag-ui", json=body("warm-up"))  # connections made
        hops.clear()
        with Monitor(redis_store.url, redis_store.prefix) as monitor:
            response = await client.post("/agents/shop/ag-ui", json=body("t1"))
            await anyio.sleep(0.2)
    assert response.status_code == 200 and "RUN_FINISHED" in response.text
    assert hops == ["add_item"]
    trips = monitor.round_trips()
    # the event log's: an append per batch of events (the start, the tool call, its result and
    # state, the answer), then its end, which takes the answer too when they come together; the
    # rest: 1 owner lookup, 1 lease, 1 kept state and thread, 1 active run,
    # 5 step writes (the start, the decision, the call with its change before it is shown, the
    # step's end, the answer), 1 kept state written, 1 checkpoint written, 1 look whether any
    # process follows the thread's feed (nobody does: its items are not appended), 1 append of
    # the client's runId to the run's meta log (a stop sent to another process that names the
    # run finds it there)
    assert sum(trips.values()) - trips["EVALSHA events"] == 13, trips
    assert trips["EVALSHA thread"] == 5, trips
    assert trips["GET"] == 1 and not trips["EVALSHA feed"], trips
    assert trips["EVALSHA events"] <= 5, trips
    assert sum(trips.values()) <= 18, trips
    assert not trips["LINDEX"] and not trips["HGET"], trips  # nothing read back
    assert redis_store.lease_holder("t1") is None
