"""A run's toolsets: their tools listed into the run while it lasts (see `pyox_agents.toolsets`)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager

from pyox_agents.runtime._runner import Runner
from pyox_agents.tools import Tool
from pyox_agents.toolsets import Toolset, opened

__all__ = ["toolsets_opened"]


@asynccontextmanager
async def toolsets_opened(own: Mapping[str, Tool], toolsets: Sequence[Toolset], runner: Runner
                          ) -> AsyncIterator[None]:
    """Give `runner` the toolsets' tools beside `own` for its run (connecting them), and release
    the toolsets after it; a toolset that cannot list its tools is left out, the model told why."""
    if not toolsets:
        yield
        return
    async with opened(own, toolsets) as (tools, notes):
        runner.setup = dataclasses.replace(runner.setup, tools=tools)
        runner.context = (*runner.context, *notes)
        yield
