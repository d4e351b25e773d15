"""The AI SDK adapter against the real `ai` client (7.x, 6.x, 5.x): `AbstractChat` over
`DefaultChatTransport`, each chunk checked with the major's `uiMessageChunkSchema` and folded by
`readUIMessageStream` (see README.md, `aisdk_chat.mjs`).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx
import pytest

from pyox_agents import Agent, RunContext, ToolCall, tool
from pyox_agents.models import FunctionModel, ScriptedModel
from pyox_agents.models.base import TextChunk
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore

# Fixture signatures (see conftest.py; tests/e2e is not a package).
Serve = Callable[[Any], str]
RunNode = Callable[..., dict[str, Any]]


@tool
def inc(ctx: RunContext, n: int) -> int:
    """Add n to the counter."""
    ctx.state["count"] += n
    return int(ctx.state["count"])


@tool(approval=True)
def reset(ctx: RunContext) -> str:
    """Set the counter to 0 (a person approves first)."""
    ctx.state["count"] = 0
    return "reset"


def counting_agent() -> Agent:
    return Agent(ScriptedModel([["Counting. ", ToolCall("inc", {"n": 2})],
                                ToolCall("inc", {"n": 3}), "Done: the count is 6."]),
                 tools=[inc, reset])


def approval_agent() -> Agent:
    return Agent(ScriptedModel([["Resetting. ", ToolCall("reset", {})], "Finished."]),
                 tools=[inc, reset])


def server_state(base: str, chat_id: str) -> Any:
    thread = httpx.get(f"{base}/threads/{chat_id}", timeout=10)
    assert thread.status_code == 200, thread.text
    assert thread.json()["running"] is False
    return thread.json()["state"]


def assistants(out: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in out["messages"] if m["role"] == "assistant"]


def state_parts(message: dict[str, Any]) -> list[Any]:
    return [p["data"] for p in message["parts"] if p["type"] == "data-state"
            and p.get("id") == "state"]


def tool_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in message["parts"] if p["type"].startswith("tool-")]


def assert_clean(out: dict[str, Any]) -> None:
    """No chunk failed the schema or the client's ordering rules; every response was a stream."""
    assert out["chunkErrors"] == []
    for request in out["requests"]:
        assert request["status"] == 200, request
        assert request["protocolHeader"] == "v1"
        assert request["contentType"].startswith("text/event-stream")


def assert_state_run(out: dict[str, Any], final: Any) -> None:
    """Ready, one assistant message whose one data-state part is the server's final state, and
    onData saw every snapshot the server sent, in order."""
    assert_clean(out)
    assert out["status"] == "ready", out["error"]
    (message,) = assistants(out)
    assert state_parts(message) == [final]
    sent = [c["data"] for c in out["chunks"] if c["type"] == "data-state"]
    seen = [e["data"] for e in out["dataEvents"] if e["type"] == "data-state"]
    assert seen == sent
    assert sent[-1] == final
    assert not any(p.get("state") == "streaming" for p in message["parts"])


def test_state_run_on_ai_7(serve: Serve, run_node: RunNode) -> None:
    base = serve(create_app({"counter": counting_agent()}, store=MemoryStore()))
    out = run_node("aisdk_chat.mjs", f"{base}/agents/counter/ai-sdk",
                   {"chatId": "chat-7", "body": {"state": {"count": 1}}, "messages": ["count"]})
    final = server_state(base, "chat-7")
    assert final == {"count": 6}
    assert_state_run(out, final)
    seen = [e["data"] for e in out["dataEvents"] if e["type"] == "data-state"]
    assert seen == [{"count": 1}, {"count": 3}, {"count": 6}]  # one per step that changed it
    patches = [e for e in out["dataEvents"] if e["type"] == "data-state-delta"]
    assert [p["data"] for p in patches] == [[{"op": "replace", "path": "/count", "value": 3}],
                                            [{"op": "replace", "path": "/count", "value": 6}]]
    (message,) = assistants(out)
    assert [p["state"] for p in tool_parts(message)] == ["output-available"] * 2
    assert out["finishes"][-1]["finishReason"] == "stop"


def test_approval_yes_on_ai_7(serve: Serve, run_node: RunNode) -> None:
    base = serve(create_app({"counter": approval_agent()}, store=MemoryStore()))
    out = run_node("aisdk_chat.mjs", f"{base}/agents/counter/ai-sdk", {
        "chatId": "chat-yes", "body": {"state": {"count": 4}},
        "messages": [{"text": "reset it", "approvals": [{"approved": True}]}]})
    assert len(out["requests"]) == 2  # the question, then the continuation with the answer
    final = server_state(base, "chat-yes")
    assert final == {"count": 0}
    assert_state_run(out, final)
    (message,) = assistants(out)
    (part,) = tool_parts(message)
    assert part["state"] == "output-available" and part["output"] == "reset"
    assert part["approval"]["approved"] is True


def test_approval_no_on_ai_7(serve: Serve, run_node: RunNode) -> None:
    base = serve(create_app({"counter": approval_agent()}, store=MemoryStore()))
    out = run_node("aisdk_chat.mjs", f"{base}/agents/counter/ai-sdk", {
        "chatId": "chat-no", "body": {"state": {"count": 4}},
        "messages": [{"text": "reset it", "approvals": [{"approved": False, "reason": "no"}]}]})
    final = server_state(base, "chat-no")
    assert final == {"count": 4}
    assert_state_run(out, final)
    (message,) = assistants(out)
    (part,) = tool_parts(message)
    assert part["state"] == "output-denied"


def test_failing_model_gives_status_error(serve: Serve, run_node: RunNode) -> None:
    base = serve(create_app({"counter": Agent(ScriptedModel([]), tools=[inc])}))
    out = run_node("aisdk_chat.mjs", f"{base}/agents/counter/ai-sdk", {"messages": ["go"]})
    assert out["status"] == "error"
    assert "ScriptedModel ran out of replies" in out["error"]
    assert [c for c in out["chunkErrors"] if c["kind"] == "schema"] == []
    assert out["chunks"][-1] == {"type": "finish", "finishReason": "error"}


def test_request_refused_before_the_stream_becomes_the_chat_error(
    serve: Serve, run_node: RunNode,
) -> None:
    agent = Agent(ScriptedModel(["ok"]), tools=[inc])
    base = serve(create_app({"counter": agent}))
    out = run_node("aisdk_chat.mjs", f"{base}/agents/counter/ai-sdk", {
        "body": {"clientTools": "nope"},
        "messages": ["go"]})
    assert out["status"] == "error"
    assert out["requests"][0]["status"] == 422
    assert out["error"] == out["requests"][0]["errorBody"]
    assert "clientTools" in out["error"]


def _release_on_resume(app: Any, gate: threading.Event) -> Any:
    """Open `gate` once the resume GET's response has begun (the replay is under way)."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].endswith("/stream"):
            return await app(scope, receive, send)

        async def sending(message: Any) -> None:
            await send(message)
            if message["type"] == "http.response.body" and message.get("body"):
                gate.set()

        return await app(scope, receive, sending)

    return wrapped


def test_resume_after_a_reload_replays_into_one_identical_message(
    serve: Serve, run_node: RunNode,
) -> None:
    gate = threading.Event()

    @tool
    def slow(ctx: RunContext) -> str:
        """Wait until the page has reloaded, then count."""
        gate.wait(20)
        ctx.state["count"] += 10
        return "slow done"

    agent = Agent(ScriptedModel([["Working. ", ToolCall("inc", {"n": 1})],
                                 ToolCall("slow", {}), "All done."]), tools=[inc, slow])
    app = create_app({"counter": agent}, store=MemoryStore())
    base = serve(_release_on_resume(app, gate))
    out = run_node("aisdk_chat.mjs", f"{base}/agents/counter/ai-sdk", {
        "chatId": "chat-reload", "body": {"state": {"count": 0}}, "messages": ["work"],
        "stopAfterChunks": 8, "resume": True})
    resumed = out["resume"]
    assert gate.is_set()
    assert resumed["chunkErrors"] == []
    assert resumed["status"] == "ready", resumed["error"]
    assert [r["method"] for r in resumed["requests"]] == ["GET"]
    (before,) = assistants(out)  # the message the page had when it was closed
    (after,) = assistants(resumed)
    assert after["id"] == before["id"]
    assert resumed["chunks"][: len(out["chunks"])] == out["chunks"]  # a replay from the start
    def keys(parts: list[dict[str, Any]]) -> list[Any]:
        return [(p["type"], p.get("toolCallId")) for p in parts]

    assert keys(after["parts"])[: len(before["parts"])] == keys(before["parts"])  # same parts,
    assert [p["type"] for p in after["parts"]].count("data-state") == 1  # state replaced in place
    final = server_state(base, "chat-reload")
    assert final == {"count": 11}
    assert state_parts(after) == [final]
    assert [p["text"] for p in after["parts"] if p["type"] == "text"] == ["Working. ",
                                                                         "All done."]
    assert [p["state"] for p in tool_parts(after)] == ["output-available"] * 2


def test_state_run_on_ai_6_with_approval(serve: Serve, run_node: RunNode) -> None:
    base = serve(create_app({"counter": approval_agent()}, store=MemoryStore()))
    out = run_node("aisdk_chat.mjs", f"{base}/agents/counter/ai-sdk?v=6", {
        "major": 6, "chatId": "chat-6", "body": {"state": {"count": 2}},
        "messages": [{"text": "reset it", "approvals": [{"approved": True}]}]})
    assert out["version"].startswith("6.")
    final = server_state(base, "chat-6")
    assert final == {"count": 0}
    assert_state_run(out, final)
    assert not any(c["type"] in ("tool-approval-response", "reset-step") or
                   c.get("finishReason") == "interrupted" for c in out["chunks"])


def test_state_run_on_ai_5(serve: Serve, run_node: RunNode) -> None:
    base = serve(create_app({"counter": counting_agent()}, store=MemoryStore()))
    out = run_node("aisdk_chat.mjs", f"{base}/agents/counter/ai-sdk?v=5", {
        "major": 5, "chatId": "chat-5", "body": {"state": {"count": 1}}, "messages": ["count"]})
    assert out["version"].startswith("5.")
    final = server_state(base, "chat-5")
    assert_state_run(out, final)
    assert final == {"count": 6}


def test_client_tool_output_continues_the_same_message_on_ai_7(
    serve: Serve, run_node: RunNode,
) -> None:
    seen: list[str] = []

    def model(messages: list[Any], tools: list[Any]) -> Any:
        if messages[-1].role == "tool":
            seen.append(messages[-1].content)
            return "You picked red."
        return ToolCall("pick_color", {})

    agent = Agent(FunctionModel(model), tools=[inc])
    base = serve(create_app({"counter": agent}, store=MemoryStore()))
    declared = [{"name": "pick_color", "description": "Ask the user for a color"}]
    out = run_node("aisdk_chat.mjs", f"{base}/agents/counter/ai-sdk", {
        "chatId": "chat-tool", "body": {"state": {"count": 0}, "clientTools": declared},
        "messages": [{"text": "pick", "toolOutputs": [{"output": "red"}]}]})
    assert seen == ["red"]
    assert len(out["requests"]) == 2
    assert_state_run(out, server_state(base, "chat-tool"))
    (message,) = assistants(out)
    assert [p["state"] for p in tool_parts(message)] == ["output-available"]
    assert message["parts"][-1] == {"type": "text", "text": "You picked red.", "state": "done"}


def test_client_tool_run_in_on_tool_call_continues_the_run_on_ai_7(
    serve: Serve, run_node: RunNode,
) -> None:
    """A tool the page runs itself: declared in the `clientTools` body field, run in useChat's
    `onToolCall` with `addToolOutput`, and `sendAutomaticallyWhen` continues the run with it."""
    seen: list[str] = []

    def model(messages: list[Any], tools: list[Any]) -> Any:
        assert "get_location" in [t.name for t in tools]
        if messages[-1].role == "tool":
            seen.append(messages[-1].content)
            return "You are in Oslo."
        return ToolCall("get_location", {})

    base = serve(create_app({"counter": Agent(FunctionModel(model), tools=[inc])},
                            store=MemoryStore()))
    declared = [{"name": "get_location", "description": "Where the person is",
                 "inputSchema": {"type": "object", "properties": {}}}]
    out = run_node("aisdk_chat.mjs", f"{base}/agents/counter/ai-sdk", {
        "chatId": "chat-on-tool-call", "body": {"clientTools": declared},
        "onToolCall": {"get_location": "Oslo"}, "messages": ["where am I?"]})
    assert_clean(out)
    assert seen == ["Oslo"]
    assert len(out["requests"]) == 2
    (message,) = assistants(out)
    assert [(p["type"], p["state"], p["output"]) for p in tool_parts(message)] == [
        ("tool-get_location", "output-available", "Oslo")]
    assert message["parts"][-1]["text"] == "You are in Oslo."


HOSTILE_TOKENS = ["He", "llo ", '"quoted" ', "back\\slash ", "line\nbreak ", "tab\t\x7f ",
                  "\ud83d", "\ude00", " lone\udfff ", "emoji \U0001f600 ", "nul\x00 ",
                  "</script><script>", "x" * 700, " end."]
"""A reply's tokens as a model may stream them: JSON's special characters, a surrogate pair
split over two tokens, a lone surrogate, NUL, a long one (as the AG-UI suite's)."""


class _PacedTokens:
    """Streams `HOSTILE_TOKENS` a few milliseconds apart, so each is written while the response
    waits for it (the server's lane for a token of the run's own reply)."""

    name = "paced"

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        for token in HOSTILE_TOKENS:
            await anyio.sleep(0.003)
            yield TextChunk(token)


@pytest.mark.parametrize("major", [7, 5])
def test_hostile_tokens_streamed_one_by_one_reach_use_chat_as_the_run_keeps_them(
        serve: Serve, run_node: RunNode, major: int) -> None:
    """Rule: every token arrives once, in order, as the run keeps it (each lone surrogate half
    as U+FFFD), through the per-token path of a paced stream, and the client folds them into
    the one text part of the message."""
    from pyox_agents.runtime._replies import valid_text

    base = serve(create_app({"paced": Agent(_PacedTokens())}, store=MemoryStore()))
    out = run_node("aisdk_chat.mjs", f"{base}/agents/paced/ai-sdk?v={major}", {
        "major": major, "chatId": f"chat-hostile-{major}", "messages": ["hi"]})
    assert_clean(out)
    assert out["status"] == "ready", out["error"]
    deltas = [c["delta"] for c in out["chunks"] if c["type"] == "text-delta"]
    assert deltas == [valid_text(token) for token in HOSTILE_TOKENS]
    (message,) = assistants(out)
    texts = [p["text"] for p in message["parts"] if p["type"] == "text"]
    assert texts == ["".join(deltas)]
