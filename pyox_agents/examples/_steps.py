"""Agentic generative UI: a task of several steps whose progress the page shows live.

`run_task` works through the steps one after the other and shows each change with
`ctx.progress("task_progress", {"task", "steps": [{"description", "status"}]})`: AG-UI clients
get an `ACTIVITY_SNAPSHOT`, then an `ACTIVITY_DELTA` per change (CopilotKit draws them with the
page's activity renderer, `useRenderActivityMessage`). The progress is a live view, not shared
state: the run's state is not touched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import anyio

from pyox_agents.agent import Agent
from pyox_agents.examples._rules import answered, clean, last_user, model_for
from pyox_agents.models.base import Model, ToolSpec
from pyox_agents.models.demo import decide
from pyox_agents.state.messages import Message, Reply, ToolCall
from pyox_agents.tools import RunContext, Tool, ToolError, tool

__all__ = ["AGENTIC_GENERATIVE_UI", "PROGRESS_KIND", "agentic_generative_ui_agent",
           "steps_reply", "task_tool"]

AGENTIC_GENERATIVE_UI = "agentic_generative_ui"
"""The name the agentic generative UI agent is served under."""
PROGRESS_KIND = "task_progress"
"""The kind of `run_task`'s live view: the AG-UI `activityType` a page renders."""

INSTRUCTIONS = """\
You carry out tasks for people. For a task, think of 4 to 6 short steps and call run_task once
with the task and its steps; the page shows the steps as they are done. Then say in one sentence
that the task is done.
"""

_RECIPES: dict[str, tuple[str, ...]] = {
    "pancakes": ("mix flour, eggs and milk", "rest the batter", "heat the pan",
                 "cook each pancake", "serve with syrup"),
    "sandwich": ("slice the bread", "spread the butter", "add the filling",
                 "close and cut the sandwich"),
    "tea": ("boil the water", "warm the pot", "add the tea", "let it brew", "pour the tea"),
}
_TASK = re.compile(r"^(?:make|cook|bake|brew|prepare|build|do)\s+(?:me\s+|us\s+)?(?P<task>.+)$")


def _steps_for(task: str) -> list[str]:
    for word, steps in _RECIPES.items():
        if word in task:
            return list(steps)
    return [f"work out what {task} needs", "gather everything", f"make {task}",
            "check the result"]


def task_tool(pause: float = 0.5) -> Tool:
    """The `run_task` tool, which spends `pause` seconds on each step (0 in tests)."""

    @tool
    async def run_task(ctx: RunContext, task: str, steps: list[str]) -> str:
        """Carry out a task step by step; the page shows each step as it is done.

        Args:
            task: what is to be done, such as "pancakes".
            steps: the steps, in order, each a short phrase.
        """
        if not steps:
            raise ToolError("steps is empty; give the task's steps, in order")
        view: dict[str, Any] = {"task": task, "steps": [
            {"description": step, "status": "pending"} for step in steps]}
        ctx.progress(PROGRESS_KIND, view)
        for step in view["steps"]:
            step["status"] = "in progress"
            ctx.progress(PROGRESS_KIND, view)
            await anyio.sleep(pause)
            step["status"] = "done"
            ctx.progress(PROGRESS_KIND, view)
        return f"{task}: all {len(steps)} steps done"

    return run_task


def steps_reply(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply:
    """The offline model's reply on the agentic generative UI page: "make pancakes" calls
    `run_task` with the steps of a built-in recipe; the rest is `decide`'s."""
    results = answered(messages)
    if results:
        last = results[-1]
        if last.is_error:
            return Reply(text=f"The task stopped: {last.content}")
        return Reply(text=f"Done! {last.content[:1].upper()}{last.content[1:]}.")
    task = _TASK.match(clean(last_user(messages)))
    if task is not None:
        name = task["task"]
        return Reply(tool_calls=(ToolCall("run_task", {"task": name,
                                                       "steps": _steps_for(name)}),))
    return decide(messages, tools)


def agentic_generative_ui_agent(model: Model | str = "demo", *, pause: float = 0.5) -> Agent:
    """The agent whose `run_task` shows its steps live; `pause` is the seconds per step.

    `model` is a `Model` or a model name; "demo" is the offline `DemoModel(steps_reply)`.
    """
    return Agent(model=model_for(model, steps_reply), tools=[task_tool(pause)],
                 instructions=INSTRUCTIONS, name=AGENTIC_GENERATIVE_UI)
