"""What an agent can do, as AG-UI `AgentCapabilities` (`GET /agents/{name}/ag-ui/capabilities`).

Declared: its tools (and that the client may add its own, called in parallel), shared state as
snapshots and deltas, approvals and interrupts (an approval may edit the arguments), reasoning
streamed, image input, a resumable stream (`/ag-ui/connect`), and under `custom` the live
events tools send (`CUSTOM`, activities) and the tools that predict state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ag_ui.core import AgentCapabilities, Tool

from pyox_agents.models.base import ToolSpec

__all__ = ["agent_capabilities"]


def agent_capabilities(
    name: str,
    tools: Sequence[ToolSpec],
    *,
    predictions: Mapping[str, Mapping[str, str]] | None = None,
    persistent: bool = False,
    max_steps: int | None = None,
) -> dict[str, Any]:
    """The JSON body of the capabilities of agent `name`.

    `predictions`: each tool's `predict_state` (state key -> argument); `persistent`: threads,
    runs and the shared state are kept between requests (a store); `max_steps`: the agent's
    limit on decisions per run, if any.
    """
    predicted = [{"state_key": key, "tool": tool, "tool_argument": argument}
                 for tool, mapping in (predictions or {}).items()
                 for key, argument in mapping.items()]
    capabilities = AgentCapabilities.model_validate({
        "identity": {"name": name, "type": "pyox-agents"},
        "transport": {"streaming": True, "resumable": persistent},
        "tools": {"supported": True, "parallel_calls": True, "client_provided": True,
                  "items": [Tool(name=t.name, description=t.description,
                                 parameters=dict(t.parameters)) for t in tools]},
        "state": {"snapshots": True, "deltas": True, "memory": persistent,
                  "persistent_state": persistent},
        "reasoning": {"supported": True, "streaming": True},
        "multimodal": {"input": {"image": True}},
        "human_in_the_loop": {"supported": True, "approvals": True, "interrupts": True,
                              "approve_with_edits": True},
        "execution": {"max_iterations": max_steps} if max_steps is not None else None,
        "custom": {"customEvents": True, "activity": True, "connect": persistent,
                   "predictState": predicted},
    })
    dumped: dict[str, Any] = capabilities.model_dump(mode="json", by_alias=True,
                                                     exclude_none=True)
    return dumped
