"""pyox-agents: an async agent runtime whose runs share a live JSON state with web frontends."""

from pyox_agents.agent import Agent, RunFailedError, RunResult
from pyox_agents.events import (
    ReasoningDelta,
    ReasoningEnded,
    ReasoningStarted,
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
)
from pyox_agents.state.frozen import FrozenDict, FrozenList
from pyox_agents.state.messages import Image, Message, Reply, ToolCall, Usage
from pyox_agents.state.run import AgentError
from pyox_agents.tools import RunContext, Tool, tool

__all__ = [
    "Agent",
    "AgentError",
    "FrozenDict",
    "FrozenList",
    "Image",
    "Message",
    "ReasoningDelta",
    "ReasoningEnded",
    "ReasoningStarted",
    "Reply",
    "RunContext",
    "RunFailed",
    "RunFailedError",
    "RunFinished",
    "RunResult",
    "RunStarted",
    "RuntimeEvent",
    "StateChanged",
    "StepFinished",
    "StepStarted",
    "TextDelta",
    "TextEnded",
    "TextStarted",
    "Tool",
    "ToolCall",
    "ToolCallArgsDelta",
    "ToolCallEnded",
    "ToolCallStarted",
    "ToolResult",
    "Usage",
    "tool",
]
