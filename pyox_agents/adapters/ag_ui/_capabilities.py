"""What an agent can do, as AG-UI `AgentCapabilities` (`GET /agents/{name}/ag-ui/capabilities`).

Declared: its tools (and that the client may add its own, called in parallel), shared state as
snapshots and deltas, approvals and interrupts (an approval may edit the arguments), reasoning
streamed, the kinds of input its model takes, a resumable stream (`/ag-ui/connect`), and
under `custom` the live events tools send (`CUSTOM`, activities) and the tools that predict
state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ag_ui.core import AgentCapabilities, Tool

from pyox_agents.models.base import ToolSpec

__all__ = ["agent_capabilities"]


def agent_capabilities(name: str, tools: Sequence[ToolSpec], *,
                       predictions: Mapping[str, Mapping[str, str]] | None = None,
                       persistent: bool = False, max_steps: int | None = None,
                       accepts: Callable[[str, str], bool] | None = None) -> dict[str, Any]:
    """The JSON body of the capabilities of agent `name`.

    `predictions`: each tool's `predict_state` (state key -> argument); `persistent`: threads,
    runs and the shared state are kept between requests (a store); `max_steps`: the agent's
    limit on decisions per run, if any; `accepts(media_type, source)`: whether the agent's
    model takes an input of that type (None: it takes every kind).
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
        "multimodal": {"input": _inputs(accepts)},
        "human_in_the_loop": {"supported": True, "approvals": True, "interrupts": True,
                              "approve_with_edits": True},
        "execution": {"max_iterations": max_steps} if max_steps is not None else None,
        "custom": {"customEvents": True, "activity": True, "connect": persistent,
                   "predictState": predicted},
    })
    return capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)


_KINDS = {"image": "image/png", "audio": "audio/wav", "video": "video/mp4",
          "pdf": "application/pdf", "file": "text/plain"}
"""An AG-UI input kind, and a media type that stands for it."""


def _inputs(accepts: Callable[[str, str], bool] | None) -> dict[str, bool]:
    return {kind: accepts is None or accepts(media_type, "data") or accepts(media_type, "url")
            for kind, media_type in _KINDS.items()}
