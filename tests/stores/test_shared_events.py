"""The run event logs and active-run records of RedisStore and PostgresStore (each test runs once
per backend): what lets any server process replay and follow a run that another process
executes."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import pytest

from pyox_agents.events import RunFinished, RunStarted
from pyox_agents.service._event_json import event_to_json
from pyox_agents.service._follow import follow_remote
from pyox_agents.stores.postgres import PostgresStore
from pyox_agents.stores.redis import RedisStore
from tests.stores.conftest import SharedStore, expires_in_ms


def events(*names: str) -> list[str]:
    return [json.dumps({"type": name}) for name in names]


@pytest.fixture
async def other(shared_store: SharedStore) -> AsyncIterator[SharedStore]:
    """A second client of the same keys or schema, as another server process would have."""
    if isinstance(shared_store, RedisStore):
        async with RedisStore(shared_store.url, prefix=shared_store.prefix) as store:
            yield store
    else:
        async with PostgresStore(shared_store.url, schema=shared_store.schema) as store:
            yield store


def wait_for(done: Callable[[], bool], within: float = 5.0) -> None:
    """Wait for `done()` to be true: for the backend's clock to expire a key or row."""
    deadline = time.monotonic() + within
    while not done():
        assert time.monotonic() < deadline, "the key did not expire"
        time.sleep(0.01)


async def await_for(done: Callable[[], Awaitable[bool]], within: float = 5.0) -> None:
    """`wait_for`, for a `done` that asks the store on its asyncio client."""
    deadline = time.monotonic() + within
    while not await done():
        assert time.monotonic() < deadline, "the key did not expire"
        await anyio.sleep(0.01)


@pytest.mark.anyio
async def test_events_appended_by_one_client_are_read_in_order_by_another(
        shared_store: SharedStore, other: SharedStore) -> None:
    ids = await shared_store.aappend_events("run-1", events("start", "text"))
    ids += await shared_store.aappend_events("run-1", events("end"))
    assert await other.aread_events("run-1") == list(zip(ids, events("start", "text", "end"),
                                                         strict=True))
    assert await other.aread_events("run-1", after_id=ids[0]) == list(
        zip(ids[1:], events("text", "end"), strict=True))
    assert await other.aread_events("run-1", after_id=ids[-1]) == []
    assert await other.aread_events("never-ran") == []


@pytest.mark.anyio
async def test_runs_have_separate_logs(shared_store: SharedStore) -> None:
    await shared_store.aappend_events("run-1", events("a"))
    await shared_store.aappend_events("run-2", events("b"))
    assert [e for _, e in await shared_store.aread_events("run-2")] == events("b")


@pytest.mark.anyio
async def test_a_done_log_ends_and_takes_no_more_events(shared_store: SharedStore,
                                                        other: SharedStore) -> None:
    await shared_store.aappend_events("run-1", events("start"))
    assert not await other.ais_done("run-1")
    await shared_store.amark_done("run-1")
    await shared_store.amark_done("run-1")  # again: only its expiry is set again
    assert await other.ais_done("run-1")
    assert [e for _, e in await other.aread_events("run-1")] == events("start")  # no done mark
    with pytest.raises(ValueError, match="'run-1' was marked done"):
        await other.aappend_events("run-1", events("late"))
    assert [e for _, e in await other.aread_events("run-1")] == events("start")
    assert not await other.ais_done("never-ran")


@pytest.mark.anyio
async def test_append_events_wants_a_list_of_texts(shared_store: SharedStore) -> None:
    with pytest.raises(TypeError, match=r"wrap it: \[event_json\]"):
        await shared_store.aappend_events("run-1", '{"type": "start"}')


@pytest.mark.anyio
async def test_a_follower_replays_then_sees_events_appended_after_it_started(
        shared_store: SharedStore, other: SharedStore) -> None:
    await shared_store.aappend_events("run-1", events("start"))
    seen: list[str] = []
    replayed = anyio.Event()

    async def follow() -> None:
        async for _, event in other.follow_events("run-1", block_ms=100):
            seen.append(event)
            replayed.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(follow)
        await replayed.wait()  # it has replayed the log: what comes now, it must wait for
        await shared_store.aappend_events("run-1", events("text"))
        await shared_store.aappend_events("run-1", events("end"))
        await shared_store.amark_done("run-1")
    assert seen == events("start", "text", "end")


@pytest.mark.anyio
async def test_two_followers_see_the_same_events(shared_store: SharedStore,
                                                 other: SharedStore) -> None:
    seen: dict[str, list[tuple[str, str]]] = {"one": [], "two": []}
    started = {"one": anyio.Event(), "two": anyio.Event()}

    async def follow(name: str, store: SharedStore) -> None:
        await store.aappend_events(f"hello-{name}", events("x"))  # its client is connected
        started[name].set()
        async for item in store.follow_events("run-1", block_ms=50):
            seen[name].append(item)

    async with anyio.create_task_group() as tg:
        tg.start_soon(follow, "one", shared_store)
        tg.start_soon(follow, "two", other)
        await started["one"].wait()
        await started["two"].wait()
        for n in range(5):
            await shared_store.aappend_events("run-1", events(f"e{n}"))
        await other.amark_done("run-1")
    assert seen["one"] == seen["two"] == await other.aread_events("run-1")
    assert [e for _, e in seen["one"]] == events(*(f"e{n}" for n in range(5)))


@pytest.mark.anyio
async def test_following_from_an_id_gives_only_what_came_after(shared_store: SharedStore) -> None:
    ids = await shared_store.aappend_events("run-1", events("a", "b", "c"))
    await shared_store.amark_done("run-1")
    assert await shared_store.ais_done("run-1")
    after = [item async for item in shared_store.follow_events("run-1", after_id=ids[0])]
    assert after == list(zip(ids[1:], events("b", "c"), strict=True))
    assert [item async for item in shared_store.follow_events("run-1", after_id=ids[-1])] == []


@pytest.mark.anyio
async def test_the_active_run_of_a_thread_is_seen_by_every_client(shared_store: SharedStore,
                                                                  other: SharedStore) -> None:
    assert await other.aget_active("t") is None
    await shared_store.aset_active("t", "run-1", ttl=30)
    assert await other.aget_active("t") == "run-1"
    assert not await other.aclear_active("t", "run-0")  # an older run's clear leaves it
    assert await other.aget_active("t") == "run-1"
    assert await other.aclear_active("t", "run-1")
    assert await shared_store.aget_active("t") is None


@pytest.mark.anyio
async def test_an_active_record_expires_unless_set_again(shared_store: SharedStore) -> None:
    await shared_store.aset_active("t", "run-1", ttl=0.05)
    await shared_store.aset_active("t", "run-1", ttl=30)
    ms = expires_in_ms(shared_store, "active", "t")
    assert ms is not None and 1000 < ms <= 30_000
    await shared_store.aset_active("t", "run-2", ttl=0.05)

    async def gone() -> bool:
        return await shared_store.aget_active("t") is None

    await await_for(gone)


@pytest.mark.anyio
async def test_the_active_run_of_a_thread_is_set_read_and_cleared_only_by_its_run(
        shared_store: SharedStore) -> None:
    await shared_store.aset_active("t", "run-1", ttl=30)
    assert await shared_store.aget_active("t") == "run-1"
    assert not await shared_store.aclear_active("t", "run-0")
    assert await shared_store.aclear_active("t", "run-1")
    assert await shared_store.aget_active("t") is None


@pytest.mark.anyio
async def test_a_log_appended_with_keep_holds_only_its_latest_events(
        shared_store: SharedStore, other: SharedStore) -> None:
    """Rule: `keep` bounds a log (a thread feed's) to its latest events; other logs keep all."""
    await shared_store.aappend_events("feed-1", events("a", "b"), keep=3)
    ids = await shared_store.aappend_events("feed-1", events("c", "d", "e"), keep=3)
    assert await other.aread_events("feed-1") == list(
        zip(ids, events("c", "d", "e"), strict=True))
    await shared_store.aappend_events("run-1", events("a", "b", "c", "d"))
    assert len(await other.aread_events("run-1")) == 4
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="keep must be a positive int"):
            await shared_store.aappend_events("feed-1", events("f"), keep=bad)  # type: ignore[arg-type]
    assert len(await other.aread_events("feed-1")) == 3  # a refused append added nothing


class _EndsAsItIsChecked:
    """`store` for `follow_remote`, whose first look at the run (whether it is done, or the
    thread's active run) reads the answer, then lets the run end (its last event logged, the
    log marked done, the thread's active run cleared, as a run's end does), then answers what
    it read: the end landing between the follower's two looks."""

    def __init__(self, store: SharedStore, thread_id: str, run_key: str, end: str) -> None:
        self.store, self.thread_id, self.run_key, self.end = store, thread_id, run_key, end
        self.ended = False

    def follow_events(self, *args: Any, **kwargs: Any) -> Any:
        return self.store.follow_events(*args, **kwargs)

    async def _then_end(self, answer: Any) -> Any:
        if not self.ended:
            self.ended = True
            await self.store.aappend_events(self.run_key, [self.end])
            await self.store.amark_done(self.run_key)
            await self.store.aclear_active(self.thread_id, self.run_key)
        return answer

    async def ais_done(self, run_key: str) -> bool:
        return bool(await self._then_end(await self.store.ais_done(run_key)))

    async def aget_active(self, thread_id: str) -> str | None:
        return await self._then_end(await self.store.aget_active(thread_id))  # type: ignore[no-any-return]


@pytest.mark.anyio
async def test_a_run_that_ends_while_its_follower_checks_on_it_is_read_to_its_end(
        shared_store: SharedStore) -> None:
    """Rule: a reader in another process reads a run to its end. A reader that heard nothing for
    a while looks whether the run still runs; a run that ended between its two looks was taken
    for one whose process died ("run_lost"), and 1 to 7 of 150 readers of a run said so."""
    thread_id, run_key = "t-ends", "run-ends"
    started = RunStarted(run_id="r1", thread_id=thread_id, state={})
    finished = RunFinished(answer="done", state={})
    await shared_store.aappend_events(run_key, [json.dumps(event_to_json(started))])
    await shared_store.aset_active(thread_id, run_key, 30)
    store = _EndsAsItIsChecked(shared_store, thread_id, run_key,
                               json.dumps(event_to_json(finished)))
    with anyio.fail_after(10):
        read = [event async for event in follow_remote(store, thread_id, run_key,  # type: ignore[arg-type]
                                                       lease_ttl=0.3)]
    assert read == [started, finished]
