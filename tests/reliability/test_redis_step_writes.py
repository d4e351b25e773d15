"""A run's step writes on Redis go through the asyncio client, on the event loop: a cancel that
lands while one is in flight (a stop, a client leaving with on_disconnect="cancel") waits for
it, as a write in a worker thread did, so the run's end is still recorded after it."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents.runtime._to_the_end import to_the_end
from pyox_agents.server import create_app
from pyox_agents.stores import RedisStore
from pyox_agents.stores.base import StepRecord
from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name
from tests.reliability.test_faults import ITEMS, body, events_of, serving, todo_agent
from tests.stores.conftest import drop_keys

pytestmark = pytest.mark.anyio


class CancelDuringWrite(RedisStore):
    """A RedisStore that, once its first fenced step write has landed and before that write
    returns, cancels the run's task as `RunService.stop` does (`live.task.cancel()`)."""

    app: Any = None
    calls = 0

    async def awrite_fenced(self, record: StepRecord, thread_id: str, token: int) -> None:
        await super().awrite_fenced(record, thread_id, token)
        self.calls += 1
        if self.calls == 1 and self.app is not None:
            self.app.state.pyox.runs.active(record.thread_id).task.cancel()
            await asyncio.sleep(0.2)  # the cancel is delivered while the write is in flight


async def test_a_run_cancelled_during_a_redis_step_write_still_records_its_end(
        redis_server: str) -> None:  # noqa: F811 - the fixture
    store = CancelDuringWrite(redis_server, prefix="cancel-during-write:")
    app = create_app({"todo": todo_agent(), "ok": todo_agent()}, store=store)
    store.app = app
    try:
        async with serving(app) as url, httpx.AsyncClient(timeout=30, base_url=url) as client:
            response = await client.post("/agents/todo/ag-ui", json=body("t"))
            assert events_of(response.text)[-1]["type"] == "RUN_FINISHED"
            assert events_of(response.text)[-1]["outcome"]["type"] == "cancelled"
            store.app = None
            runs = [key.split(":")[-1] for key in store.client.scan_iter(f"{store.prefix}run:*")]
            assert [store.load_run(run).status.value for run in runs] == ["stopped"]
            assert store.lease_holder("t") is None
            again = await client.post("/agents/ok/ag-ui", json=body("t", "again"))
            assert events_of(again.text)[-1]["type"] == "RUN_FINISHED", again.text[-300:]
            thread = (await client.get("/threads/t")).json()
            assert thread["state"] == {"items": ITEMS}
    finally:
        drop_keys(store)
        await store.aclose()


@pytest.mark.parametrize("how", ["task.cancel()", "a cancel scope"])
async def test_a_cancelled_store_call_ends_before_the_cancel_is_delivered(how: str) -> None:
    """The journal's write on the event loop is awaited to its end, whichever way the run is
    cancelled (`RunService.stop`'s `task.cancel()`, or a deadline's cancel scope), and the
    cancel is delivered after it."""
    release, ended, went_on = asyncio.Event(), [], []

    async def call() -> int:
        await release.wait()
        ended.append(True)
        return 1

    scopes: list[anyio.CancelScope] = []

    async def run() -> None:
        with anyio.CancelScope() as scope:
            scopes.append(scope)
            await to_the_end(call())
            went_on.append(True)

    task = asyncio.create_task(run())
    await asyncio.sleep(0.01)  # the call is in flight
    if how == "task.cancel()":
        task.cancel()
    else:
        scopes[0].cancel()
    await asyncio.sleep(0.01)
    assert not task.done() and not ended  # waits for the call
    release.set()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert ended == [True] and not went_on
