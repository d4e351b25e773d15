"""EventStreamResponse: the SSE writer under the server, served by a real uvicorn."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator, Callable
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from pyox_agents.server.sse import KEEPALIVE_FRAME, EventStreamResponse, SendTimeoutError
from tests.ag_ui.servers import serving

pytestmark = pytest.mark.anyio


def app_of(make: Any) -> Starlette:
    async def endpoint(request: Request) -> EventStreamResponse:
        return make()  # type: ignore[no-any-return]

    return Starlette(routes=[Route("/s", endpoint, methods=["GET", "POST"])])


async def test_chunks_arrive_in_order_and_the_stream_ends_after_the_last() -> None:
    async def chunks() -> AsyncGenerator[bytes, None]:
        for i in range(50):
            yield f"data: {i}\n\n".encode()

    app = app_of(lambda: EventStreamResponse(chunks()))
    async with serving(app) as url, httpx.AsyncClient() as client:
        response = await client.get(f"{url}/s")
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.text == "".join(f"data: {i}\n\n" for i in range(50))


async def test_keep_alive_comments_fill_silences_only() -> None:
    release = anyio.Event()

    async def chunks() -> AsyncGenerator[bytes, None]:
        yield b"data: first\n\n"
        await release.wait()
        yield b"data: last\n\n"

    app = app_of(lambda: EventStreamResponse(chunks(), keepalive=0.05))
    async with serving(app) as url, httpx.AsyncClient() as client, \
            client.stream("GET", f"{url}/s") as response:
        seen = []
        async for text in response.aiter_text():
            seen.append(text)
            if text.count(KEEPALIVE_FRAME.decode()) or len(seen) > 2:
                release.set()
    body = "".join(seen)
    assert body.startswith("data: first\n\n") and body.endswith("data: last\n\n")
    assert KEEPALIVE_FRAME.decode() in body


async def test_a_client_that_disconnects_stops_the_writer_and_closes_the_chunks() -> None:
    closed, waiting = anyio.Event(), anyio.Event()

    async def chunks() -> AsyncGenerator[bytes, None]:
        try:
            yield b"data: one\n\n"
            waiting.set()
            await anyio.sleep_forever()
            yield b"never"
        finally:
            closed.set()

    app = app_of(lambda: EventStreamResponse(chunks()))
    async with serving(app) as url, httpx.AsyncClient() as client:
        async with client.stream("GET", f"{url}/s") as response:
            lines = response.aiter_lines()
            assert await anext(lines) == "data: one"
            await waiting.wait()
        with anyio.fail_after(10):
            await closed.wait()


async def test_a_client_that_does_not_read_is_dropped_after_the_send_timeout() -> None:
    closed = anyio.Event()

    async def chunks() -> AsyncGenerator[bytes, None]:
        try:
            while True:
                yield b"data: " + b"x" * 65536 + b"\n\n"
        finally:
            closed.set()

    app = app_of(lambda: EventStreamResponse(chunks(), send_timeout=0.5))
    async with serving(app) as url:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"GET /s HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()  # ... and never read
        with anyio.fail_after(20):
            await closed.wait()
            while await reader.read(1 << 20):  # the server closed the connection
                pass
        writer.close()


def test_keepalive_must_be_positive_and_send_timeout_a_number() -> None:
    """Rule: a keep-alive of 0 or NaN seconds, or a send timeout that is NaN or negative, is
    refused as the response, or the app, is made (NaN sent no keep-alive on asyncio, and
    failed the stream on uvloop before its chunks could be closed)."""
    async def chunks() -> AsyncGenerator[bytes, None]:
        yield b""

    generator = chunks()
    for keepalive in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="keepalive is the seconds"):
            EventStreamResponse(generator, keepalive=keepalive)
    for send_timeout in (-1, float("nan")):
        with pytest.raises(ValueError, match="send_timeout is the seconds"):
            EventStreamResponse(generator, send_timeout=send_timeout)
    from pyox_agents import Agent
    from pyox_agents.models import FunctionModel
    from pyox_agents.server import create_app

    agents = {"a": Agent(FunctionModel(lambda messages, tools: "hi"))}
    with pytest.raises(ValueError, match="keepalive is the seconds"):  # (not a 500 a stream)
        create_app(agents, keepalive=float("nan"))
    with pytest.raises(ValueError, match="send_timeout is the seconds"):
        create_app(agents, send_timeout=-5)


async def test_a_silence_after_a_slow_write_gets_its_keep_alives() -> None:
    """Rule: a write slower than the keep-alive does not put the next keep-alive off to the
    send timeout: the silence after it gets one every `keepalive` seconds (a proxy cuts a
    stream silent for longer; behind uvloop and `BaseHTTPMiddleware` every write waits for
    the middleware's task, so the timer often comes due during one)."""
    release = asyncio.Event()
    sent: list[tuple[float, bytes]] = []
    loop = asyncio.get_running_loop()

    async def chunks() -> AsyncGenerator[bytes, None]:
        yield b"data: slow\n\n"
        await release.wait()
        yield b"data: last\n\n"

    async def send(message: dict[str, Any]) -> None:
        if message.get("body") == b"data: slow\n\n":
            await asyncio.sleep(0.15)  # three keep-alives long
        sent.append((loop.time(), message.get("body", b"")))

    task = asyncio.create_task(EventStreamResponse(chunks(), keepalive=0.05, send_timeout=3)(
        {"type": "http", "method": "GET"}, _blocked_receive, send))  # type: ignore[arg-type]
    await asyncio.sleep(0.75)
    release.set()
    await task
    wrote = next(at for at, body in sent if body == b"data: slow\n\n")
    alive = [at for at, body in sent if body == KEEPALIVE_FRAME and at > wrote]
    assert len(alive) >= 4, (wrote, alive)


async def test_an_error_in_the_servers_receive_is_raised_not_lost() -> None:
    """The watcher's failure reaches the server (which logs it and closes the connection)."""
    sent: list[dict[str, Any]] = []

    async def chunks() -> AsyncGenerator[bytes, None]:
        yield b"data: 1\n\n"
        await anyio.sleep(0.05)
        yield b"data: 2\n\n"

    async def receive() -> dict[str, Any]:
        raise RuntimeError("the server's receive broke")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    response = EventStreamResponse(chunks())
    with pytest.raises(RuntimeError, match="receive broke"):
        await response({"type": "http", "method": "GET"}, receive, send)
    assert [m.get("body") for m in sent[1:]] == [b"data: 1\n\n", b"data: 2\n\n"]


async def _blocked_receive() -> dict[str, Any]:
    await asyncio.Event().wait()  # the client never goes
    raise AssertionError("unreachable")


async def test_a_slow_client_that_takes_each_event_within_the_send_timeout_stays() -> None:
    """The send timeout bounds each write, not the whole response."""

    async def chunks() -> AsyncGenerator[bytes, None]:
        for i in range(8):
            yield f"data: {i}\n\n".encode()

    sent: list[Any] = []

    async def send(message: dict[str, Any]) -> None:
        await asyncio.sleep(0.1)  # each event taken well within the timeout; all of them not
        sent.append(message.get("body"))

    await EventStreamResponse(chunks(), send_timeout=0.3)(
        {"type": "http", "method": "GET"}, _blocked_receive, send)
    assert sent[1:] == [f"data: {i}\n\n".encode() for i in range(8)] + [b""]


async def test_a_write_stuck_after_a_silence_is_dropped_at_its_own_send_timeout() -> None:
    """A write that starts after a silence and never ends is dropped once it is `send_timeout`
    old, long before the next keep-alive would be due; the chunks are closed."""
    closed = anyio.Event()
    stuck = anyio.Event()

    async def chunks() -> AsyncGenerator[bytes, None]:
        try:
            yield b"data: 1\n\n"
            await asyncio.sleep(0.3)  # a silence longer than the send timeout
            yield b"data: 2\n\n"
        finally:
            closed.set()

    async def send(message: dict[str, Any]) -> None:
        if message.get("body") == b"data: 2\n\n":
            stuck.set()
            await asyncio.Event().wait()  # the client never takes it

    response = EventStreamResponse(chunks(), keepalive=60.0, send_timeout=0.2)
    with anyio.fail_after(10), pytest.raises(SendTimeoutError, match=r"over 0\.2 s"):
        await response({"type": "http", "method": "GET"}, _blocked_receive, send)
    assert stuck.is_set() and closed.is_set()


async def test_on_close_is_awaited_after_the_chunks_are_closed_however_the_stream_ends() -> None:
    """The stream's end runs `on_close` once its chunks are closed: after the last chunk, and
    when the client goes (the server's `on_disconnect="cancel"` stops the run there)."""
    order: list[str] = []

    async def chunks(endless: bool) -> AsyncGenerator[bytes, None]:
        try:
            yield b"data: 1\n\n"
            while endless:
                await asyncio.sleep(0.01)
                yield b"data: more\n\n"
        finally:
            order.append("chunks closed")

    async def on_close() -> None:
        order.append("on_close")

    async def send(message: dict[str, Any]) -> None:
        pass

    await EventStreamResponse(chunks(False), on_close=on_close)(
        {"type": "http", "method": "GET"}, _blocked_receive, send)
    assert order == ["chunks closed", "on_close"]

    order.clear()

    async def goes() -> dict[str, Any]:
        await asyncio.sleep(0.05)
        return {"type": "http.disconnect"}

    with anyio.fail_after(10):
        await EventStreamResponse(chunks(True), on_close=on_close)(
            {"type": "http", "method": "GET"}, goes, send)
    assert order == ["chunks closed", "on_close"]


async def test_a_header_a_middleware_adds_to_one_response_is_not_in_the_next() -> None:
    """Responses with the same headers share their encoding, never their list: a middleware
    that adds a header to one response's start message (as CORS does) adds it to that one."""

    async def chunks() -> AsyncGenerator[bytes, None]:
        yield b"data: x\n\n"

    inner = app_of(lambda: EventStreamResponse(chunks(), headers={"Cache-Control": "no-cache"}))
    calls = 0

    async def tagging(scope: Any, receive: Any, send: Any) -> None:
        nonlocal calls
        calls += scope["type"] == "http"
        tag = calls

        async def tagged(message: Any) -> None:
            if message["type"] == "http.response.start" and tag == 1:
                message["headers"].append((b"x-first", b"1"))  # in place, as MutableHeaders does
            await send(message)

        await inner(scope, receive, tagged)

    async with serving(tagging) as url, httpx.AsyncClient() as client:
        first = await client.get(f"{url}/s")
        second = await client.get(f"{url}/s")
    assert first.headers.get("x-first") == "1" and "x-first" not in second.headers
    assert first.headers["cache-control"] == second.headers["cache-control"] == "no-cache"


async def test_a_stream_that_ended_leaves_no_task_behind() -> None:
    """The stream's reader of chunks and its listener for the disconnect end with it, however
    it ends: after the last chunk, when the client goes, when the chunks fail."""

    async def chunks(how: str) -> AsyncGenerator[bytes, None]:
        yield b"data: 1\n\n"
        if how == "fails":
            raise RuntimeError("the chunks broke")
        if how == "endless":
            await anyio.sleep_forever()

    async def send(message: dict[str, Any]) -> None:
        pass

    async def goes() -> dict[str, Any]:
        await asyncio.sleep(0.05)
        return {"type": "http.disconnect"}

    before = asyncio.all_tasks()
    await EventStreamResponse(chunks("ends"))({"type": "http", "method": "GET"},
                                              _blocked_receive, send)
    with anyio.fail_after(10):
        await EventStreamResponse(chunks("endless"))({"type": "http", "method": "GET"},
                                                     goes, send)
    with pytest.raises(RuntimeError, match="the chunks broke"):
        await EventStreamResponse(chunks("fails"))({"type": "http", "method": "GET"},
                                                   _blocked_receive, send)
    assert asyncio.all_tasks() == before


async def test_keep_alives_and_writes_happen_in_the_responses_own_task() -> None:
    """No timer callback writes: every `send` of the body, keep-alive comments included, is
    called from the task that runs the response (a middleware's `send` needs one)."""
    writers: list[asyncio.Task[Any] | None] = []

    async def chunks() -> AsyncGenerator[bytes, None]:
        yield b"data: 1\n\n"
        await asyncio.sleep(0.25)  # a silence of several keep-alives
        yield b"data: 2\n\n"

    async def send(message: dict[str, Any]) -> None:
        writers.append(asyncio.current_task())

    response = EventStreamResponse(chunks(), keepalive=0.05)
    task = asyncio.create_task(response({"type": "http", "method": "GET"},  # type: ignore[arg-type]
                                        _blocked_receive, send))
    await task
    assert len(writers) >= 5 and set(writers) == {task}


async def test_a_stream_behind_base_http_middleware_gets_keep_alives_then_its_end(
        live_server: Callable[[Any], str]) -> None:
    """A server wrapped by Starlette's `BaseHTTPMiddleware` (`@app.middleware("http")` in
    older Starlette) hands the response's writes to a memory stream that only a task may
    write to: a run silent for longer than the keep-alive gets its keep-alive comments and
    then RUN_FINISHED, not a stream cut at its first silence."""
    from starlette.middleware.base import BaseHTTPMiddleware

    from pyox_agents import Agent
    from pyox_agents.models import FunctionModel
    from pyox_agents.server import create_app

    async def slow(messages: list[Any], tools: list[Any]) -> str:
        await asyncio.sleep(1.0)  # a model that thinks before it answers
        return "here"

    async def passing(request: Any, call_next: Any) -> Any:
        return await call_next(request)

    app = create_app({"slow": Agent(FunctionModel(slow))}, keepalive=0.2)
    app.add_middleware(BaseHTTPMiddleware, dispatch=passing)
    base = live_server(app)
    body = {"threadId": "t1", "runId": "r1", "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [{"id": "m1", "role": "user", "content": "hi"}]}
    async with httpx.AsyncClient(timeout=20) as client:
        response = await client.post(f"{base}/agents/slow/ag-ui", json=body)
    text = response.text
    assert text.count(KEEPALIVE_FRAME.decode()) >= 2
    events = [json.loads(line[len("data: "):]) for line in text.splitlines()
              if line.startswith("data: ")]
    assert events[-1]["type"] == "RUN_FINISHED"
    assert "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT") == "here"


def test_keep_alives_and_send_timeouts_work_on_uvloop_too() -> None:
    """`pyox-agents serve` runs on uvloop when it is installed (the `fast` extra): a silence
    gets its keep-alive comments there, and a stuck write its send timeout."""
    import uvloop

    async def chunks() -> AsyncGenerator[bytes, None]:
        yield b"data: 1\n\n"
        await asyncio.sleep(0.2)
        yield b"data: 2\n\n"

    async def main() -> list[Any]:
        sent: list[Any] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message.get("body"))

        await EventStreamResponse(chunks(), keepalive=0.05)(
            {"type": "http", "method": "GET"}, _blocked_receive, send)

        async def stuck(message: dict[str, Any]) -> None:
            if message.get("body"):
                await asyncio.Event().wait()

        with pytest.raises(SendTimeoutError):
            await EventStreamResponse(chunks(), send_timeout=0.05)(
                {"type": "http", "method": "GET"}, _blocked_receive, stuck)
        return sent

    sent = uvloop.run(main())
    assert sent[1] == b"data: 1\n\n" and sent[-2:] == [b"data: 2\n\n", b""]
    assert sent.count(KEEPALIVE_FRAME) >= 2


async def test_a_client_that_goes_as_a_blocked_write_times_out_ends_the_stream_quietly(
        ) -> None:
    """Rule: a client that disconnects just before a blocked write's send timeout (the loop
    busy a moment after) ends the stream as a client that went: its chunks closed, nothing
    raised, and no error in the loop's log (the timeout is not set again once it expires)."""
    loop = asyncio.get_running_loop()
    errors: list[Any] = []
    loop.set_exception_handler(lambda _, context: errors.append(context))
    closed: list[bool] = []
    gone: asyncio.Future[None] = loop.create_future()

    async def chunks() -> AsyncGenerator[bytes, None]:
        try:
            yield b"data: 1\n\n"
            await asyncio.sleep(3600)
        finally:
            closed.append(True)

    async def send(message: dict[str, Any]) -> None:
        if message.get("body"):  # the client stopped reading; it goes just before the timeout
            def disconnect() -> None:
                gone.set_result(None)
                loop.call_soon(time.sleep, 0.1)  # (the loop busy: the timer comes due too)

            loop.call_later(0.25, disconnect)
            await asyncio.Event().wait()

    async def receive() -> dict[str, Any]:
        await gone
        return {"type": "http.disconnect"}

    try:
        with anyio.fail_after(5):
            await EventStreamResponse(chunks(), keepalive=60, send_timeout=0.3)(
                {"type": "http", "method": "GET"}, receive, send)  # type: ignore[arg-type]
        await asyncio.sleep(0.2)
    finally:
        loop.set_exception_handler(None)
    assert closed == [True]
    assert errors == []


class _Queued:
    """Chunks from a queue, whose wait may be cancelled and read on (`cancel_safe`), as a run's
    log is read: `None` ends them."""

    cancel_safe = True

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.closed = False

    def __aiter__(self) -> _Queued:
        return self

    async def __anext__(self) -> bytes:
        chunk = await self.queue.get()  # (a cancelled get takes nothing)
        if chunk is None:
            raise StopAsyncIteration
        return chunk

    async def aclose(self) -> None:
        self.closed = True


async def test_cancel_safe_chunks_are_read_in_the_writers_task_beside_the_listener_alone() -> None:
    """Rule: chunks whose wait may be cancelled (a run's log) are read in the response's own
    task: while it streams, the listener for the disconnect is the only task beside it, and
    keep-alives still fill the silences."""
    chunks, sent = _Queued(), []
    during: set[asyncio.Task[Any]] = set()

    async def send(message: dict[str, Any]) -> None:
        sent.append(message.get("body"))

    before = asyncio.all_tasks()
    task = asyncio.create_task(EventStreamResponse(chunks, keepalive=0.05)(
        {"type": "http", "method": "GET"}, _blocked_receive, send))  # type: ignore[arg-type]
    chunks.queue.put_nowait(b"data: 1\n\n")
    await asyncio.sleep(0.2)  # a silence of several keep-alives
    during = asyncio.all_tasks() - before - {task}
    chunks.queue.put_nowait(b"data: 2\n\n")
    chunks.queue.put_nowait(None)
    await task
    assert [t.get_coro().__qualname__ for t in during] == [  # type: ignore[union-attr]
        "EventStreamResponse._listen"]
    assert sent[1] == b"data: 1\n\n" and sent[-2:] == [b"data: 2\n\n", b""]
    assert sent.count(KEEPALIVE_FRAME) >= 2 and chunks.closed


@pytest.mark.parametrize("kind", ["cancel-safe", "async generator"])
async def test_keep_alives_that_come_as_chunks_do_lose_none(kind: str) -> None:
    """Rule: a keep-alive ends the writer's wait for the next chunk, never the chunk: with a
    keep-alive due every millisecond and chunks coming as often, at random, every chunk is
    written once, in order, keep-alives between them."""
    import random

    queued = _Queued()

    async def generated() -> AsyncGenerator[bytes, None]:
        async for chunk in queued:
            yield chunk

    sent: list[bytes] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message.get("body", b""))
        if random.random() < 0.2:
            await asyncio.sleep(0)

    chunks = queued if kind == "cancel-safe" else generated()
    task = asyncio.create_task(EventStreamResponse(chunks, keepalive=0.001)(
        {"type": "http", "method": "GET"}, _blocked_receive, send))  # type: ignore[arg-type]
    rng = random.Random(7)
    for i in range(600):
        queued.queue.put_nowait(f"data: {i}\n\n".encode())
        await asyncio.sleep(rng.choice([0, 0, 0.0005, 0.001, 0.0015]))
    queued.queue.put_nowait(None)
    with anyio.fail_after(10):
        await task
    written = [chunk for chunk in sent if chunk not in (KEEPALIVE_FRAME, b"")]
    assert written == [f"data: {i}\n\n".encode() for i in range(600)]
    assert KEEPALIVE_FRAME in sent
