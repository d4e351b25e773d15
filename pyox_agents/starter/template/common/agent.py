"""The agent of __NAME__: a todo list it keeps together with the page in web/.

Serve it (the page runs on http://localhost:5173, so it may call the agent from there):

    pyox-agents serve agent:agent --store sqlite:threads.db --cors http://localhost:5173

The model is offline by default: "demo" follows rules, not an LLM. It understands "add milk and
eggs", "done with milk" and "clear the list". For a real model, set PYOX_MODEL, for example
PYOX_MODEL=openai:gpt-5-mini with OPENAI_API_KEY set and `pip install "pyox-agents[openai]"`.
"""

from __future__ import annotations

import os

from pydantic import BaseModel, Field

from pyox_agents import Agent, RunContext, tool


class Todo(BaseModel):
    text: str
    done: bool = False


class Board(BaseModel):
    """The state the agent and the page share. Its defaults are what a new thread starts with."""

    todos: list[Todo] = Field(default_factory=list)


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo to the list."""
    ctx.state["todos"].append({"text": text, "done": False})
    return f"Added {text!r}"


@tool
def complete_todo(ctx: RunContext, text: str) -> str:
    """Mark the todo with this text as done."""
    for todo in ctx.state["todos"]:
        if todo["text"].lower() == text.lower():
            todo["done"] = True
            return f"Done: {todo['text']!r}"
    return f"There is no todo {text!r} on the list"


@tool(approval=True)
def clear_todos(ctx: RunContext) -> str:
    """Remove every todo from the list. A person approves it first."""
    count = len(ctx.state["todos"])
    ctx.state["todos"] = []
    return f"Removed {count} todos"


agent = Agent(
    model=os.environ.get("PYOX_MODEL", "demo"),
    tools=[add_todo, complete_todo, clear_todos],
    state_type=Board,
    name="todo",
    instructions="You keep the user's todo list. The user sees it, and edits it too.",
)
