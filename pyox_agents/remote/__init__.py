"""Remote AG-UI agents as subagents: `RemoteAgent(url).as_tool(...)`.

    from pyox_agents import Agent, RemoteAgent

    research = RemoteAgent("http://127.0.0.1:8001/agents/research/ag-ui", name="research")
    agent = Agent(model, tools=[research.as_tool(state="write")])

Any AG-UI endpoint serves: ours (`create_app`), pydantic-ai's `AGUIAdapter`, LangGraph's, ...
Each call of the tool POSTs a `RunAgentInput` (the task as a user message; the parent's shared
state with `state="read"` or `"write"`) and reads the event stream: the remote run's text, tool
calls and results appear in the parent's stream as the subagent's events, and with `"write"` its
`STATE_SNAPSHOT` / `STATE_DELTA` events are applied to the parent's state when it finishes.
Needs httpx: `pip install "pyox-agents[remote]"` (imported when a call is made).
"""

from __future__ import annotations

from pyox_agents.remote._agent import RemoteAgent
from pyox_agents.remote._events import RemoteAgentError

__all__ = ["RemoteAgent", "RemoteAgentError"]
