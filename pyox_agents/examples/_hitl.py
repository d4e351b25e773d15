"""Human in the loop, both ways CopilotKit offers.

- A question the page asks the person: the page's frontend tool `select_steps`
  (`useHumanInTheLoop`) shows the steps the agent proposes; the person ticks the ones to do and
  confirms; their answer is the tool's result, and the run goes on with it.
- An approval the server asks for: `book_flight` is an `approval=True` tool, so the run stops
  with an AG-UI interrupt before it runs (`useInterrupt` shows it); the person's answer resumes
  the same run, which books the flight or tells the model it was refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pyox_agents.agent import Agent
from pyox_agents.examples._rules import answered, clean, last_user, model_for, offered
from pyox_agents.models.base import Model, ToolSpec
from pyox_agents.models.demo import decide
from pyox_agents.state.messages import Message, Reply, ToolCall
from pyox_agents.tools import ToolError, tool

__all__ = ["HUMAN_IN_THE_LOOP", "book_flight", "hitl_reply", "human_in_the_loop_agent"]

HUMAN_IN_THE_LOOP = "human_in_the_loop"
"""The name the human in the loop agent is served under."""

INSTRUCTIONS = """\
You help people plan and book. To plan a task, propose its steps with the page's select_steps
tool (each {"description", "status": "enabled"}); the person picks the steps to do, and you go
on with only those. To book a flight, call book_flight: the person approves or refuses it on the
page; if refused, say so. Answer in one or two short sentences.
"""

_PLAN = re.compile(r"^(?:plan|organi[sz]e|prepare)\s+(?P<task>.+)$")
_BOOK = re.compile(r"^book\s+(?:me\s+)?(?:a\s+)?flight\s+(?:to\s+)?(?P<place>.+)$")


def _steps(task: str) -> list[str]:
    if "mars" in task:
        return ["build the rocket", "train the crew", "load the supplies", "launch",
                "land on Mars"]
    return [f"decide what {task} needs", "make a list of what to get", "get everything",
            "set a date", "do it"]


@tool(approval=True)
def book_flight(destination: str) -> str:
    """Book a flight to a destination. A person approves or refuses the booking first.

    Args:
        destination: the city or place to fly to.
    """
    place = " ".join(destination.split()).title()
    if not place:
        raise ToolError("destination is empty; give a city, such as 'Paris'")
    booking = f"PX{sum(place.encode()) % 900 + 100}"
    return f"booked flight {booking} to {place}"


def _chosen(content: str) -> tuple[bool, list[str]]:
    """Whether the person went on, and the steps they kept, from `select_steps`' result."""
    try:
        answer: Any = json.loads(content)
    except json.JSONDecodeError:
        return False, []
    if not isinstance(answer, dict) or not answer.get("accepted", True):
        return False, []
    steps = answer.get("steps", [])
    return True, [str(step.get("description")) for step in steps
                  if isinstance(step, dict) and step.get("status") == "enabled"]


def _after(result: Message) -> Reply:
    if result.name == "book_flight":
        if result.is_error:
            return Reply(text=f"The flight was not booked ({result.content}).")
        return Reply(text=f"Done: {result.content}.")
    if result.name == "select_steps":
        went_on, steps = _chosen(result.content)
        if not went_on or not steps:
            return Reply(text="All right, I won't go ahead with the plan.")
        return Reply(text=f"Going ahead with {len(steps)} steps: {', '.join(steps)}.")
    return Reply(text="Done.")


def hitl_reply(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply:
    """The offline model's reply on the human in the loop page: "plan a trip to Mars" asks the
    person to pick steps (`select_steps`), "book a flight to Paris" calls `book_flight` (which
    waits for approval); the rest is `decide`'s."""
    results = answered(messages)
    if results:
        return _after(results[-1])
    text = clean(last_user(messages))
    booking = _BOOK.match(text)
    if booking is not None:
        return Reply(tool_calls=(ToolCall("book_flight", {"destination": booking["place"]}),))
    plan = _PLAN.match(text)
    if plan is not None:
        if not offered(tools, "select_steps"):
            return Reply(text="This page gave me no select_steps tool to ask you with.")
        steps = [{"description": step, "status": "enabled"} for step in _steps(plan["task"])]
        return Reply(tool_calls=(ToolCall("select_steps", {"steps": steps}),))
    return decide(messages, tools)


def human_in_the_loop_agent(model: Model | str = "demo") -> Agent:
    """The human in the loop agent: the page's `select_steps` and its own `book_flight`.

    `model` is a `Model` or a model name; "demo" is the offline `DemoModel(hitl_reply)`.
    """
    return Agent(model=model_for(model, hitl_reply), tools=[book_flight],
                 instructions=INSTRUCTIONS, name=HUMAN_IN_THE_LOOP)
