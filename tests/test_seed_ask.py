"""`agent.ask` and the rule that every tool call needs a result before the model is asked
again (seed 000)."""

from __future__ import annotations

from typing import Any

from pyox_agents import Agent, Message, RunContext, State, tool
from pyox_agents.models import FunctionModel, ToolCall


def _unanswered(messages: list[Message]) -> list[str]:
    """Ids of tool calls in `messages` that no tool message answers."""
    answered = {m.call_id for m in messages if m.role == "tool"}
    return [c.id for m in messages for c in m.tool_calls if c.id not in answered]


def test_ask_never_sends_tool_calls_without_results() -> None:
    """Seed 000: "Every tool call needs a result before the model is asked again." While calls
    are pending, `ask` asks without them: the model reads the reply's text and the question."""
    seen: list[list[Message]] = []

    def model(messages: list[Message], tools: list[Any]) -> Any:
        seen.append(messages)
        if len(seen) == 1:
            return ["Let me look.", ToolCall("look", {})]
        return "an answer"

    state = State(messages=[Message.user("Find the bug")])
    agent = Agent(FunctionModel(model))
    agent.think(state)
    assert state.pending_calls
    assert agent.ask(state, "What are you doing?") == "an answer"
    asked = seen[-1]
    assert _unanswered(asked) == []
    assert [m.content for m in asked] == ["Find the bug", "Let me look.", "What are you doing?"]
    assert state.pending_calls  # the conversation is as it was: the call still needs its result


def test_a_tool_may_ask_about_its_own_conversation() -> None:
    """Seed 000 l.89: the calls of the open turn have no result while a tool runs, so an `ask`
    from inside one sends the conversation without them."""
    seen: list[list[Message]] = []

    def model(messages: list[Message], tools: list[Any]) -> Any:
        seen.append(messages)
        if len(seen) == 1:
            return ToolCall("summarize", {})
        return "summary" if len(seen) == 2 else "done"

    side = Agent(FunctionModel(model))

    @tool
    async def summarize(ctx: RunContext) -> str:
        """Summarize the conversation."""
        assert ctx.conversation is not None
        return await side.aask(ctx.conversation, "Summarize")

    agent = Agent(FunctionModel(model), tools=[summarize])
    result = agent.run("Go")
    assert result.answer == "done"
    assert _unanswered(seen[1]) == []
    assert seen[1][-1].content == "Summarize"
