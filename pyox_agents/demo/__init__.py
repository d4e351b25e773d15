"""The demo: a shop and todo agent and the feature gallery's agents on an offline model, which
`pyox-agents demo` serves."""

from pyox_agents.demo._agents import demo_agents
from pyox_agents.demo._shop import AGENT_NAME, DemoState, demo_tools, shop_agent, shop_reply

__all__ = ["AGENT_NAME", "DemoState", "demo_agents", "demo_tools", "shop_agent", "shop_reply"]
