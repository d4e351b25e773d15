"""`Paced`: the offline model's tool arguments, in small pieces a person can watch arrive."""

from __future__ import annotations

import json

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyox_agents.examples import Paced
from pyox_agents.models import ScriptedModel, ToolCall, ToolCallChunk
from pyox_agents.models.base import ModelRequest
from pyox_agents.state.messages import Message


async def _pieces(text: str, size: int) -> list[str]:
    model = Paced(ScriptedModel([ToolCall("write", {"text": text})]), 0, size)
    request = ModelRequest(messages=(Message.user("go"),))
    return [chunk.arguments async for chunk in model.stream(request)
            if isinstance(chunk, ToolCallChunk) and chunk.arguments]


@given(text=st.text(max_size=300), size=st.integers(1, 50))
def test_paced_arguments_come_in_small_pieces_that_add_up(text: str, size: int) -> None:
    pieces = anyio.run(_pieces, text, size)
    assert all(len(piece) <= size for piece in pieces)
    assert json.loads("".join(pieces)) == {"text": text}


def test_paced_refuses_pieces_of_no_characters() -> None:
    with pytest.raises(ValueError, match="size is 0; pieces need at least 1 character"):
        Paced(ScriptedModel([]), 0.1, 0)
