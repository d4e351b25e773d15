"""Small OpenAI- and Anthropic-compatible HTTP servers for the provider tests.

Each is a Starlette app served by uvicorn on 127.0.0.1 (a free port, its own thread). A test
scripts its replies: `server.script(reply, ...)` queues one reply per request, where a reply is
an SSE stream (`Sse(frames)`, each frame sent as its own chunk, the way the real APIs stream) or
an HTTP error (`Fail(status, body)`); `server.always(...)` answers every further request the
same way. `server.requests` keeps every request's headers and JSON body.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass(frozen=True)
class Sse:
    """A 200 reply streamed as these server-sent-event frames, one chunk each."""

    frames: Sequence[str]


@dataclass(frozen=True)
class Fail:
    """An HTTP error reply with a JSON body."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


Scripted = Sse | Fail


@dataclass
class Seen:
    """One request the server received."""

    headers: dict[str, str]
    json: Any


class FakeProvider:
    """A scripted provider answering POST `path`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.url = ""
        self.requests: list[Seen] = []
        self._queue: list[Scripted] = []
        self._always: Scripted | None = None
        self.app = Starlette(routes=[Route(path, self._answer, methods=["POST"])])

    def reset(self) -> None:
        self.requests.clear()
        self._queue.clear()
        self._always = None

    def script(self, *replies: Scripted) -> None:
        self._queue.extend(replies)

    def always(self, reply: Scripted) -> None:
        self._always = reply

    async def _answer(self, request: Request) -> Response:
        self.requests.append(Seen(dict(request.headers), await request.json()))
        if self._queue:
            reply = self._queue.pop(0)
        elif self._always is not None:
            reply = self._always
        else:
            return JSONResponse(
                {"error": {"message": "the test server has no reply scripted", "type": "test"}},
                status_code=400,
            )
        if isinstance(reply, Fail):
            return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers)
        return StreamingResponse(_frames(reply.frames), media_type="text/event-stream")


async def _frames(frames: Sequence[str]) -> AsyncIterator[bytes]:
    for frame in frames:
        yield frame.encode()
        await anyio.sleep(0.001)  # a separate network write per frame


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve `app` with uvicorn on 127.0.0.1 in a thread; yield its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the fake provider did not start within 10 s")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


# -- OpenAI Chat Completions frames -----------------------------------------------------------


def oa_chunk(
    delta: dict[str, Any] | None = None,
    *,
    finish: str | None = None,
    usage: tuple[int, int] | None = None,
    model: str = "gpt-5-mini",
) -> str:
    """One `chat.completion.chunk` frame; no `delta` makes the usage-only last chunk."""
    choices = (
        []
        if delta is None
        else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    )
    data: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "system_fingerprint": None,
        "choices": choices,
        "usage": None,
    }
    if usage is not None:
        data["usage"] = {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        }
    return f"data: {json.dumps(data)}\n\n"


OA_DONE = "data: [DONE]\n\n"


def oa_text(*pieces: str, usage: tuple[int, int] = (12, 3)) -> Sse:
    """A streamed text reply, one piece per chunk, then usage and [DONE]."""
    frames = [oa_chunk({"role": "assistant", "content": "", "refusal": None})]
    frames += [oa_chunk({"content": piece}) for piece in pieces]
    frames += [oa_chunk({}, finish="stop"), oa_chunk(usage=usage), OA_DONE]
    return Sse(frames)


def oa_tool_calls(*calls: tuple[str, str, Sequence[str]], usage: tuple[int, int] = (40, 20)) -> Sse:
    """Streamed tool calls: each (id, name, argument pieces), one after the other."""
    frames = [oa_chunk({"role": "assistant", "content": None})]
    for index, (call_id, name, pieces) in enumerate(calls):
        first = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        frames.append(oa_chunk({"tool_calls": [first]}))
        frames += [
            oa_chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in pieces
        ]
    frames += [oa_chunk({}, finish="tool_calls"), oa_chunk(usage=usage), OA_DONE]
    return Sse(frames)


# -- Anthropic Messages frames ------------------------------------------------------------------


def an_event(kind: str, **data: Any) -> str:
    """One Messages API stream event frame."""
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"


def an_start(input_tokens: int = 12, model: str = "claude-sonnet-4-5") -> str:
    message: dict[str, Any] = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    return an_event("message_start", message=message)


def an_end(output_tokens: int, stop_reason: str = "end_turn") -> list[str]:
    return [
        an_event(
            "message_delta",
            delta={"stop_reason": stop_reason, "stop_sequence": None},
            usage={"output_tokens": output_tokens},
        ),
        an_event("message_stop"),
    ]


def an_text_block(index: int, *pieces: str) -> list[str]:
    frames = [
        an_event("content_block_start", index=index, content_block={"type": "text", "text": ""})
    ]
    frames += [
        an_event("content_block_delta", index=index, delta={"type": "text_delta", "text": p})
        for p in pieces
    ]
    return [*frames, an_event("content_block_stop", index=index)]


def an_tool_block(index: int, call_id: str, name: str, *pieces: str) -> list[str]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    frames = [an_event("content_block_start", index=index, content_block=block)]
    frames += [
        an_event(
            "content_block_delta",
            index=index,
            delta={"type": "input_json_delta", "partial_json": p},
        )
        for p in pieces
    ]
    return [*frames, an_event("content_block_stop", index=index)]


def an_thinking_block(index: int, thinking: Sequence[str], signature: str) -> list[str]:
    block = {"type": "thinking", "thinking": "", "signature": ""}
    frames = [an_event("content_block_start", index=index, content_block=block)]
    frames += [
        an_event(
            "content_block_delta", index=index, delta={"type": "thinking_delta", "thinking": t}
        )
        for t in thinking
    ]
    frames.append(
        an_event(
            "content_block_delta",
            index=index,
            delta={"type": "signature_delta", "signature": signature},
        )
    )
    return [*frames, an_event("content_block_stop", index=index)]


def an_text(*pieces: str, usage: tuple[int, int] = (12, 3)) -> Sse:
    """A streamed text reply with a ping, as the API sends it."""
    return Sse(
        [
            an_start(usage[0]),
            an_event("ping"),
            *an_text_block(0, *pieces),
            *an_end(usage[1]),
        ]
    )
