"""A whole `Reply` streamed as a provider streams one: the chunks of a model that decides at once.

The scripted test doubles, the offline demo model and the planners each know their reply before
they stream it; they all stream it through `stream_reply`, so the loop sees the same chunk shapes
(word-sized text deltas, a tool call's arguments in a few pieces, usage last) as from an LLM.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence

from pyox_agents.models.base import ModelChunk, ModelRequest, TextChunk, ToolCallChunk, UsageChunk
from pyox_agents.state.messages import Message, Reply, Usage

__all__ = ["stream_reply"]

_WORD = re.compile(r"\s*\S+\s*|\s+")


def _estimate_tokens(messages: Sequence[Message]) -> int:
    return sum(len(m.content) // 4 + 1 for m in messages)


async def stream_reply(reply: Reply, request: ModelRequest) -> AsyncIterator[ModelChunk]:
    """Stream `reply` as a provider would: word deltas, argument pieces, usage last."""
    pieces = 0
    for word in _WORD.findall(reply.text):
        pieces += 1
        yield TextChunk(word)
    for index, call in enumerate(reply.tool_calls):
        text = call.raw_arguments
        if text is None:
            text = json.dumps(dict(call.arguments), separators=(",", ":"))
        yield ToolCallChunk(index=index, name=call.name, id=call.id)
        third = max(1, len(text) // 3)
        for start in range(0, len(text), third):
            pieces += 1
            yield ToolCallChunk(index=index, arguments=text[start : start + third])
    usage = Usage(input_tokens=_estimate_tokens(request.messages), output_tokens=pieces, requests=1)
    yield UsageChunk(usage + reply.usage)
