"""`demo_agents`: every agent `pyox-agents demo` serves, by name."""

from __future__ import annotations

from pyox_agents.agent import Agent
from pyox_agents.demo._shop import AGENT_NAME, shop_agent
from pyox_agents.examples import gallery_agents
from pyox_agents.models.base import Model
from pyox_agents.models.demo import DemoModel

__all__ = ["demo_agents"]


def demo_agents(model: Model | str = "demo", *, pace: float = 0.0) -> dict[str, Agent]:
    """The demo's agents by name, for `create_app`: the todo and cart agent as "demo", and the
    seven feature examples of the gallery (`pyox_agents.examples.gallery_agents`).

    `model` is a `Model` or a model name: "demo" (offline, the default), "openai:<model>",
    "ollama:<model>" and the other names `Agent(model=...)` takes; every agent uses it.
    `pace`: about how many seconds the offline model takes to answer (`DemoModel.pace`; 0, the
    default, at once), so that the page behaves as with a real model: a person can edit while
    the agent works.
    """
    agents = {AGENT_NAME: shop_agent(model), **gallery_agents(model)}
    for agent in agents.values():
        if isinstance(agent.model, DemoModel):
            agent.model.pace = pace
    return agents
