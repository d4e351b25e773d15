"""What a `useChat` app reads besides text, against the real `ai` client (7, 6 and 5): a
tool's data parts, progress, sources, files and preliminary outputs, the message metadata,
and the shared state kept live from patches. Every chunk passes the major's
`uiMessageChunkSchema` and is folded by `readUIMessageStream` (aisdk_chat.mjs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsonpatch
import pytest

from pyox_agents import Agent, RunContext, ToolCall, tool
from pyox_agents.models import ScriptedModel
from pyox_agents.server import create_app
from pyox_agents.state.messages import Reply, Usage
from pyox_agents.stores import MemoryStore
from tests.ai_sdk.live_tools import count_up, research

Serve = Callable[[Any], str]
RunNode = Callable[..., dict[str, Any]]


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo."""
    ctx.state["todos"].append({"text": text, "done": False})
    return "added"


def parts_agent() -> Agent:
    usage = Usage(input_tokens=100, output_tokens=20, requests=1, cost=0.001)
    return Agent(ScriptedModel([
        Reply(tool_calls=(ToolCall("research", {}, id="c1"), ToolCall("count_up", {}, id="c2")),
              usage=usage),
        Reply(text="Done.", usage=usage),
    ]), tools=[research, count_up])


def assistant(out: dict[str, Any]) -> dict[str, Any]:
    assert out["chunkErrors"] == [], out["chunkErrors"]
    assert out["status"] == "ready", out["error"]
    (message,) = [m for m in out["messages"] if m["role"] == "assistant"]
    return message


@pytest.mark.parametrize("major", [7, 6, 5])
def test_tool_parts_and_metadata_reach_the_message(serve: Serve, run_node: RunNode,
                                                   major: int) -> None:
    base = serve(create_app({"a": parts_agent()}, store=MemoryStore()))
    out = run_node("aisdk_chat.mjs", f"{base}/agents/a/ai-sdk?v={major}",
                   {"major": major, "chatId": f"parts-{major}", "messages": ["look"]})
    message = assistant(out)
    kinds = [p["type"] for p in message["parts"]]
    assert {"type": "data-weather", "id": "w1", "data": {"city": "Oslo"}} in message["parts"]
    assert "data-tick" not in kinds  # transient: onData only
    assert any(e["type"] == "data-tick" for e in out["dataEvents"])
    (crawl,) = [p for p in message["parts"] if p["type"] == "data-crawl"]
    assert crawl["data"] == {"done": 3, "of": 3}  # updated in place
    (url,) = [p for p in message["parts"] if p["type"] == "source-url"]
    assert url["url"] == "https://example.com/a" and url["title"] == "Page A"
    (doc,) = [p for p in message["parts"] if p["type"] == "source-document"]
    assert doc["title"] == "Annual report" and doc["filename"] == "report.pdf"
    assert {"type": "file", "mediaType": "text/plain", "url": "data:text/plain;base64,aGk="
            } in message["parts"]
    (counter,) = [p for p in message["parts"] if p["type"] == "tool-count_up"]
    assert counter["state"] == "output-available" and counter["output"] == 3
    assert not counter.get("preliminary")
    prelim = [c["output"] for c in out["chunks"] if c.get("preliminary")]
    assert prelim == [1, 2, 3]
    meta = message["metadata"]
    assert meta["model"] == "scripted" and isinstance(meta["createdAt"], int)
    assert meta["usage"]["inputTokens"] >= 200 and meta["usage"]["outputTokens"] >= 40
    assert meta["cost"] >= 0.002


def test_a_live_state_kept_from_patches_equals_the_final_state(serve: Serve,
                                                                run_node: RunNode) -> None:
    """The `onData` helper's rule: snapshots replace, patches change; at the end it holds the
    message's one `data-state` part, the server's final state."""
    agent = Agent(ScriptedModel([[ToolCall("add_todo", {"text": f"t{i}"}) for i in range(4)],
                                 "ok"]), tools=[add_todo], state_snapshots="finish")
    base = serve(create_app({"a": agent}, store=MemoryStore()))
    out = run_node("aisdk_chat.mjs", f"{base}/agents/a/ai-sdk",
                   {"chatId": "live", "body": {"state": {"todos": []}}, "messages": ["add"]})
    message = assistant(out)
    live: Any = None
    for event in out["dataEvents"]:
        if event["type"] == "data-state":
            live = event["data"]
        elif event["type"] == "data-state-delta":
            live = jsonpatch.apply_patch(live, event["data"])
    (final,) = [p["data"] for p in message["parts"] if p["type"] == "data-state"]
    assert live == final and len(final["todos"]) == 4
    snapshots = [e for e in out["dataEvents"] if e["type"] == "data-state"]
    assert len(snapshots) == 2  # "at finish": the opening and the final state only


@tool(approval=True)
def reset(ctx: RunContext) -> str:
    """Set the list to empty (a person approves first)."""
    ctx.state["todos"] = []
    return "reset"


@pytest.mark.parametrize("major", [7, 6, 5])
def test_messages_pass_validate_ui_messages_and_continue_the_chat(
        serve: Serve, run_node: RunNode, major: int) -> None:
    """`GET .../messages` is "ready for useChat({ messages })": the client's own validator
    accepts it, and a chat started from it goes on with the same assistant ids."""
    agent = Agent(ScriptedModel([ToolCall("add_todo", {"text": "milk"}, id="c1"), "Added.",
                                 "Still here."]), tools=[add_todo])
    base = serve(create_app({"a": agent}, store=MemoryStore()))
    api = f"{base}/agents/a/ai-sdk?v={major}"
    first = run_node("aisdk_chat.mjs", api, {"major": major, "chatId": f"hist-{major}",
                                             "body": {"state": {"todos": []}},
                                             "messages": ["add milk"]})
    streamed = assistant(first)
    loaded = run_node("aisdk_messages.mjs",
                      f"{base}/agents/a/ai-sdk/hist-{major}/messages?v={major}", str(major))
    assert loaded["status"] == 200 and loaded["valid"], loaded["error"]
    (_, message) = loaded["messages"]
    assert message["id"] == streamed["id"]
    (part,) = [p for p in message["parts"] if p["type"] == "tool-add_todo"]
    assert part["state"] == "output-available" and part["output"] == "added"
    assert [p["type"] for p in message["parts"][-2:]] == ["data-state", "data-state-version"]
    assert message["parts"][-2]["data"] == {"todos": [{"text": "milk", "done": False}]}
    again = run_node("aisdk_chat.mjs", api, {"major": major, "chatId": f"hist-{major}",
                                             "initialMessages": loaded["messages"],
                                             "messages": ["anything else?"]})
    assert again["chunkErrors"] == [] and again["status"] == "ready", again["error"]
    ids = [m["id"] for m in again["messages"] if m["role"] == "assistant"]
    assert ids[0] == streamed["id"] and len(ids) == 2
    sent = again["requests"][0]["body"]["messages"][1]["parts"]  # the version it holds named
    assert [p["type"] for p in sent[-2:]] == ["data-state", "data-state-version"]


def test_messages_show_a_waiting_approval_that_the_page_can_answer(
        serve: Serve, run_node: RunNode) -> None:
    """A reloaded page sees the call waiting for a person and answers it from the history."""
    agent = Agent(ScriptedModel([ToolCall("reset", {}, id="c1"), "Cleared."]),
                  tools=[reset])
    base = serve(create_app({"a": agent}, store=MemoryStore()))
    api = f"{base}/agents/a/ai-sdk"
    first = run_node("aisdk_chat.mjs", api, {"chatId": "wait", "messages": ["clear"],
                                             "body": {"state": {"todos": [1]}}})
    loaded = run_node("aisdk_messages.mjs", f"{base}/agents/a/ai-sdk/wait/messages")
    assert loaded["valid"], loaded["error"]
    (part,) = [p for m in loaded["messages"] for p in m["parts"] if p["type"] == "tool-reset"]
    assert part["state"] == "approval-requested"
    out = run_node("aisdk_chat.mjs", api, {"chatId": "wait",
                                           "initialMessages": loaded["messages"],
                                           "messages": [{"approvals": [{"approved": True}]}]})
    assert out["chunkErrors"] == [] and out["status"] == "ready", out["error"]
    (message,) = [m for m in out["messages"] if m["role"] == "assistant"]
    assert message["id"] == assistant(first)["id"]
    assert [p["data"] for p in message["parts"] if p["type"] == "data-state"] == [{"todos": []}]
    (part,) = [p for p in message["parts"] if p["type"] == "tool-reset"]
    assert part["state"] == "output-available"
