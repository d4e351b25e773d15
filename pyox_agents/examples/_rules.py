"""What the example agents' offline rules share: the person's last words, the tool results the
model is answering, and a "demo" model made from a rules function.

Each example has its own rules function (like the demo's `shop_reply`), layered on `decide`: it
knows the phrases its page suggests and hands everything else to `decide`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pyox_agents.models.base import Model, ToolSpec
from pyox_agents.models.demo import DemoModel, Rules
from pyox_agents.state.messages import Message

__all__ = ["Rules", "answered", "clean", "last_user", "model_for", "offered", "system_text"]


def last_user(messages: Sequence[Message]) -> str:
    """The text of the person's last message ("" before they said anything)."""
    return next((m.content for m in reversed(messages) if m.role == "user"), "")


def clean(text: str) -> str:
    """`text` lower-cased, with "please"/"can you" in front and punctuation at the end gone."""
    text = " ".join(text.lower().replace("\u2019", "'").split())
    text = re.sub(r"^(?:(?:hi|hey|ok|okay|now|so)[,!]?\s+)*(?:please\s+|can you\s+|could you\s+)?",
                  "", text)
    return re.sub(r"(?:[\s,]*please)?[\s.!?]*$", "", text)


def answered(messages: Sequence[Message]) -> list[Message]:
    """The tool results at the end of `messages`: what the model answers now (else [])."""
    results: list[Message] = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        results.insert(0, message)
    return results


def offered(tools: Sequence[ToolSpec], name: str) -> bool:
    """Whether the tool `name` is among `tools` (a page's frontend tool may be missing)."""
    return any(spec.name == name for spec in tools)


def system_text(messages: Sequence[Message]) -> str:
    """All the system messages' text: the instructions and the context lines the app sent."""
    return "\n".join(m.content for m in messages if m.role == "system")


def model_for(model: Model | str, rules: Rules) -> Model | str:
    """`model` itself, or for "demo" the offline `DemoModel(rules)`."""
    return DemoModel(rules) if model == "demo" else model
