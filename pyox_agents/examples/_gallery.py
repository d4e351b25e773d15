"""The gallery: the seven feature agents by name, ready for `create_app`."""

from __future__ import annotations

from pyox_agents.agent import Agent
from pyox_agents.examples._chat import AGENTIC_CHAT, agentic_chat_agent
from pyox_agents.examples._document import PREDICTIVE_STATE_UPDATES, predictive_state_updates_agent
from pyox_agents.examples._haiku import TOOL_BASED_GENERATIVE_UI, tool_based_generative_ui_agent
from pyox_agents.examples._hitl import HUMAN_IN_THE_LOOP, human_in_the_loop_agent
from pyox_agents.examples._shared_state import SHARED_STATE, shared_state_agent
from pyox_agents.examples._steps import AGENTIC_GENERATIVE_UI, agentic_generative_ui_agent
from pyox_agents.examples._weather import BACKEND_TOOL_RENDERING, backend_tool_rendering_agent
from pyox_agents.models.base import Model

__all__ = ["FEATURES", "gallery_agents"]

FEATURES: dict[str, str] = {
    "agentic-chat": AGENTIC_CHAT,
    "backend-tool-rendering": BACKEND_TOOL_RENDERING,
    "human-in-the-loop": HUMAN_IN_THE_LOOP,
    "agentic-generative-ui": AGENTIC_GENERATIVE_UI,
    "tool-based-generative-ui": TOOL_BASED_GENERATIVE_UI,
    "shared-state": SHARED_STATE,
    "predictive-state-updates": PREDICTIVE_STATE_UPDATES,
}
"""Each feature's name (as `ag-ui-validate --features` spells it) -> the name of its agent."""


def gallery_agents(model: Model | str = "demo") -> dict[str, Agent]:
    """The seven feature agents by name (`FEATURES`' values), for `create_app`; every one uses
    `model` (a `Model`, a model name, or "demo" for the offline model)."""
    return {
        AGENTIC_CHAT: agentic_chat_agent(model),
        BACKEND_TOOL_RENDERING: backend_tool_rendering_agent(model),
        HUMAN_IN_THE_LOOP: human_in_the_loop_agent(model),
        AGENTIC_GENERATIVE_UI: agentic_generative_ui_agent(model),
        TOOL_BASED_GENERATIVE_UI: tool_based_generative_ui_agent(model),
        SHARED_STATE: shared_state_agent(model),
        PREDICTIVE_STATE_UPDATES: predictive_state_updates_agent(model),
    }
