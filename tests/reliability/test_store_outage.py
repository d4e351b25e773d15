"""Issue 22: the store goes away during a run and comes back.

A real `redis-server` is frozen (SIGSTOP: connections are accepted, nothing answers) or killed
and started again on its port; a real PostgreSQL is stopped (`-m immediate`) and started again.
The agent adds "a", "b", "c" to the shared state, one per step; the store goes away while "b" is
being added. Then:

- the run ends with a terminal event (AG-UI `RUN_ERROR`, AI SDK `error` + `finish` + `[DONE]`)
  whose code is `store_unavailable`, within the store's bounded timeouts;
- requests during the outage get 503 with `Retry-After` and a body saying the store is
  unreachable (JSON `{"error", "store": "unreachable"}`; plain text for the AI SDK);
- once the store is back, the thread holds its last committed step and nothing half-written
  (its state is the items of the `add` results it holds), the next message continues it to
  "a", "b", "c", and every run's audit chain verifies.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import anyio
import httpx
import pytest

from pyox_agents.server import create_app
from pyox_agents.stores.base import Store
from tests.ag_ui.servers import serving
from tests.reliability.outages import postgres_process, redis_process
from tests.reliability.todo_runs import (
    ITEMS,
    Fault,
    ag_ui_body,
    ai_sdk_body,
    last_committed_step,
    next_message_continues,
    run_cut_by_a_store_fault,
    todo_agent,
    verify_runs,
)

pytestmark = pytest.mark.anyio


class Outage(Fault):
    """What the test takes away and brings back, and the store it serves."""

    def __init__(self, store: Store, begin: Callable[[], None], end: Callable[[], None],
                 ends_within: float = 30.0) -> None:
        super().__init__(begin, end)
        self.store = store
        self.ends_within = ends_within
        """Seconds the cut run may take to end: a few of the store's timeouts, not a hang."""


@contextlib.contextmanager
def redis_outage(how: str) -> Iterator[Outage]:
    from pyox_agents.stores import RedisStore

    with redis_process(persist=how == "killed") as server:
        store = RedisStore(server.url, connect_timeout=0.5, command_timeout=1.0)
        if how == "frozen":
            yield Outage(store, server.freeze, server.thaw)
        else:
            yield Outage(store, server.stop, server.start)
        store.close()


@contextlib.contextmanager
def postgres_outage() -> Iterator[Outage]:
    from pyox_agents.stores import PostgresStore

    with postgres_process() as server:
        store = PostgresStore(server.url, connect_timeout=1.0, pool_timeout=2.5)
        # the tool's step waits one pool timeout to keep its state, the step's commit one,
        # the run's end one to keep the state and one to log its end: no write more (each
        # write after the first failure waited its own timeout: 25-30 s, at the limit)
        yield Outage(store, server.stop, server.start, ends_within=4 * 2.5 + 5.0)
        store.close()


OUTAGES: dict[str, Callable[[], contextlib.AbstractContextManager[Outage]]] = {
    "redis-frozen": lambda: redis_outage("frozen"),
    "redis-killed": lambda: redis_outage("killed"),
    "postgres-stopped": postgres_outage,
}


async def refused_while_away(client: httpx.AsyncClient, url: str) -> None:
    """Requests that need the store get 503, Retry-After and a body that says why."""
    response = await client.post(f"{url}/agents/todo/ag-ui", json=ag_ui_body("other"))
    assert response.status_code == 503, response.text
    assert int(response.headers["retry-after"]) >= 1
    assert response.json()["store"] == "unreachable"
    assert "the store is unreachable" in response.json()["error"]
    response = await client.post(f"{url}/agents/todo/ai-sdk", json=ai_sdk_body("other2"))
    assert response.status_code == 503 and "retry-after" in response.headers
    assert response.text.startswith("the store is unreachable")
    response = await client.get(f"{url}/threads/t")
    assert response.status_code == 503 and response.json()["store"] == "unreachable"


async def once_back(client: httpx.AsyncClient, url: str) -> httpx.Response:
    """GET `url` as a client that honours Retry-After does: again after each 503's wait (a
    pool reconnects to a server that came back on its own schedule)."""
    while True:
        response = await client.get(url)
        if response.status_code != 503:
            assert response.status_code == 200, response.text
            return response
        await anyio.sleep(int(response.headers["retry-after"]))


@pytest.mark.parametrize(("kind", "protocol"), [
    ("redis-frozen", "ag-ui"), ("redis-frozen", "ai-sdk"), ("redis-killed", "ag-ui"),
    ("postgres-stopped", "ag-ui"), ("postgres-stopped", "ai-sdk"),
])
async def test_a_store_outage_ends_the_run_cleanly_and_the_thread_goes_on_after(
    kind: str, protocol: str
) -> None:
    with OUTAGES[kind]() as outage:
        app = create_app({"todo": todo_agent(outage)}, store=outage.store, lease_ttl=3)
        async with serving(app, log_level="critical") as url, \
                httpx.AsyncClient(timeout=60) as client:
            with anyio.fail_after(outage.ends_within):  # the store's timeouts, not a hang
                await run_cut_by_a_store_fault(client, url, protocol)
            with anyio.fail_after(30):
                await refused_while_away(client, url)
            await anyio.to_thread.run_sync(outage.end)

            with anyio.fail_after(60):
                thread = (await once_back(client, f"{url}/threads/t")).json()
            added = last_committed_step(thread)

            with anyio.fail_after(30):
                await next_message_continues(client, url, added)
            thread = (await client.get(f"{url}/threads/t")).json()
            assert thread["state"] == {"items": ITEMS}, thread
            assert not thread["running"], (thread, await outage.store.aget_active("t"))
        verify_runs(outage.store, "t")
