"""Issue 22: a `SQLiteStore` whose disk fills up during a run.

The test mounts a tmpfs of a few MB (the tests run as root; without the right to mount, they
skip and say so) and keeps the database there. The agent adds "a", "b", "c" to the shared
state, one per step; while "b" is being added the disk is filled to the last byte (a filler
file). Then, as for a store outage:

- the run ends with a terminal event whose code is `store_unavailable` (AG-UI `RUN_ERROR`,
  AI SDK `error` + `finish` + `[DONE]`);
- a request that must write (a new run) gets 503 with `Retry-After` and a body that says the
  store cannot be written; reads (`GET /threads/{id}`) still answer;
- the thread holds its last committed step and nothing half-written; once space is freed the
  next message continues the thread to "a", "b", "c", and every run's audit chain verifies.

A read-only filesystem is not tested here: Linux refuses to remount a filesystem read-only
while a file on it is open for writing (EBUSY), and as root a read-only file mode does not
stop writes. SQLite's SQLITE_READONLY maps to `StoreUnavailable` like SQLITE_FULL.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents.server import create_app
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.servers import serving
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

DISK_BYTES = 4 * 1024 * 1024


@contextlib.contextmanager
def small_disk() -> Iterator[Path]:
    """A tmpfs of DISK_BYTES mounted on a fresh folder; unmounted at the end."""
    folder = Path(tempfile.mkdtemp(prefix="pyox-disk-"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs",
                           str(folder)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        folder.rmdir()
        pytest.skip(f"cannot mount a small tmpfs here (needs root: {done.stderr.strip()}); "
                    "the full-disk tests need one")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
        folder.rmdir()


def fill(folder: Path) -> None:
    """Write a filler file until the disk has no byte left."""
    with (folder / "filler").open("wb") as filler:
        chunk = b"\0" * 65536
        with contextlib.suppress(OSError):
            while True:
                filler.write(chunk)
                filler.flush()
        with contextlib.suppress(OSError):  # the last bytes that fit
            while True:
                filler.write(b"\0")
                filler.flush()
    with pytest.raises(OSError, match="No space left") as full:
        (folder / "probe").write_bytes(b"x" * 4096)
    assert full.value.errno == errno.ENOSPC


def full_disk(folder: Path) -> Fault:
    return Fault(lambda: fill(folder), lambda: os.remove(folder / "filler"))


async def refused_while_unwritable(client: httpx.AsyncClient, url: str) -> None:
    """A new run cannot be saved: 503 with Retry-After; reading the thread still works."""
    response = await client.post(f"{url}/agents/todo/ag-ui", json=ag_ui_body("other"))
    assert response.status_code == 503, response.text
    assert int(response.headers["retry-after"]) >= 1
    assert response.json()["store"] == "unreachable"
    assert "cannot be written" in response.json()["error"]
    response = await client.post(f"{url}/agents/todo/ai-sdk", json=ai_sdk_body("other2"))
    assert response.status_code == 503 and "retry-after" in response.headers, response.text
    assert (await client.get(f"{url}/threads/t")).status_code == 200


@pytest.mark.parametrize("protocol", ["ag-ui", "ai-sdk"])
async def test_a_full_disk_ends_the_run_cleanly_and_the_thread_goes_on_after(
    protocol: str
) -> None:
    with small_disk() as folder:
        fault = full_disk(folder)
        store = SQLiteStore(folder / "s.db")
        app = create_app({"todo": todo_agent(fault)}, store=store)
        async with serving(app, log_level="critical") as url, \
                httpx.AsyncClient(timeout=30) as client:
            with anyio.fail_after(30):
                await run_cut_by_a_store_fault(client, url, protocol)
                await refused_while_unwritable(client, url)
            await anyio.to_thread.run_sync(fault.end)

            thread: Any = (await client.get(f"{url}/threads/t")).json()
            added = last_committed_step(thread)
            with anyio.fail_after(30):
                await next_message_continues(client, url, added)
            thread = (await client.get(f"{url}/threads/t")).json()
            assert thread["state"] == {"items": ITEMS}, thread
        verify_runs(store, "t")
        store.close()
