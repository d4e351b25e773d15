"""`pyox-agents new NAME [--ui copilotkit|ai-sdk]`: write a project to start from
(`pyox_agents.starter`) and say how to run it."""

from __future__ import annotations

import argparse

from pyox_agents.starter import UIS, create_project

__all__ = ["add_new_command", "run_new"]


def add_new_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `new` command's parser."""
    new = commands.add_parser(
        "new", help="write a new project: an agent and its page (CopilotKit or useChat)",
        description="Write a new project into the folder NAME: a Python agent with a typed "
                    "shared state (a todo list) and a Vite + React page that follows it live, "
                    "keeps its thread across reloads, and shows tool calls and approvals.")
    new.add_argument("path", metavar="NAME", help="the project's folder, new or empty; its "
                     "name is the project's")
    new.add_argument("--ui", choices=UIS, default="copilotkit",
                     help="the page: copilotkit (CopilotKit v2 over AG-UI, the default) or "
                          "ai-sdk (the AI SDK's useChat)")


def run_new(args: argparse.Namespace) -> None:
    """Write the project (a mistake raises `StarterError`, the command's error)."""
    files = create_project(args.path, args.ui)
    print(f"pyox-agents: wrote {len(files)} files into {args.path} (a {args.ui} page)")
    print(f"""
Next, in {args.path}: the agent (offline, no key needed), with this pyox-agents
  pyox-agents serve agent:agent --store sqlite:threads.db --cors http://localhost:5173
and in another terminal, the page:
  cd web && npm install && npm run dev   # http://localhost:5173
Then type: add milk and eggs. README.md says more.""", flush=True)

