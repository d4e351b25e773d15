"""A small offline example: an agent plans a trip into a shared todo list.

Run it with `make demo` (or `python examples/todo.py`). The model is a `ScriptedModel`, so no API
key is needed; swap in a real model when providers exist. Every tool change arrives as a
`StateChanged` event with a JSON Patch delta, as a web frontend would receive it.
"""

from __future__ import annotations

import anyio

from pyox_agents import Agent, RunContext, RunFinished, StateChanged, TextDelta, tool
from pyox_agents.models import ScriptedModel, ToolCall


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo to the list."""
    ctx.state["todos"].append({"text": text, "done": False})
    return f"Added {text!r}"


@tool
def complete_todo(ctx: RunContext, index: int) -> str:
    """Mark the todo at `index` as done."""
    ctx.state["todos"][index]["done"] = True
    return f"Completed todo {index}"


model = ScriptedModel(
    [
        [ToolCall("add_todo", {"text": "Book the flight"}), ToolCall("add_todo", {"text": "Pack"})],
        ToolCall("complete_todo", {"index": 0}),
        "Your trip is planned: the flight is booked, packing is left.",
    ]
)
agent = Agent(model=model, tools=[add_todo, complete_todo])


async def main() -> None:
    state = {"todos": []}
    async for event in agent.stream("Plan my trip", state=state):
        if isinstance(event, StateChanged):
            print("delta:", event.delta)
        elif isinstance(event, TextDelta):
            print(event.delta, end="", flush=True)
        elif isinstance(event, RunFinished):
            print("\nfinal state:", event.state)
    print("your dict is unchanged:", state)


if __name__ == "__main__":
    anyio.run(main)
