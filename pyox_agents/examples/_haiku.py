"""Tool-based generative UI: the agent calls a tool the page draws.

`generate_haiku` is the page's frontend tool (CopilotKit `useFrontendTool` with a `render`): the
agent fills its arguments (three Japanese lines, their English translation), the page draws the
haiku as a card while the arguments stream, and its handler's answer is the tool's result.
The agent has no tools of its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pyox_agents.agent import Agent
from pyox_agents.examples._rules import answered, clean, last_user, model_for, offered
from pyox_agents.models.base import Model, ToolSpec
from pyox_agents.models.demo import decide
from pyox_agents.state.messages import Message, Reply, ToolCall

__all__ = ["TOOL_BASED_GENERATIVE_UI", "haiku_reply", "tool_based_generative_ui_agent"]

TOOL_BASED_GENERATIVE_UI = "tool_based_generative_ui"
"""The name the tool-based generative UI agent is served under."""

INSTRUCTIONS = """\
You write haiku. When asked for one, call the page's generate_haiku tool with three lines in
Japanese and their English translation (three lines); the page shows it. Then say in one short
sentence what the haiku is about.
"""

_HAIKU: dict[str, tuple[tuple[str, str, str], tuple[str, str, str]]] = {
    "autumn": (("秋の風", "木の葉が舞う", "静かな道"),
               ("autumn wind", "the leaves dance down", "a quiet path")),
    "sea": (("青い海", "波がささやく", "遠い夢"),
            ("the blue sea", "the waves whisper", "a distant dream")),
    "coffee": (("朝の珈琲", "湯気がのぼる", "目を覚ます"),
               ("morning coffee", "the steam rises", "I wake up")),
}
_DEFAULT = (("古池や", "蛙飛び込む", "水の音"),
            ("an old pond", "a frog jumps in", "the sound of water"))
_ASK = re.compile(r"\bhaiku\b(?:\s+(?:about|on|for)\s+(?:the\s+|a\s+|an\s+)?(?P<topic>.+))?$")


def haiku_reply(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply:
    """The offline model's reply on the haiku page: "write a haiku about autumn" calls the
    page's `generate_haiku` with a built-in haiku; the rest is `decide`'s."""
    results = answered(messages)
    if results:
        if results[-1].is_error:
            return Reply(text=f"The page could not show the haiku: {results[-1].content}")
        return Reply(text="Here is your haiku.")
    asked = _ASK.search(clean(last_user(messages)))
    if asked is not None:
        if not offered(tools, "generate_haiku"):
            return Reply(text="This page gave me no generate_haiku tool to show a haiku with.")
        topic = (asked["topic"] or "").strip()
        japanese, english = next((lines for word, lines in _HAIKU.items() if word in topic),
                                 _DEFAULT)
        return Reply(tool_calls=(ToolCall("generate_haiku", {
            "topic": topic or "a pond", "japanese": list(japanese), "english": list(english)}),))
    return decide(messages, tools)


def tool_based_generative_ui_agent(model: Model | str = "demo") -> Agent:
    """The haiku agent: it calls the page's `generate_haiku`, which the page draws.

    `model` is a `Model` or a model name; "demo" is the offline `DemoModel(haiku_reply)`.
    """
    return Agent(model=model_for(model, haiku_reply), instructions=INSTRUCTIONS,
                 name=TOOL_BASED_GENERATIVE_UI)
