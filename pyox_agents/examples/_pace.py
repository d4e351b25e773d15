"""`Paced`: a model that streams its tool calls' arguments no faster than a person can watch.

The offline demo model decides its whole reply at once and streams it in a blink; a real model
takes seconds to write a long argument. The predictive state page shows a document growing while
its tool's argument streams, so its offline model waits a little before each piece.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio

from pyox_agents.models.base import Model, ModelChunk, ModelRequest, ToolCallChunk

__all__ = ["Paced"]


class Paced:
    """`model`, its tool calls' arguments cut in pieces of at most `size` characters, with
    `pause` seconds before each."""

    def __init__(self, model: Model, pause: float, size: int = 40) -> None:
        if size < 1:
            raise ValueError(f"size is {size}; pieces need at least 1 character")
        self._model = model
        self._pause = pause
        self._size = size

    @property
    def name(self) -> str:
        """The wrapped model's name."""
        return self._model.name

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """The wrapped model's chunks, argument pieces paced."""
        async for chunk in self._model.stream(request):
            if not isinstance(chunk, ToolCallChunk) or not chunk.arguments:
                yield chunk
                continue
            text = chunk.arguments
            for start in range(0, len(text), self._size):
                await anyio.sleep(self._pause)
                yield ToolCallChunk(index=chunk.index, arguments=text[start:start + self._size])
