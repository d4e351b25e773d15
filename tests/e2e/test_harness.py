"""Proves the e2e harness itself with tiny hand-written Starlette apps (NOT pyox_agents.server).

Each app streams a fixed, valid (or deliberately broken) sequence; the real JS clients must report
exactly what the protocol says. If these fail, fix the harness before blaming the server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

# Fixture signatures (see conftest.py; tests/e2e is not a package, so they are restated here).
Serve = Callable[[Any], str]
RunNode = Callable[..., dict[str, Any]]
Chunk = dict[str, Any] | str
AI_SDK_HEADERS = {
    "cache-control": "no-cache",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}


async def _sse(items: Iterable[Chunk], delay: float = 0.0) -> AsyncIterator[str]:
    for item in items:
        data = item if isinstance(item, str) else json.dumps(item, separators=(",", ":"))
        yield f"data: {data}\n\n"
        if delay:
            await asyncio.sleep(delay)


# --------------------------------------------------------------------------------------------
# AG-UI
# --------------------------------------------------------------------------------------------


def agui_app(script: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> Starlette:
    """POST /agent: answers each RunAgentInput with the events ``script(body)`` returns."""
    received: list[dict[str, Any]] = []

    async def agent(request: Request) -> Response:
        body = await request.json()
        received.append(body)
        return StreamingResponse(_sse(script(body)), media_type="text/event-stream")

    app = Starlette(routes=[Route("/agent", agent, methods=["POST"])])
    app.state.received = received
    return app


def _run_ids(body: dict[str, Any]) -> dict[str, str]:
    return {"threadId": body["threadId"], "runId": body["runId"]}


def fixed_agui_run(body: dict[str, Any]) -> list[dict[str, Any]]:
    ids = _run_ids(body)
    return [
        {"type": "RUN_STARTED", **ids, "protocolVersion": "1.0"},
        {"type": "STATE_SNAPSHOT", "snapshot": {"count": 1, "items": []}},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hello"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": " world"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "replace", "path": "/count", "value": 2},
                {"op": "add", "path": "/items/-", "value": "a"},
            ],
        },
        {"type": "RUN_FINISHED", **ids, "outcome": {"type": "success"}},
    ]


def test_agui_valid_run(serve: Serve, run_node: RunNode) -> None:
    app = agui_app(fixed_agui_run)
    url = serve(app) + "/agent"
    out = run_node(
        "agui_run.mjs",
        url,
        {"threadId": "t1", "initialState": {"seed": True}, "message": "hi"},
    )

    assert out["resolved"] is True, out["error"]
    assert out["error"] is None
    assert out["warnings"] == []
    assert [e["type"] for e in out["events"]] == [
        e["type"] for e in fixed_agui_run({"threadId": "", "runId": ""})
    ]
    # snapshot {count:1, items:[]} then the delta: replace /count, append to /items
    assert out["state"] == {"count": 2, "items": ["a"]}
    assert [(m["role"], m["content"]) for m in out["messages"]] == [
        ("user", "hi"),
        ("assistant", "Hello world"),
    ]
    assert out["outcome"]["type"] == "success"
    assert out["pendingInterrupts"] == []
    assert len(out["runs"]) == 1
    # what the client sent: the RunAgentInput keys the server must accept
    sent = app.state.received[0]
    assert out["request"] == sent
    assert sent["threadId"] == "t1"
    assert sent["protocolVersion"] == "1.0"
    assert sent["state"] == {"seed": True}
    assert (sent["tools"], sent["context"], sent["forwardedProps"]) == ([], [], {})
    assert "resume" not in sent
    assert out["response"] == {"status": 200, "contentType": "text/event-stream; charset=utf-8"}


def interrupt_then_tool_script(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Run 1 interrupts; run 2 (resume) calls a frontend tool; run 3 sees the tool's result."""
    ids = _run_ids(body)
    start = {"type": "RUN_STARTED", **ids, "protocolVersion": "1.0"}
    last = body["messages"][-1]
    if body.get("resume"):
        entry = body["resume"][0]
        return [
            start,
            {"type": "STATE_SNAPSHOT", "snapshot": {"approved": entry["payload"]["ok"]}},
            {"type": "TOOL_CALL_START", "toolCallId": "tc2", "toolCallName": "pick_color"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "tc2", "delta": "{}"},
            {"type": "TOOL_CALL_END", "toolCallId": "tc2"},
            {"type": "RUN_FINISHED", **ids},
        ]
    if last["role"] == "tool":
        return [
            start,
            {
                "type": "STATE_DELTA",
                "delta": [{"op": "add", "path": "/color", "value": last["content"]}],
            },
            {"type": "RUN_FINISHED", **ids, "outcome": {"type": "success"}},
        ]
    interrupt = {"id": "int-1", "reason": "approval", "message": "Proceed?"}
    return [
        start,
        {
            "type": "RUN_FINISHED",
            **ids,
            "outcome": {"type": "interrupt", "interrupts": [interrupt]},
        },
    ]


def test_agui_runs_in_sequence_with_resume_and_tool_result(serve: Serve, run_node: RunNode) -> None:
    app = agui_app(interrupt_then_tool_script)
    url = serve(app) + "/agent"
    out = run_node(
        "agui_run.mjs",
        url,
        {
            "runs": [
                {"message": "go"},
                {"resume": {"status": "resolved", "payload": {"ok": True}}},
                {"toolResults": [{"content": "blue"}]},
            ]
        },
    )
    first, second, third = out["runs"]
    assert all(r["resolved"] and r["warnings"] == [] for r in out["runs"]), out["runs"]

    assert first["outcome"]["type"] == "interrupt"
    assert [i["id"] for i in first["pendingInterrupts"]] == ["int-1"]
    # the resume template was expanded against agent.pendingInterrupts
    assert second["request"]["resume"] == [
        {"interruptId": "int-1", "status": "resolved", "payload": {"ok": True}}
    ]
    assert second["pendingInterrupts"] == []
    assert second["outcome"] == {"type": "success", "pendingToolCallIds": ["tc2"]}
    # the ToolMessage answered the pending frontend tool call
    tool_msg = third["request"]["messages"][-1]
    assert (tool_msg["role"], tool_msg["toolCallId"], tool_msg["content"]) == (
        "tool",
        "tc2",
        "blue",
    )
    assert third["state"] == {"approved": True, "color": "blue"}
    assert out["state"] == third["state"]
    # same thread across runs, a new runId each time
    assert len({b["threadId"] for b in app.state.received}) == 1
    assert len({b["runId"] for b in app.state.received}) == 3


def test_agui_reports_client_rejection(serve: Serve, run_node: RunNode) -> None:
    def broken(body: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"type": "RUN_STARTED", **_run_ids(body), "protocolVersion": "1.0"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "nope", "delta": "x"},
        ]

    out = run_node("agui_run.mjs", serve(agui_app(broken)) + "/agent", {"message": "hi"})
    assert out["resolved"] is False
    assert "No active text message found with ID 'nope'" in out["error"]
    assert any("Agent execution failed" in w for w in out["warnings"])


# --------------------------------------------------------------------------------------------
# AI SDK UI message stream
# --------------------------------------------------------------------------------------------


def ai_sdk_app(script: Callable[[dict[str, Any]], list[Chunk]], delay: float = 0.0) -> Starlette:
    """POST /api/chat streams ``script(body)`` (+ ``[DONE]``); GET /api/chat/{id}/stream replays
    the chat's last stream, or 204 when there was none."""
    received: list[dict[str, Any]] = []
    streams: dict[str, list[Chunk]] = {}

    def stream(chunks: list[Chunk]) -> StreamingResponse:
        return StreamingResponse(
            _sse([*chunks, "[DONE]"], delay), media_type="text/event-stream", headers=AI_SDK_HEADERS
        )

    async def chat(request: Request) -> Response:
        body = await request.json()
        received.append(body)
        streams[body["id"]] = chunks = script(body)
        return stream(chunks)

    async def resume(request: Request) -> Response:
        chunks = streams.get(request.path_params["chat_id"])
        return Response(status_code=204) if chunks is None else stream(chunks)

    app = Starlette(
        routes=[
            Route("/api/chat", chat, methods=["POST"]),
            Route("/api/chat/{chat_id}/stream", resume, methods=["GET"]),
        ]
    )
    app.state.received = received
    return app


def fixed_ai_sdk_stream(body: dict[str, Any]) -> list[Chunk]:
    count = body.get("state", {}).get("count", 0)
    return [
        {"type": "start", "messageId": "msg-1"},
        {"type": "start-step"},
        {"type": "text-start", "id": "t1"},
        {"type": "text-delta", "id": "t1", "delta": "Hello"},
        {"type": "text-end", "id": "t1"},
        {"type": "data-state", "id": "state", "data": {"count": count + 1}},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


MAJORS = [7, 6, 5]


@pytest.mark.parametrize("major", MAJORS)
def test_ai_sdk_valid_stream(serve: Serve, run_node: RunNode, major: int) -> None:
    app = ai_sdk_app(fixed_ai_sdk_stream)
    api = serve(app) + "/api/chat"
    out = run_node(
        "aisdk_chat.mjs",
        api,
        {"major": major, "chatId": "c1", "body": {"state": {"count": 1}}, "messages": ["hi"]},
    )

    assert out["version"].startswith(f"{major}.")
    assert out["status"] == "ready", out["error"]
    assert out["error"] is None
    assert out["chunkErrors"] == []
    assert [c["type"] for c in out["chunks"]] == [c["type"] for c in fixed_ai_sdk_stream({})]
    user, assistant = out["messages"]
    assert user["role"] == "user"
    assert user["parts"] == [{"type": "text", "text": "hi"}]
    assert assistant["role"] == "assistant"
    assert assistant["id"] == "msg-1"
    assert assistant["parts"] == [
        {"type": "step-start"},
        {"type": "text", "text": "Hello", "state": "done"},
        {"type": "data-state", "id": "state", "data": {"count": 2}},
    ]
    assert out["dataEvents"] == [{"type": "data-state", "id": "state", "data": {"count": 2}}]
    assert out["finishes"] == [
        {
            "messageId": "msg-1",
            "isError": False,
            "isAbort": False,
            "isDisconnect": False,
            "finishReason": "stop",
        }
    ]
    # the request DefaultChatTransport sent: body extras + id, messages, trigger
    (req,) = out["requests"]
    assert req["body"] == app.state.received[0]
    assert req["body"]["id"] == "c1"
    assert req["body"]["trigger"] == "submit-message"
    assert req["body"]["state"] == {"count": 1}
    assert (req["status"], req["protocolHeader"]) == (200, "v1")
    assert req["chunkCount"] == len(fixed_ai_sdk_stream({}))
    assert out["resume"] is None


@pytest.mark.parametrize("major", MAJORS)
def test_ai_sdk_resume_replays_into_one_message(
    serve: Serve, run_node: RunNode, major: int
) -> None:
    api = serve(ai_sdk_app(fixed_ai_sdk_stream)) + "/api/chat"
    out = run_node(
        "aisdk_chat.mjs",
        api,
        {"major": major, "chatId": "c2", "messages": ["hi"], "resume": True},
    )
    resumed = out["resume"]
    assert resumed["status"] == "ready", resumed["error"]
    assert resumed["chunkErrors"] == []
    assert [(r["method"], r["url"], r["status"]) for r in resumed["requests"]] == [
        ("GET", api + "/c2/stream", 200)
    ]
    # the fresh chat held only the user message; the replay rebuilt the same assistant message
    assert resumed["messages"] == out["messages"]


def test_ai_sdk_resume_with_nothing_active_is_204(serve: Serve, run_node: RunNode) -> None:
    api = serve(ai_sdk_app(fixed_ai_sdk_stream)) + "/api/chat"
    out = run_node("aisdk_chat.mjs", api, {"chatId": "never-ran", "resume": True})
    assert out["messages"] == []
    resumed = out["resume"]
    assert resumed["status"] == "ready"
    assert resumed["messages"] == []
    assert [r["status"] for r in resumed["requests"]] == [204]


def approval_stream(body: dict[str, Any]) -> list[Chunk]:
    """First request: a tool call needing approval. Continuation: its output or its denial."""
    last = body["messages"][-1]
    if last["role"] != "assistant":
        return [
            {"type": "start", "messageId": "msg-a"},
            {"type": "start-step"},
            {
                "type": "tool-input-available",
                "toolCallId": "call-1",
                "toolName": "delete",
                "input": {"path": "/x"},
            },
            {"type": "tool-approval-request", "approvalId": "ap-1", "toolCallId": "call-1"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "tool-calls"},
        ]
    part = next(p for p in last["parts"] if p.get("toolCallId") == "call-1")
    approved = part["approval"]["approved"]
    result: Chunk = (
        {"type": "tool-output-available", "toolCallId": "call-1", "output": {"deleted": True}}
        if approved
        else {"type": "tool-output-denied", "toolCallId": "call-1"}
    )
    # continuation: `start` WITHOUT messageId keeps writing into the same assistant message
    return [
        {"type": "start"},
        {"type": "start-step"},
        result,
        {"type": "data-state", "id": "state", "data": {"approved": approved}},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


@pytest.mark.parametrize("major", [7, 6])
@pytest.mark.parametrize("approved", [True, False])
@pytest.mark.parametrize("continue_with", ["auto", "sendMessage"])
def test_ai_sdk_tool_approval(
    serve: Serve, run_node: RunNode, major: int, approved: bool, continue_with: str
) -> None:
    app = ai_sdk_app(approval_stream)
    api = serve(app) + "/api/chat"
    out = run_node(
        "aisdk_chat.mjs",
        api,
        {
            "major": major,
            "continueWith": continue_with,
            "messages": [{"text": "delete /x", "approvals": [{"approved": approved}]}],
        },
    )
    assert out["status"] == "ready", out["error"]
    assert out["chunkErrors"] == []
    assert len(out["requests"]) == 2
    cont = out["requests"][1]["body"]
    # the continuation: same trigger, messageId = the assistant message, approval inside its part
    assert cont["trigger"] == "submit-message"
    assert cont["messageId"] == "msg-a"
    sent_part = next(p for p in cont["messages"][-1]["parts"] if p.get("toolCallId") == "call-1")
    assert sent_part["state"] == "approval-responded"
    assert sent_part["approval"] == {"id": "ap-1", "approved": approved}

    assistants = [m for m in out["messages"] if m["role"] == "assistant"]
    assert [m["id"] for m in assistants] == ["msg-a"]
    tool = next(p for p in assistants[0]["parts"] if p["type"] == "tool-delete")
    assert tool["state"] == ("output-available" if approved else "output-denied")
    data = [p for p in assistants[0]["parts"] if p["type"] == "data-state"]
    assert data == [{"type": "data-state", "id": "state", "data": {"approved": approved}}]


def client_tool_stream(body: dict[str, Any]) -> list[Chunk]:
    """First request: a client-side tool call. Continuation: text using the tool's output."""
    last = body["messages"][-1]
    if last["role"] != "assistant":
        return [
            {"type": "start", "messageId": "msg-t"},
            {"type": "start-step"},
            {
                "type": "tool-input-available",
                "toolCallId": "call-2",
                "toolName": "ask",
                "input": {"q": "color?"},
            },
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "tool-calls"},
        ]
    part = next(p for p in last["parts"] if p.get("toolCallId") == "call-2")
    answer = part["output"]["answer"]
    return [
        {"type": "start"},
        {"type": "start-step"},
        {"type": "text-start", "id": "t2"},
        {"type": "text-delta", "id": "t2", "delta": f"You chose {answer}"},
        {"type": "text-end", "id": "t2"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


@pytest.mark.parametrize("major", MAJORS)
@pytest.mark.parametrize("continue_with", ["auto", "sendMessage"])
def test_ai_sdk_client_tool_output(
    serve: Serve, run_node: RunNode, major: int, continue_with: str
) -> None:
    api = serve(ai_sdk_app(client_tool_stream)) + "/api/chat"
    out = run_node(
        "aisdk_chat.mjs",
        api,
        {
            "major": major,
            "continueWith": continue_with,
            "messages": [{"text": "go", "toolOutputs": [{"output": {"answer": "blue"}}]}],
        },
    )
    assert out["status"] == "ready", out["error"]
    assert out["chunkErrors"] == []
    assert len(out["requests"]) == 2
    assert out["requests"][1]["body"]["messageId"] == "msg-t"
    assistants = [m for m in out["messages"] if m["role"] == "assistant"]
    assert len(assistants) == 1
    parts = assistants[0]["parts"]
    tool = next(p for p in parts if p["type"] == "tool-ask")
    assert (tool["state"], tool["output"]) == ("output-available", {"answer": "blue"})
    assert {"type": "text", "text": "You chose blue", "state": "done"} in parts


def test_ai_sdk_reports_bad_chunks(serve: Serve, run_node: RunNode) -> None:
    def broken(body: dict[str, Any]) -> list[Chunk]:
        return [
            {"type": "start"},
            {"type": "text-delta", "id": "nope", "delta": "x"},  # no text-start: reducer error
            {"type": "bogus"},  # not in uiMessageChunkSchema
            {"type": "finish", "finishReason": "unknown"},  # not in the 7.x enum
        ]

    out = run_node("aisdk_chat.mjs", serve(ai_sdk_app(broken)) + "/api/chat", {"messages": ["hi"]})
    assert out["status"] == "error"
    assert out["error"]
    kinds = [(e["kind"], e.get("index")) for e in out["chunkErrors"]]
    assert ("schema", 2) in kinds
    assert ("schema", 3) in kinds
    assert any(k == "process" for k, _ in kinds)
    assert [c["type"] for c in out["chunks"]] == ["start", "text-delta", "bogus", "finish"]


def test_ai_sdk_stop_mid_stream_then_resume(serve: Serve, run_node: RunNode) -> None:
    def slow(body: dict[str, Any]) -> list[Chunk]:
        deltas: list[Chunk] = [
            {"type": "text-delta", "id": "t", "delta": f"{i} "} for i in range(20)
        ]
        return [
            {"type": "start", "messageId": "msg-s"},
            {"type": "text-start", "id": "t"},
            *deltas,
            {"type": "text-end", "id": "t"},
            {"type": "finish", "finishReason": "stop"},
        ]

    api = serve(ai_sdk_app(slow, delay=0.05)) + "/api/chat"
    out = run_node(
        "aisdk_chat.mjs",
        api,
        {"chatId": "c-stop", "messages": ["hi"], "stopAfterChunks": 4, "resume": True},
    )
    # the page "closed" after a few chunks: a partial, still-streaming text part
    partial = out["messages"][-1]
    assert partial["id"] == "msg-s"
    assert partial["parts"][0]["state"] == "streaming"
    assert out["finishes"][0]["isAbort"] is True
    # the reload replays the whole stream into one complete message
    resumed = out["resume"]
    assert resumed["status"] == "ready"
    (assistant,) = [m for m in resumed["messages"] if m["role"] == "assistant"]
    assert assistant["id"] == "msg-s"
    assert assistant["parts"] == [
        {"type": "text", "text": "".join(f"{i} " for i in range(20)), "state": "done"}
    ]


# --------------------------------------------------------------------------------------------
# The fixtures themselves
# --------------------------------------------------------------------------------------------


def test_serve_runs_any_asgi_app(serve: Serve) -> None:
    async def bare_asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    health = Starlette(routes=[Route("/healthz", lambda _r: JSONResponse({"ok": True}))])
    a, b = serve(bare_asgi), serve(health)
    assert a != b
    assert httpx.get(a + "/anything").text == "ok"
    assert httpx.get(b + "/healthz").json() == {"ok": True}


def test_run_node_fails_loudly(run_node: RunNode) -> None:
    with pytest.raises(pytest.fail.Exception, match="exited with 1"):
        run_node("does_not_exist.mjs")
