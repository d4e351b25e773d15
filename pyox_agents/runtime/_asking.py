"""What `Agent.ask` sends and reads: the conversation without its open turn, and the JSON of a
reply that fenced it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pyox_agents.state.messages import Message, ToolCall

__all__ = ["strip_fences", "without_open_calls"]


def without_open_calls(messages: Sequence[Message], pending: Sequence[ToolCall]) -> list[Message]:
    """`messages` without the tool calls of the open turn (a reply whose calls do not all have
    results yet): its text stays, a reply with nothing else goes."""
    if not pending:
        return list(messages)
    open_ids = {call.id for call in pending}
    settled: list[Message] = []
    for message in messages:
        if any(call.id in open_ids for call in message.tool_calls):
            if message.content:  # the turn's results go in together: none of them is here yet
                settled.append(dataclasses.replace(message, tool_calls=()))
            continue
        settled.append(message)
    return settled


def strip_fences(text: str) -> str:
    """The JSON inside a ```json fenced block, or the text itself."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.partition("\n")[2].rsplit("```", 1)[0]  # after the fence's line
    return stripped.strip()
