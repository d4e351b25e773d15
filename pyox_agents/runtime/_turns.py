"""Single turns of a conversation, for loops an app writes itself: think, use the tools, ask
the model a question about it, compact it (`Agent.think`, `use_tools`, `ask`, `compact`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Literal, TypeVar

import pydantic

from pyox_agents.models.base import ModelRequest
from pyox_agents.runtime._asking import strip_fences, without_open_calls
from pyox_agents.runtime._failures import request_failure
from pyox_agents.runtime._instructions import system_messages
from pyox_agents.runtime._runner import Runner
from pyox_agents.runtime._toolsets import toolsets_opened
from pyox_agents.state._validation import describe_problems
from pyox_agents.state.messages import Message, Reply
from pyox_agents.tools import Tool
from pyox_agents.toolsets import Toolset

__all__ = ["COMPACT_PROMPT", "ask", "compact", "think", "use_tools"]

T = TypeVar("T")

COMPACT_PROMPT = (
    "Summarize the work so far for yourself: the goal, what was done and found, what is left, "
    "and any names, numbers or decisions you will need. Reply with the summary only.")


async def think(runner: Runner, tools: Mapping[str, Tool], toolsets: Sequence[Toolset]) -> Reply:
    """Ask the model for the next turn of the runner's conversation and record its reply."""
    async with toolsets_opened(tools, toolsets, runner):
        reply = await runner.think()
    await runner.save_conversation()
    return reply


async def use_tools(runner: Runner, tools: Mapping[str, Tool], toolsets: Sequence[Toolset]
                    ) -> None:
    """Run the pending tool calls of the runner's conversation and record their results."""
    async with toolsets_opened(tools, toolsets, runner):
        await runner.use_tools()
    await runner.save_conversation()


async def ask(runner: Runner, question: str, returns: type[T]) -> T:
    """Ask the model `question` about the runner's conversation, without adding to it (see
    `Agent.aask`)."""
    conversation = runner.conversation
    adapter: pydantic.TypeAdapter[T] = pydantic.TypeAdapter(returns)
    prompt = question
    if returns is not str:
        schema = json.dumps(adapter.json_schema())
        prompt = (f"{question}\n\nAnswer with only a JSON value that matches this JSON "
                  f"schema, and no other text:\n{schema}")
    system = await system_messages(runner._context(), runner.setup.instructions,
                                   runner.context)
    settled = without_open_calls(conversation.messages, conversation.pending_calls)
    messages = [*system, *settled, Message.user(prompt)]
    problem = ""
    for _ in range(2):
        reply = await request(runner, "ask", messages)
        if returns is str:
            return reply.text  # type: ignore[return-value]
        try:
            return adapter.validate_json(strip_fences(reply.text))
        except pydantic.ValidationError as exc:
            problem = describe_problems(exc, root="value")
            messages += [Message.assistant(reply.text),
                         Message.user(f"That answer is not valid ({problem}). Answer again "
                                      "with only the JSON value.")]
    expected = getattr(returns, "__name__", returns)
    raise ValueError(f"the model's answer to {question!r} did not match {expected} twice: "
                     f"{problem}")


async def compact(runner: Runner) -> str:
    """Ask the model to summarize the runner's conversation, then compact it to the summary."""
    conversation = runner.conversation
    messages = [*conversation.messages, Message.user(COMPACT_PROMPT)]
    reply = await request(runner, "compact", messages)
    conversation.compact(reply.text)
    await runner.save_conversation()
    return reply.text


async def request(runner: Runner, purpose: Literal["ask", "compact"], messages: Sequence[Message]
                  ) -> Reply:
    """One model request outside the conversation's turns, recorded as `purpose`."""
    conversation = runner.conversation
    conversation._begin_request(purpose, len(messages))
    try:
        reply = await runner.complete(ModelRequest(tuple(messages)))
    except BaseException as exc:
        conversation._fail_request(purpose, request_failure(exc))
        raise
    conversation._end_request(purpose, reply)
    return reply
