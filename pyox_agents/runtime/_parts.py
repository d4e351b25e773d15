"""What a run's task, a resume and the paused runs read of their `Agent` (runtime/ sits below
agent.py and does not import it): the agent's tools, store and paused-run bookkeeping."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import pydantic

from pyox_agents.runtime._paused import PausedRuns
from pyox_agents.runtime._runner import Setup
from pyox_agents.stores.base import Store
from pyox_agents.tools import Tool
from pyox_agents.toolsets import Toolset

__all__ = ["AgentParts"]


class AgentParts(Protocol):
    """The parts of an `Agent` its runs are made of."""

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The agent's own tools, by name."""

    @property
    def toolsets(self) -> Sequence[Toolset]:
        """Its toolsets, whose tools are listed when a run starts."""

    @property
    def name(self) -> str | None:
        """The agent's name, for `as_tool`."""

    @property
    def store(self) -> Store | None:
        """Where its runs are saved, if anywhere."""

    @property
    def state_type(self) -> type[pydantic.BaseModel] | None:
        """The pydantic model the shared state validates against, if any."""

    @property
    def _paused(self) -> PausedRuns:
        """Store-less agents' paused runs."""

    def _setup(self, store: Store | None = None) -> Setup:
        """A run's setup from the agent."""

    async def _tools_for(self, name: str | None) -> Mapping[str, Tool]:
        """The agent's tools, with tool `name` as a run would list it from the toolsets."""
