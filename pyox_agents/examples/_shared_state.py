"""Shared state: the demo's todo list and cart, which the agent and the person both edit.

The agent changes the lists with tools (each change reaches the page as a `STATE_DELTA`); the
page (CopilotKit `useAgent`) shows `agent.state` and writes the person's edits with
`agent.setState`, which the next run starts from. It is the agent `pyox-agents demo` serves as
"demo", under its own name.
"""

from __future__ import annotations

from pyox_agents.agent import Agent
from pyox_agents.models.base import Model

__all__ = ["SHARED_STATE", "shared_state_agent"]

SHARED_STATE = "shared_state"
"""The name the shared state agent is served under."""


def shared_state_agent(model: Model | str = "demo") -> Agent:
    """The todo and cart agent of the demo (`DemoState`), served as "shared_state".

    `model` is a `Model` or a model name; "demo" is the offline `DemoModel(shop_reply)`.
    """
    # pyox_agents.demo serves these examples: importing it first would import them half-made
    from pyox_agents.demo._shop import shop_agent

    return shop_agent(model, name=SHARED_STATE)
