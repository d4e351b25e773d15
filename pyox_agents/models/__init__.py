"""Models: the `Model` protocol and the stand-ins for an LLM."""

from pyox_agents.models.base import (
    Model,
    ModelChunk,
    ModelError,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    ToolSpec,
    UsageChunk,
)
from pyox_agents.models.scripted import FunctionModel, ScriptedModel, ScriptExhausted
from pyox_agents.state.messages import Message, Reply, ToolCall, Usage

__all__ = [
    "FunctionModel",
    "Message",
    "Model",
    "ModelChunk",
    "ModelError",
    "ModelRequest",
    "ReasoningChunk",
    "Reply",
    "ScriptExhausted",
    "ScriptedModel",
    "TextChunk",
    "ToolCall",
    "ToolCallChunk",
    "ToolSpec",
    "Usage",
    "UsageChunk",
]
