"""EventStreamResponse: the SSE writer under the server, served by a real uvicorn."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
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


def test_keepalive_must_be_positive() -> None:
    async def chunks() -> AsyncGenerator[bytes, None]:
        yield b""

    generator = chunks()
    with pytest.raises(ValueError, match="keepalive is the seconds"):
        EventStreamResponse(generator, keepalive=0)


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


async def _timers_while_streaming(count: int) -> int:
    """How many timers were scheduled while a response wrote `count` chunks: the event loop's
    and the far ones kept off its heap (`pyox_agents._deadlines`)."""
    from pyox_agents import _deadlines

    loop = asyncio.get_running_loop()
    scheduled = 0
    call_at = loop.call_at
    add = _deadlines._Timers.add

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal scheduled
        scheduled += 1
        return call_at(*args, **kwargs)

    def counting_far(*args: Any, **kwargs: Any) -> Any:
        nonlocal scheduled
        scheduled += 1
        return add(*args, **kwargs)

    async def chunks() -> AsyncGenerator[bytes, None]:
        for i in range(count):
            yield f"data: {i}\n\n".encode()
            await asyncio.sleep(0)  # the next event comes later, as a model's tokens do

    sent: list[Any] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message.get("body"))
        await asyncio.sleep(0)

    loop.call_at = counting  # type: ignore[method-assign]
    _deadlines._Timers.add = counting_far  # type: ignore[method-assign]
    try:
        await EventStreamResponse(chunks(), keepalive=5.0, send_timeout=5.0)(
            {"type": "http", "method": "GET"}, _blocked_receive, send)
    finally:
        del loop.call_at  # type: ignore[method-assign]
        _deadlines._Timers.add = add  # type: ignore[method-assign]
    assert sent[1:-1] == [f"data: {i}\n\n".encode() for i in range(count)]
    return scheduled


async def test_keep_alives_send_timeouts_and_disconnect_watching_cost_nothing_per_event() -> None:
    """Issue 21: "Keep-alives, send timeouts and disconnect watching cost nothing per event
    (they are per response)": a stream of 1,000 events schedules no more timers than one of 10
    (the first stream of a loop also arms the loop's one timer for the far ones)."""
    await _timers_while_streaming(1)
    assert await _timers_while_streaming(1000) == await _timers_while_streaming(10) <= 2


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


async def test_an_open_stream_has_no_task_but_the_one_that_writes_it() -> None:
    """Disconnects, keep-alives and send timeouts are watched without a task per stream: a
    silent open stream holds the server's task for its request and nothing more."""
    waiting, release = anyio.Event(), anyio.Event()

    async def chunks() -> AsyncGenerator[bytes, None]:
        yield b"data: one\n\n"
        waiting.set()
        await release.wait()

    app = app_of(lambda: EventStreamResponse(chunks(), keepalive=0.05))
    async with serving(app) as url, httpx.AsyncClient() as client:
        idle = len(asyncio.all_tasks())
        async with client.stream("GET", f"{url}/s") as response:
            lines = response.aiter_lines()
            assert await anext(lines) == "data: one"
            await waiting.wait()
            await anyio.sleep(0.2)  # keep-alives go out meanwhile
            assert len(asyncio.all_tasks()) == idle + 1
            release.set()
