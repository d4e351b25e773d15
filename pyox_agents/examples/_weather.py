"""Backend tool rendering: a tool that runs on the server, whose call and result the page draws.

`get_weather` returns JSON (city, temperature, conditions, humidity, wind, feels like); the page
(CopilotKit `useRenderTool({name: "get_weather"})`) parses the result and draws a weather card,
and shows the call while it runs. The weather is made up from the city's name, the same every
time: the example needs no network and no key.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from pyox_agents.agent import Agent
from pyox_agents.examples._rules import answered, clean, last_user, model_for
from pyox_agents.models.base import Model, ToolSpec
from pyox_agents.models.demo import decide
from pyox_agents.state.messages import Message, Reply, ToolCall
from pyox_agents.tools import ToolError, tool

__all__ = ["BACKEND_TOOL_RENDERING", "backend_tool_rendering_agent", "get_weather",
           "weather_reply"]

BACKEND_TOOL_RENDERING = "backend_tool_rendering"
"""The name the backend tool rendering agent is served under."""

INSTRUCTIONS = """\
You tell people the weather. Call get_weather for the city they ask about (one call per city),
then say it in one short sentence; the page shows the details in a card.
"""

_CONDITIONS = ("sunny", "partly cloudy", "cloudy", "light rain", "windy", "foggy", "clear")


@tool
def get_weather(city: str) -> dict[str, Any]:
    """Get the current weather in a city: temperature and feels-like in °C, conditions,
    humidity in %, wind in km/h.

    Args:
        city: the city's name, such as "Paris".
    """
    name = " ".join(city.split()).title()
    if not name:
        raise ToolError("city is empty; give a city's name, such as 'Paris'")
    seed = hashlib.sha256(name.lower().encode()).digest()
    temperature = seed[0] % 30 - 2
    wind = 3 + seed[2] % 40
    return {"city": name, "temperature": temperature, "feels_like": temperature - wind // 12,
            "conditions": _CONDITIONS[seed[1] % len(_CONDITIONS)],
            "humidity": 30 + seed[3] % 60, "wind": wind}


_ASK = re.compile(r"\bweather\b.*?\b(?:in|for|at)\s+(?P<city>[\w\s'.-]+?)(?:\s+(?:today|now))?$")


def weather_reply(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply:
    """The offline model's reply on the weather page: "what's the weather in Paris?" calls
    `get_weather`, and its result is said in a sentence; the rest is `decide`'s."""
    results = answered(messages)
    if results:
        sentences = []
        for result in results:
            if result.is_error:
                sentences.append(f"I couldn't get the weather: {result.content}")
                continue
            weather = json.loads(result.content)
            sentences.append(f"It's {weather['temperature']}°C and {weather['conditions']} in "
                             f"{weather['city']}.")
        return Reply(text=" ".join(sentences))
    asked = _ASK.search(clean(last_user(messages)))
    if asked is not None:
        return Reply(tool_calls=(ToolCall("get_weather", {"city": asked["city"].strip()}),))
    if "weather" in last_user(messages).lower():
        return Reply(text='Which city? Ask, for example, "what\'s the weather in Paris?"')
    return decide(messages, tools)


def backend_tool_rendering_agent(model: Model | str = "demo") -> Agent:
    """The weather agent: one backend tool, `get_weather`, whose JSON result the page draws.

    `model` is a `Model` or a model name; "demo" is the offline `DemoModel(weather_reply)`.
    """
    return Agent(model=model_for(model, weather_reply), tools=[get_weather],
                 instructions=INSTRUCTIONS, name=BACKEND_TOOL_RENDERING)
