"""Models: the `Model` protocol, the providers and the stand-ins for an LLM.

`OpenAIModel` (OpenAI and OpenAI-compatible servers) and `AnthropicModel` need their SDKs
(`pip install "pyox-agents[openai]"`, `"pyox-agents[anthropic]"`); they are imported when first
used, so the SDKs stay optional. `DemoModel` is the offline demo model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyox_agents.models._inputs import ANY_INPUT, InputKinds, InputNotAccepted
from pyox_agents.models._provider import ProviderError
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
from pyox_agents.models.demo import DemoModel
from pyox_agents.models.names import MODEL_FORMS, resolve_model
from pyox_agents.models.prices import PRICES, register_price
from pyox_agents.models.scripted import FunctionModel, ScriptedModel, ScriptExhausted
from pyox_agents.state.messages import Message, Reply, ToolCall, Usage

if TYPE_CHECKING:
    from pyox_agents.models.anthropic import AnthropicModel
    from pyox_agents.models.openai import OpenAIModel

__all__ = [
    "ANY_INPUT",
    "MODEL_FORMS",
    "PRICES",
    "AnthropicModel",
    "DemoModel",
    "FunctionModel",
    "InputKinds",
    "InputNotAccepted",
    "Message",
    "Model",
    "ModelChunk",
    "ModelError",
    "ModelRequest",
    "OpenAIModel",
    "ProviderError",
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
    "register_price",
    "resolve_model",
]


def __getattr__(name: str) -> Any:
    """`OpenAIModel` and `AnthropicModel`, imported on first use (their SDKs are optional)."""
    if name == "OpenAIModel":
        from pyox_agents.models.openai import OpenAIModel

        return OpenAIModel
    if name == "AnthropicModel":
        from pyox_agents.models.anthropic import AnthropicModel

        return AnthropicModel
    raise AttributeError(f"module 'pyox_agents.models' has no attribute {name!r}")
