"""A small offline example: an agent plans a trip into a shared todo list.

`python examples/todo.py` runs it in the terminal: every tool change arrives as a `StateChanged`
event with a JSON Patch delta, as a web frontend would receive it. `python examples/todo.py
serve` serves the same agent to AG-UI and AI SDK frontends at http://127.0.0.1:8000
(`POST /agents/todo/ag-ui`, `POST /agents/todo/ai-sdk`). The model is a `ScriptedModel`, so no
API key is needed; pass `model="gpt-5-mini"` (or "anthropic:...", "ollama:...") for a real one.
"""

from __future__ import annotations

import sys

import anyio
import uvicorn
from starlette.applications import Starlette

from pyox_agents import Agent, RunContext, RunFinished, StateChanged, TextDelta, tool
from pyox_agents.models import FunctionModel, Message, ScriptedModel, ToolCall, ToolSpec
from pyox_agents.models.scripted import ReplySpec
from pyox_agents.server import create_app


@tool
async def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo to the list."""
    ctx.state["todos"].append({"text": text, "done": False})
    return f"Added {text!r}"


@tool
async def complete_todo(ctx: RunContext, index: int) -> str:
    """Mark the todo at `index` as done."""
    ctx.state["todos"][index]["done"] = True
    return f"Completed todo {index}"


SCRIPT: list[ReplySpec] = [
    [ToolCall("add_todo", {"text": "Book the flight"}), ToolCall("add_todo", {"text": "Pack"})],
    ToolCall("complete_todo", {"index": 0}),
    "Your trip is planned: the flight is booked, packing is left.",
]
agent = Agent(model=ScriptedModel(SCRIPT), tools=[add_todo, complete_todo], name="todo")


async def main() -> None:
    state: dict[str, list[dict[str, object]]] = {"todos": []}
    async for event in agent.stream("Plan my trip", state=state):
        if isinstance(event, StateChanged):
            print("delta:", event.delta)
        elif isinstance(event, TextDelta):
            print(event.delta, end="", flush=True)
        elif isinstance(event, RunFinished):
            print("\nfinal state:", event.state)
    print("your dict is unchanged:", state)


def app() -> Starlette:
    """The agent served over AG-UI and the AI SDK stream protocol (each run replays the script)."""

    def replay(messages: list[Message], tools: list[ToolSpec]) -> ReplySpec:
        turns = sum(1 for m in messages if m.role == "assistant")
        return SCRIPT[turns % len(SCRIPT)]

    served = Agent(model=FunctionModel(replay), tools=[add_todo, complete_todo], name="todo")
    return create_app({"todo": served})


def serve() -> None:
    """Serve `app()` on 127.0.0.1:8000."""
    print("serving the todo agent: POST http://127.0.0.1:8000/agents/todo/ag-ui")
    uvicorn.run(app(), host="127.0.0.1", port=8000)


if __name__ == "__main__":
    if sys.argv[1:] == ["serve"]:
        serve()
    else:
        anyio.run(main)
