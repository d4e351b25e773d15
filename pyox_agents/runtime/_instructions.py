"""What a run tells the model first: the agent's instructions (a str, or a callable of the run's
context, sync or async) and the app's context lines, as the system message of each request."""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from pyox_agents.runtime._setup import Instructions
from pyox_agents.state.messages import Message
from pyox_agents.tools import RunContext

__all__ = ["system_messages"]


async def system_messages(ctx: RunContext | None, instructions: Instructions,
                          context: Sequence[str]) -> list[Message]:
    """The system message of a model request: the instructions, then the app's `context`
    lines (none when both are empty). `ctx` is needed for instructions that are a callable.

    Raises:
        TypeError: the instructions callable returned something other than a str.
    """
    text = await _instructions_text(ctx, instructions)
    if context:
        extra = "Context from the app:\n" + "\n".join(f"- {c}" for c in context)
        return [Message.system(f"{text}\n\n{extra}" if text else extra)]
    return [Message.system(text)] if text else []


async def _instructions_text(ctx: RunContext | None, instructions: Instructions) -> str:
    if instructions is None:
        return ""
    if callable(instructions):
        assert ctx is not None, "instructions that are a callable read the run's context"
        text = instructions(ctx)
        if inspect.isawaitable(text):
            text = await text
        if not isinstance(text, str):
            raise TypeError(f"the instructions callable returned {type(text).__name__}, not str")
        return text
    return instructions
