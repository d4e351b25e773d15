"""A process's control log reader ends when the service closes it, also on a store whose driver
reports the cancel as an error of its own (redis-py and psycopg can raise a connection error
from a wait that is cancelled): it took that error for a store failure and retried every second,
forever, logging a warning each time."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pyox_agents.service._control import Control

pytestmark = pytest.mark.anyio


class _CancelAsError:
    """The two calls `Control` makes of its store, as a driver that turns a cancel into a
    connection error answers them."""

    async def alast_event_id(self, key: str) -> str:
        return "0"

    async def follow_events(self, key: str, after: str = "0") -> AsyncIterator[tuple[str, str]]:
        try:
            await asyncio.Event().wait()  # no stop request ever comes
        except asyncio.CancelledError:
            raise ConnectionError("connection closed by the cancelled read") from None
        yield "never", "{}"


async def _stop_here(thread_id: str, run_key: str) -> None:
    raise AssertionError("no stop was asked")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_closed_control_reader_ends_when_the_driver_turns_the_cancel_into_an_error(
        caplog: pytest.LogCaptureFixture) -> None:
    """Rule: closing stops following the control log; a driver's error raised by the cancel
    is not a store failure to retry."""
    control = Control(_CancelAsError(), _stop_here)  # type: ignore[arg-type]
    control.RETRY = 0.01
    await control.start("owner-1")
    reader: Any = control._reader
    with caplog.at_level(logging.WARNING, logger="pyox_agents.service._control"):
        control.close()
        done, _ = await asyncio.wait([reader], timeout=1.0)
    assert done and reader.cancelled()
    assert not [r for r in caplog.records if "could not be followed" in r.getMessage()]
