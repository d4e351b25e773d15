"""Agentic chat: a chat whose agent uses the page's own tools and knows what the page tells it.

The page (CopilotKit `useFrontendTool`) offers `change_background`, which runs in the browser:
the agent calls it, the run ends with the call, and the page's answer comes back as the tool's
result in the next request. What the page says about itself (`useAgentContext`) reaches the
model as "Context from the app" lines, and what it forwards (`<CopilotKit properties>`, AG-UI
`forwardedProps`) is read by the instructions as `ctx.forwarded_props`. The agent has no tools
of its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pyox_agents.agent import Agent
from pyox_agents.examples._rules import answered, clean, last_user, model_for, offered, system_text
from pyox_agents.models.base import Model, ToolSpec
from pyox_agents.models.demo import decide
from pyox_agents.state.messages import Message, Reply, ToolCall
from pyox_agents.tools import RunContext

__all__ = ["AGENTIC_CHAT", "agentic_chat_agent", "chat_reply"]

AGENTIC_CHAT = "agentic_chat"
"""The name the agentic chat agent is served under."""

INSTRUCTIONS = """\
You are a friendly assistant on a web page. The page may give you tools that run in the
person's browser, such as change_background (any CSS background: a colour name, a hex code or a
gradient); use them when asked. Use what the page tells you about the person and the page.
Answer in one or two short sentences.
"""

_BACKGROUND = re.compile(
    r"^(?:change|set|make|turn|paint)\s+(?:the\s+|my\s+)?(?:page\s+|page's\s+)?background"
    r"(?:\s+colou?r)?\s+(?:to\s+|into\s+)?(?P<colour>.+)$")
_NAME = re.compile(r"\b(?:what(?:'s| is) my name|who am i|do you know my name)\b")
_FORWARDED = re.compile(r"\b(?:forward(?:ed)?|properties|which page)\b")


def _instructions(ctx: RunContext) -> str:
    forwarded = ctx.forwarded_props
    if not forwarded:
        return INSTRUCTIONS
    return f"{INSTRUCTIONS}\nThe page forwarded: {json.dumps(forwarded, sort_keys=True)}"


def _context_value(messages: Sequence[Message], word: str) -> str | None:
    """The value of the first "- description: value" context line whose description has `word`."""
    for line in system_text(messages).splitlines():
        description, _, value = line.removeprefix("- ").partition(": ")
        if value and word in description.lower():
            return value.strip().strip('"')
    return None


def _after_tool(result: Message) -> Reply:
    if result.name != "change_background":
        return Reply(text="Done.")
    if result.is_error:
        return Reply(text=f"I couldn't change the background: {result.content}")
    return Reply(text=f"Done: {result.content}" if result.content else "Done.")


def chat_reply(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply:
    """The offline model's reply on the agentic chat page.

    "change the background to teal" calls the page's `change_background`; "what is my name?"
    answers from the page's context; "what did the page forward?" from its forwarded
    properties; the rest is `decide`'s.
    """
    results = answered(messages)
    if results:
        return _after_tool(results[-1])
    text = clean(last_user(messages))
    colour = _BACKGROUND.match(text)
    if colour is not None:
        if not offered(tools, "change_background"):
            return Reply(text="This page gave me no change_background tool, so I can't.")
        original = last_user(messages)
        start = original.lower().find(colour["colour"])
        value = original[start:start + len(colour["colour"])] if start >= 0 else colour["colour"]
        return Reply(tool_calls=(ToolCall("change_background", {"background": value}),))
    if _NAME.search(text):
        name = _context_value(messages, "name")
        return Reply(text=f"Your name is {name}." if name else
                     "The page didn't tell me your name.")
    if _FORWARDED.search(text):
        forwarded = next((line.removeprefix("The page forwarded: ")
                          for line in system_text(messages).splitlines()
                          if line.startswith("The page forwarded: ")), None)
        return Reply(text=f"The page forwarded {forwarded}." if forwarded else
                     "The page forwarded nothing.")
    if not tools:
        return Reply(text="Hello! Ask me to change the background, or what your name is.")
    return decide(messages, tools)


def agentic_chat_agent(model: Model | str = "demo") -> Agent:
    """The agentic chat agent: no tools of its own, the page's tools and context.

    `model` is a `Model` or a model name ("openai:gpt-5-mini", ...); "demo" is the offline
    `DemoModel(chat_reply)`.
    """
    return Agent(model=model_for(model, chat_reply), instructions=_instructions,
                 name=AGENTIC_CHAT)
