"""The docs' agents work for a page that sends no state.

A client that sends no shared state (a plain `useChat` app, a fresh page) gives the run the
agent's defaults: `{}`, or its `state_type`'s defaults. Every agent a documentation block
builds is served here on a real HTTP server, asked over AG-UI and the AI SDK with no `state`,
and made to call the block's own tools as the block's scripted replies do (the offline demo
model calls them itself): no tool may fail on the state it finds, so no "KeyError" reaches the
model or the page.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from pyox_agents import Agent
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.server import create_app

from .markdown_examples import Block, chain, python_blocks
from .test_examples import (  # noqa: F401  (fixtures)
    _NamedModels,
    _write_files_before,
    fresh_modules,
    named_models,
)

DEMO_PROMPT = "add milk and eggs"
"""What the demo model's agents are asked: an add tool called twice at once, on the defaults."""


_FAILED = ("Error", "unexpected", "changed at")
"""Words of a tool result that failed: an exception (KeyError, IndexError, TypeError), or a
change refused because a parallel call made the same key first (`setdefault` on `{}`)."""


def _state_blocks() -> list[Block]:
    return [b for b in python_blocks() if b.not_run is None and "ctx.state" in b.code]


def _scripted_replies(block: Block) -> list[ToolCall | list[ToolCall]]:
    """The tool-calling replies of the scripts of `block` and the blocks it continues, in
    order; a list is one reply's parallel calls."""
    replies: list[ToolCall | list[ToolCall]] = []
    for step in chain(block):
        if step.replies is None:
            continue
        script = eval(step.replies, {"ToolCall": ToolCall})
        for one_script in script.values() if isinstance(script, dict) else [script]:
            for reply in one_script:
                calls = [c for c in (reply if isinstance(reply, list) else [reply])
                         if isinstance(c, ToolCall)]
                if calls:
                    replies.append(calls if isinstance(reply, list) else calls[0])
    return replies


def _doc_agents(namespace: dict[str, Any], block_ids: set[str]) -> Iterator[tuple[str, Agent]]:
    """The agents the blocks built that have tools of their own (defined in a block)."""
    seen: set[int] = set()
    for name, value in namespace.items():
        if not isinstance(value, Agent) or id(value) in seen:
            continue
        seen.add(id(value))
        own = [tool for tool in value.tools.values()
               if tool.function.__code__.co_filename in block_ids]
        if own:
            yield name, value


def _served(agent: Agent, replies: list[ToolCall | list[ToolCall]]) -> Agent | None:
    """The agent to serve: the doc's tools and state type, replying with the doc's tool calls
    to them (the agent itself when it runs on the demo model or a planner).

    None when no scripted call is for the agent's tools (nothing to check).
    """
    if agent.model == "demo" or agent.planner is not None:
        return agent  # deterministic: it calls the tools itself, run after run
    mine: list[ToolCall | list[ToolCall]] = []
    for reply in replies:
        calls = [c for c in (reply if isinstance(reply, list) else [reply])
                 if c.name in agent.tools]
        if calls:
            mine.append(calls if isinstance(reply, list) else calls[0])
    if not mine:
        return None
    return Agent(ScriptedModel([*mine, "Done."]), tools=list(agent.tools.values()),
                 state_type=agent.state_type, name=agent.name,
                 instructions=agent.instructions)


def _events(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    return [json.loads(line[6:]) for line in response.text.splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"]


def _ag_ui_without_state(client: httpx.Client, prompt: str) -> list[str]:
    """AG-UI: what the tools answered; the run must finish."""
    body = {"threadId": "ag-ui-thread", "runId": "r1", "tools": [], "context": [],
            "forwardedProps": {},
            "messages": [{"id": "u1", "role": "user", "content": prompt}]}  # no "state"
    events = _events(client.post("/agents/doc/ag-ui", json=body))
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    return [str(e["content"]) for e in events if e["type"] == "TOOL_CALL_RESULT"]


def _ai_sdk_without_state(client: httpx.Client, prompt: str) -> list[str]:
    """AI SDK: what the tools answered, errors included; the stream must finish."""
    body = {"id": "ai-sdk-chat", "trigger": "submit-message",
            "messages": [{"id": "u1", "role": "user",
                          "parts": [{"type": "text", "text": prompt}]}]}  # no "state"
    events = _events(client.post("/agents/doc/ai-sdk", json=body))
    assert events[-1]["type"] == "finish", events[-1]
    assert not [e for e in events if e["type"] == "error"], events
    return [json.dumps(e.get("output", e.get("errorText"))) for e in events
            if e["type"] in ("tool-output-available", "tool-output-error")]


@pytest.mark.parametrize("block", _state_blocks(), ids=lambda b: b.id)
def test_doc_agents_work_when_the_client_sends_no_state(
    block: Block,
    named_models: _NamedModels,  # noqa: F811
    fresh_modules: None,  # noqa: F811
    live_server: Callable[[Any], str],
) -> None:
    """An agent of the docs, served, runs its tools on the state a client that sends none gets:
    none of them fails on a missing key (the model would tell the person "KeyError")."""
    if any(step.needs for step in chain(block)):
        pytest.skip("needs a service; its agents are the same as other blocks'")
    _write_files_before(block)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for step in chain(block):
        if step.replies is not None:
            named_models.replies = step.replies
        exec(compile(step.code, step.id, "exec", dont_inherit=True), namespace)
    replies = _scripted_replies(block)
    checked = 0
    for _, agent in _doc_agents(namespace, {step.id for step in chain(block)}):
        served = _served(agent, replies)
        if served is None:
            continue
        prompt = DEMO_PROMPT if served is agent else "Go"
        for ask in (_ag_ui_without_state, _ai_sdk_without_state):
            fresh = served if served is agent else _served(agent, replies)
            assert fresh is not None
            url = live_server(create_app({"doc": fresh}))
            with httpx.Client(base_url=url, timeout=30) as client:
                results = ask(client, prompt)
            failed = [r for r in results if any(word in r for word in _FAILED)]
            assert not failed, f"{block.id}: a tool failed on a state the client never sent"
            checked += 1
    if checked == 0:
        pytest.skip("no agent of this block calls a tool of its own in its script")
