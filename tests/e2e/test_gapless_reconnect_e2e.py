"""Gapless reconnect: a connection cut mid-run (by a TCP proxy, after N bytes) is resumed on
another server process after the last frame the client got, and every frame arrives exactly
once, in order: the AI SDK stream (`ai` 7, `resumeStreamIsReplay: false`, `Last-Event-ID` added
by `prepareReconnectToStreamRequest`), the AG-UI stream (@ag-ui/client's HttpAgent, then
`connectAgent()` with `Last-Event-ID`) and the thread's feed (clients/live-state's LiveThread).

Two uvicorn processes of `gapless_app.py` share a real `redis-server`. Each client's proxy sends
its first connection to A and cuts it after N bytes of the answer; the client's next connection
goes to B. An observer reads each stream whole on B, without a cut: what the client was handed
(whole frames, over both connections) is what the observer got.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import RunNode
from tests.redis_server import redis_server  # noqa: F401 - a fixture, used by name

ROOT = Path(__file__).resolve().parents[2]
WAIT = 15.0
Frame = tuple[str | None, str]
"""A frame's id (None: it has none) and its data."""


class CuttingProxy:
    """A TCP proxy on 127.0.0.1: its first connection goes to `first` and is cut once
    `cut_after` bytes of the answer went through; every later one goes to `then`."""

    def __init__(self, first: int, then: int, cut_after: int) -> None:
        self.targets = (first, then)
        self.cut_after = cut_after
        self.connections = 0
        self.cut = False
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        assert self._ready.wait(5)
        self.url = f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()
        for task in asyncio.all_tasks(self._loop):
            task.cancel()
        self._loop.run_until_complete(asyncio.sleep(0))
        self._loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        number = self.connections
        self.connections += 1
        up_reader, up_writer = await asyncio.open_connection(
            "127.0.0.1", self.targets[0 if number == 0 else 1])
        limit = self.cut_after if number == 0 else None
        pipes = [asyncio.ensure_future(self._pipe(reader, up_writer, None)),
                 asyncio.ensure_future(self._pipe(up_reader, writer, limit))]
        await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
        for pipe in pipes:
            pipe.cancel()
        writer.transport.abort()
        up_writer.transport.abort()

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter,
                    limit: int | None) -> None:
        sent = 0
        while data := await source.read(65536):
            if limit is not None and sent + len(data) >= limit:
                sink.write(data[:limit - sent])
                await sink.drain()
                self.cut = True
                return
            sink.write(data)
            sent += len(data)
            await sink.drain()

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


class Observer(threading.Thread):
    """Reads one stream whole in the background (no cut), frame by frame, until `enough`."""

    def __init__(self, method: str, url: str, enough: Callable[[list[Frame]], bool],
                 **kwargs: Any) -> None:
        super().__init__(daemon=True)
        self.method, self.url, self.kwargs, self.enough = method, url, kwargs, enough
        self.frames: list[Frame] = []
        self.status = 0
        self.start()

    def run(self) -> None:
        with httpx.Client(timeout=WAIT) as client, \
                client.stream(self.method, self.url, **self.kwargs) as response:
            self.status = response.status_code
            ident, data = None, []
            for line in response.iter_lines():
                if line.startswith("id: "):
                    ident = line[4:]
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif not line and data:
                    self.frames.append((ident, "\n".join(data)))
                    ident, data = None, []
                    if self.enough(self.frames):
                        return

    def done(self) -> list[Frame]:
        self.join(WAIT)
        assert not self.is_alive(), f"{self.url} did not end: {self.frames[-3:]}"
        return self.frames


def _observe(make: Callable[[], Observer]) -> Observer:
    """An observer of the run going on: made again until its stream is the run's (its frames
    have ids; a thread with nothing running yet has none, or answers 204)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        observer = make()
        while observer.is_alive() and not observer.frames:
            time.sleep(0.005)
        if observer.frames and observer.frames[0][0] is not None:
            return observer
        observer.join(WAIT)
        time.sleep(0.01)
    pytest.fail("the run never started")


@contextlib.contextmanager
def _servers(redis_url: str, tmp_path: Path) -> Iterator[list[int]]:
    """Two processes of gapless_app on one Redis prefix: their ports."""
    prefix = f"gl-{uuid.uuid4().hex[:10]}:"
    processes, ports = [], []
    for name in ("A", "B"):
        port = _free_port()
        env = {**os.environ, "PYOX_GL_REDIS": redis_url, "PYOX_GL_PREFIX": prefix,
               "PYOX_GL_NAME": name}
        with (tmp_path / f"{name}.log").open("wb") as log:
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "tests.e2e.gapless_app:app", "--port",
                 str(port), "--host", "127.0.0.1", "--log-level", "warning",
                 "--timeout-graceful-shutdown", "1"],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
        ports.append(port)
    try:
        for port, process in zip(ports, processes, strict=True):
            deadline = time.monotonic() + 20
            while not _healthy(port):
                assert process.poll() is None and time.monotonic() < deadline, \
                    (tmp_path / "A.log").read_text() + (tmp_path / "B.log").read_text()
                time.sleep(0.05)
        yield ports
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _healthy(port: int) -> bool:
    with contextlib.suppress(httpx.HTTPError):
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    return False


def _ag_ui_body(thread: str, text: str) -> dict[str, Any]:
    return {"threadId": thread, "runId": f"r-{uuid.uuid4().hex[:6]}", "state": {}, "tools": [],
            "context": [], "forwardedProps": {}, "protocolVersion": "1.0",
            "messages": [{"id": f"u-{uuid.uuid4().hex[:6]}", "role": "user", "content": text}]}


def _ran(frames: list[Any]) -> list[Frame]:
    """A client's frames (over all its connections), as (id, data)."""
    return [(ident, data) for _, ident, data in frames]


def _comparable(frames: list[Frame]) -> list[tuple[str | None, Any]]:
    """AG-UI frames with what differs between two readers of one run left out: when each
    was sent, the run id each reader gave, and the messages each holds."""
    out: list[tuple[str | None, Any]] = []
    for ident, data in frames:
        event = json.loads(data)
        event.pop("timestamp", None)
        event.pop("runId", None)
        if event["type"] == "MESSAGES_SNAPSHOT":
            event.pop("messages")
        out.append((ident, event))
    return out


EXPECTED_TEXT = "".join(f"w{step}.{i} " for step in (0, 1, 2, "end") for i in range(8))


def test_a_cut_stream_resumes_on_another_process_with_every_frame_once(
        redis_server: str, run_node: RunNode, tmp_path: Path) -> None:  # noqa: F811
    with _servers(redis_server, tmp_path) as (a, b):
        thread, chat = f"t-{uuid.uuid4().hex[:8]}", f"c-{uuid.uuid4().hex[:8]}"
        first = httpx.post(f"http://127.0.0.1:{a}/agents/paced/ag-ui",
                           json=_ag_ui_body(thread, "hi"), timeout=WAIT)
        assert first.status_code == 200 and "RUN_FINISHED" in first.text  # the thread is there
        proxies = {"aisdk": CuttingProxy(a, b, 1500), "agui": CuttingProxy(a, b, 2500),
                   "feed": CuttingProxy(a, b, 700)}
        base_b = f"http://127.0.0.1:{b}"
        ready = tmp_path / "feed.ready"
        try:
            feed_seen = Observer("GET", f"{base_b}/threads/{thread}/events",
                                 lambda f: '"run_finished"' in f[-1][1])
            with ThreadPoolExecutor(3) as pool:
                feed = pool.submit(run_node, "gapless.mjs", "feed", proxies["feed"].url,
                                   {"threadId": thread, "ready": str(ready), "until": 1})
                deadline = time.monotonic() + WAIT
                while not (ready.exists() and feed_seen.frames) and time.monotonic() < deadline:
                    time.sleep(0.01)
                agui = pool.submit(run_node, "gapless.mjs", "agui",
                                   f"{proxies['agui'].url}/agents/paced/ag-ui",
                                   {"threadId": thread, "text": "go"})
                aisdk = pool.submit(run_node, "gapless.mjs", "aisdk",
                                    f"{proxies['aisdk'].url}/agents/paced/ai-sdk",
                                    {"chatId": chat, "text": "go"})
                sdk_seen = _observe(lambda: Observer(
                    "GET", f"{base_b}/agents/paced/ai-sdk/{chat}/stream", lambda f: False))
                agui_seen = _observe(lambda: Observer(
                    "POST", f"{base_b}/agents/paced/ag-ui/connect?startIndex=0", lambda f: False,
                    json=_ag_ui_body(thread, "")))
                results = {"aisdk": aisdk.result(), "agui": agui.result(), "feed": feed.result()}
            for name, proxy in proxies.items():
                assert proxy.cut and proxy.connections >= 2, (name, results[name])
                assert {c for c, _, _ in results[name]["frames"]} == {1, 2}, results[name]
            _check_ai_sdk(results["aisdk"], sdk_seen.done())
            _check_ag_ui(results["agui"], agui_seen.done())
            _check_feed(results["feed"], feed_seen.done())
        finally:
            for proxy in proxies.values():
                proxy.close()


def _check_ai_sdk(client: dict[str, Any], seen: list[Frame]) -> None:
    assert _ran(client["frames"]) == seen  # each frame once, in order
    assert client["statusAfterCut"] == "error" and client["status"] == "ready", client
    assert client["errors"] == ["network error"], client["errors"]
    (answer,) = [m for m in client["messages"] if m["role"] == "assistant"]
    assert "".join(p["text"] for p in answer["parts"] if p["type"] == "text") == EXPECTED_TEXT
    tools = [p for p in answer["parts"] if p["type"] == "tool-add"]
    assert [p["state"] for p in tools] == ["output-available"] * 3


def _check_ag_ui(client: dict[str, Any], seen: list[Frame]) -> None:
    frames = _ran(client["frames"])
    numbered = [(i, d) for i, d in frames if i is not None]
    assert _comparable(numbered) == _comparable(seen)  # each frame of the log once, in order
    opening = [json.loads(d)["type"] for i, d in frames if i is None]
    assert opening[0] == "RUN_STARTED", opening  # the resumed stream's start (no id)
    assert client["runError"] is not None and client["connectError"] is None, client
    events = [e for _, e in client["events"]]
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == EXPECTED_TEXT
    assert sum(e["type"] == "STATE_DELTA" for e in events) == 3
    assert sum(e["type"] == "TOOL_CALL_RESULT" for e in events) == 3
    ids = [m["id"] for m in client["messages"]]
    assert len(ids) == len(set(ids)), client["messages"]
    assert client["state"]["items"] == ["first", "item-0", "item-1", "item-2"]
    # what the client says of the cut run (the connect that follows says nothing)
    assert all("Agent execution failed: TypeError: network error" in w
               for w in client["warnings"]), client["warnings"]


def _check_feed(client: dict[str, Any], seen: list[Frame]) -> None:
    frames = _ran(client["frames"])
    snapshots = [d for _, d in frames if '"snapshot"' in d]
    assert len(snapshots) == 1, frames  # resumed after its last item, not from a new snapshot
    items = [(i, d) for i, d in frames if '"snapshot"' not in d]
    assert items == [(i, d) for i, d in seen if '"snapshot"' not in d]
    assert client["state"]["items"] == ["first", "item-0", "item-1", "item-2"]
    assert client["resyncs"] == 0
