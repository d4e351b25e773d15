"""Shared parts of the HTTP benches: the served apps, the server launcher, the SSE client.

The servers are uvicorn processes started by `Server` with `--factory common:<name>_app`:

- `ours_app`: `pyox_agents.server.create_app` with one agent ("bench") on `BenchModel`.
- `pai_app`: pydantic-ai's `AGUIAdapter.dispatch_request` with a `FunctionModel` streaming the
  same deltas and a tool that appends to `StateDeps` state (a new `StateDeps` per request).
- `floor_app`: a bare Starlette `StreamingResponse` that yields our AG-UI stream's frames,
  encoded once at start-up (only the frames that name the thread, the run or the user's text
  are patched per request, so the client's state check still holds).

The workload is set by environment variables read in the server process: `BENCH_BEFORE` text
deltas, then a tool call `add_item(text=<the user's message>)` that appends to `state.items`,
then (after the tool result) `BENCH_AFTER` text deltas. Every app is wrapped by `instrument`,
which adds `GET /_bench/stats` and `POST /_bench/reset`: the max lateness of a 10 ms sleep in a
ticker task (event-loop pauses) and the time the cyclic GC took, per generation.
`BENCH_GC_FREEZE=1` calls `gc.freeze()` after start-up, `BENCH_GC_THRESHOLD=a,b,c` sets
`gc.set_threshold` (diagnostics for the profile notes in results.md).
"""
# No `from __future__ import annotations`: pydantic-ai reads the tool's hints at runtime, and
# they name classes local to `pai_app`.

import asyncio
import concurrent.futures
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
AGENT = "bench"
AG_UI_PATH = f"/agents/{AGENT}/ag-ui"
AI_SDK_PATH = f"/agents/{AGENT}/ai-sdk"
WORD = "w "  # one text delta


def _workload() -> tuple[int, int]:
    return int(os.environ.get("BENCH_BEFORE", "0")), int(os.environ.get("BENCH_AFTER", "50"))


# ---------------------------------------------------------------- server side: instrumentation


class _LoopStats:
    """Event-loop lateness (a 10 ms sleep in a ticker task) and cyclic-GC time, per process."""

    def __init__(self) -> None:
        self.ticker: asyncio.Task[None] | None = None
        self.reset()
        gc.callbacks.append(self._on_gc)
        self._gc_start = 0.0

    def reset(self) -> None:
        self.max_late = 0.0
        self.ticks = 0
        self.late: list[tuple[float, float]] = []
        """Each tick since the reset: (when it was due, when it ran), `time.monotonic()`."""
        self.gc_time = [0.0, 0.0, 0.0]
        self.gc_count = [0, 0, 0]
        self.gc_max = 0.0

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
            return
        took = time.perf_counter() - self._gc_start
        generation = info["generation"]
        self.gc_time[generation] += took
        self.gc_count[generation] += 1
        self.gc_max = max(self.gc_max, took)

    async def tick(self) -> None:
        while True:
            due = time.monotonic() + 0.010
            await asyncio.sleep(0.010)
            ran = time.monotonic()
            self.max_late = max(self.max_late, ran - due)
            self.late.append((due, ran))
            self.ticks += 1

    def late_until(self, until: float) -> float:
        """The longest the loop kept a due tick waiting before `until` (a `time.monotonic()`
        of another process on this machine): a tick due before it and run after it counts
        up to `until` only."""
        return max((min(ran, until) - due for due, ran in self.late if due < until), default=0.0)

    def as_dict(self, until: float | None = None) -> dict[str, Any]:
        late = self.max_late if until is None else self.late_until(until)
        return {"max_late_ms": late * 1000, "whole_late_ms": self.max_late * 1000,
                "ticks": self.ticks, "rss_mib": _rss_mib(),
                "gc_s": self.gc_time, "gc_count": self.gc_count, "gc_max_ms": self.gc_max * 1000,
                "gc_threshold": gc.get_threshold(), "gc_frozen": gc.get_freeze_count()}


def _rss_mib() -> float:
    """This process's resident memory now (VmRSS), MiB; NaN where /proc is missing."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return float("nan")
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def instrument(app: Any) -> Any:
    """`app` plus `GET /_bench/stats[?until=<time.monotonic()>]`, `POST /_bench/reset` and the
    ticker task (`until`: the stall counted up to then, `whole_late_ms` beside it)."""
    stats = _LoopStats()
    threshold = os.environ.get("BENCH_GC_THRESHOLD")
    if threshold:
        gc.set_threshold(*(int(part) for part in threshold.replace("/", ",").split(",")))
    if os.environ.get("BENCH_GC_FREEZE") == "1":
        gc.collect()
        gc.freeze()

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            if stats.ticker is None:
                stats.ticker = asyncio.get_running_loop().create_task(stats.tick())
            path = scope["path"]
            if path.startswith("/_bench/"):
                if path == "/_bench/reset":
                    stats.reset()
                until = dict(pair.split(b"=", 1) for pair in scope["query_string"].split(b"&")
                             if b"=" in pair).get(b"until")
                body = json.dumps(stats.as_dict(float(until) if until else None)).encode()
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return wrapped


# ---------------------------------------------------------------- server side: the three apps


class BenchModel:
    """A `Model` that replies with exactly `before` text deltas and one `add_item` call, then,
    once the tool result is in, exactly `after` text deltas."""

    name = "bench"

    def __init__(self, before: int, after: int) -> None:
        self.before = before
        self.after = after

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        from pyox_agents.models.base import TextChunk, ToolCallChunk

        messages = request.messages
        if messages and messages[-1].role == "tool":
            for _ in range(self.after):
                yield TextChunk(WORD)
            return
        text = next(m.content for m in reversed(messages) if m.role == "user")
        for _ in range(self.before):
            yield TextChunk(WORD)
        yield ToolCallChunk(index=0, name="add_item")
        yield ToolCallChunk(index=0, arguments=json.dumps({"text": text}))


class PacedModel:
    """A `Model` that mostly waits, as real models do: `tokens` text deltas `pace` seconds
    apart (an asyncio sleep before each), no tool call. Each delta names the run and its
    index, `<user text>t<i> `, so a client can check that every token arrived, in order."""

    name = "paced"

    def __init__(self, tokens: int, pace: float) -> None:
        self.tokens = tokens
        self.pace = pace

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        from pyox_agents.models.base import TextChunk

        text = next(m.content for m in reversed(request.messages) if m.role == "user")
        for i in range(self.tokens):
            await asyncio.sleep(self.pace)
            yield TextChunk(f"{text}t{i} ")


class RealisticModel:
    """A `Model` as a real one behaves, for the realistic bench: the first reply asks for two
    tools at once (`lookup`, a sync tool that blocks 5 ms, and `reserve`, an async tool that
    awaits 20 ms; both change the shared state), the second streams `tokens` text deltas
    `pace` seconds apart, each naming its index."""

    name = "realistic"

    def __init__(self, tokens: int, pace: float) -> None:
        self.tokens = tokens
        self.pace = pace

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        from pyox_agents.models.base import TextChunk, ToolCallChunk

        messages = request.messages
        text = next(m.content for m in reversed(messages) if m.role == "user")
        if messages and messages[-1].role == "tool":
            for i in range(self.tokens):
                await asyncio.sleep(self.pace)
                yield TextChunk(f"t{i} ")
            return
        yield ToolCallChunk(index=0, name="lookup", arguments=json.dumps({"text": text}))
        yield ToolCallChunk(index=1, name="reserve", arguments=json.dumps({"text": text}))


REALISTIC_BLOCK = 0.005
"""What the realistic bench's sync tool blocks (a database query)."""
REALISTIC_AWAIT = 0.020
"""What its async tool awaits (a call to another service)."""


def _realistic_tools() -> list[Any]:
    from pyox_agents import RunContext, tool

    @tool
    def lookup(ctx: RunContext, text: str) -> str:
        """Look `text` up (a query that blocks 5 ms), noting it in the shared state."""
        time.sleep(REALISTIC_BLOCK)
        ctx.state["items"].append(text)
        return "found"

    @tool
    async def reserve(ctx: RunContext, text: str) -> str:
        """Reserve `text` (a call that awaits 20 ms), noting it in the shared state."""
        await asyncio.sleep(REALISTIC_AWAIT)
        ctx.state["reserved"] = text
        return "reserved"

    return [lookup, reserve]


def _paced() -> tuple[int, float]:
    return int(os.environ.get("BENCH_TOKENS", "200")), float(os.environ.get("BENCH_PACE_MS",
                                                                                "20")) / 1000


def _ours_agent() -> Any:
    from pyox_agents import Agent, RunContext, tool

    @tool
    def add_item(ctx: RunContext, text: str) -> str:
        """Append `text` to the shared list."""
        ctx.state["items"].append(text)
        return "added"

    if os.environ.get("BENCH_MODEL") == "paced":
        return Agent(PacedModel(*_paced()), name=AGENT)
    if os.environ.get("BENCH_MODEL") == "realistic":
        return Agent(RealisticModel(*_paced()), tools=_realistic_tools(), name=AGENT)
    before, after = _workload()
    return Agent(BenchModel(before, after), tools=[add_item], name=AGENT)


def ours_app() -> Any:
    """Our server: `create_app({"bench": agent})`, no store, no limit on concurrent runs."""
    import inspect

    from pyox_agents.server import create_app

    options: dict[str, Any] = {}
    if "limits" in inspect.signature(create_app).parameters:  # a burst of 1,000 runs, one user
        from pyox_agents.service import ServerLimits

        options["limits"] = ServerLimits(runs_total=None, runs_per_principal=None)
    if "tune_gc" in inspect.signature(create_app).parameters:  # as `pyox-agents serve` does
        options["tune_gc"] = True
    if os.environ.get("BENCH_REDIS"):  # shared by every process serving this app
        from pyox_agents.stores.redis import RedisStore

        options["store"] = RedisStore(os.environ["BENCH_REDIS"])
    return instrument(create_app({AGENT: _ours_agent()}, **options))


def pai_app() -> Any:
    """pydantic-ai's `AGUIAdapter` with a `FunctionModel` streaming the same deltas."""
    from ag_ui.core import StateSnapshotEvent
    from pydantic import BaseModel
    from pydantic_ai import Agent, RunContext, ToolReturn
    from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
    from pydantic_ai.ui import StateDeps
    from pydantic_ai.ui.ag_ui import AGUIAdapter
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    before, after = _workload()

    class Items(BaseModel):
        items: list[str] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        last = messages[-1]
        if isinstance(last, ModelRequest) and any(
            isinstance(part, ToolReturnPart) for part in last.parts
        ):
            for _ in range(after):
                yield WORD
            return
        text = next(
            part.content for message in reversed(messages) if isinstance(message, ModelRequest)
            for part in message.parts if isinstance(part, UserPromptPart)
        )
        for _ in range(before):
            yield WORD
        yield {0: DeltaToolCall(name="add_item", json_args=json.dumps({"text": text}))}

    agent: Agent[StateDeps[Items], str] = Agent(
        FunctionModel(stream_function=stream), deps_type=StateDeps[Items]
    )

    @agent.tool
    def add_item(ctx: RunContext[StateDeps[Items]], text: str) -> ToolReturn:
        """Append `text` to the shared list."""
        ctx.deps.state.items.append(text)
        return ToolReturn(
            return_value="added",
            metadata=[StateSnapshotEvent(snapshot=ctx.deps.state.model_dump())],
        )

    async def run(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent, deps=StateDeps(Items()))

    return instrument(Starlette(routes=[Route(AG_UI_PATH, run, methods=["POST"])]))


PLACEHOLDER_TEXT = "zzTEXTzz"
PLACEHOLDER_THREAD = "zzTHREADzz"
PLACEHOLDER_RUN = "zzRUNzz"


async def our_frames() -> list[bytes]:
    """The SSE frames our AG-UI server sends for one run on the placeholder thread/run/text."""
    from pyox_agents import ag_ui

    body = run_input(PLACEHOLDER_THREAD, PLACEHOLDER_RUN, PLACEHOLDER_TEXT)
    return [frame async for frame in ag_ui.encode(ag_ui.stream(_ours_agent(), body))]


def floor_app() -> Any:
    """The floor: a bare Starlette endpoint yielding our AG-UI frames, pre-encoded once."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # uvicorn calls us in its loop
        frames = pool.submit(asyncio.run, our_frames()).result()
    marks = (PLACEHOLDER_TEXT.encode(), PLACEHOLDER_THREAD.encode(), PLACEHOLDER_RUN.encode())
    patched = {i for i, frame in enumerate(frames) if any(m in frame for m in marks)}

    async def run(request: Request) -> StreamingResponse:
        body = json.loads(await request.body())
        values = (json.dumps(body["messages"][-1]["content"])[1:-1].encode(),
                  body["threadId"].encode(), body["runId"].encode())

        async def send() -> AsyncIterator[bytes]:
            for index, frame in enumerate(frames):
                if index in patched:
                    for mark, value in zip(marks, values, strict=True):
                        frame = frame.replace(mark, value)
                yield frame

        return StreamingResponse(send(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    return instrument(Starlette(routes=[Route(AG_UI_PATH, run, methods=["POST"])]))


# ---------------------------------------------------------------- client side


def run_input(thread_id: str, run_id: str, text: str) -> dict[str, Any]:
    """An AG-UI RunAgentInput body: one user message, state {"items": []}."""
    return {"threadId": thread_id, "runId": run_id, "state": {"items": []},
            "messages": [{"id": f"m-{run_id}", "role": "user", "content": text}],
            "tools": [], "context": [], "forwardedProps": {}}


def with_history(body: dict[str, Any], count: int) -> dict[str, Any]:
    """`body` with `count` earlier messages (200 characters each, user and assistant in turn)
    before its own: what a CopilotKit client sends, the whole conversation every time."""
    key = body["runId"]
    history = [{"id": f"h{i}-{key}", "role": "assistant" if i % 2 else "user",
                "content": (f"message {i} of the conversation so far; " * 8)[:200]}
               for i in range(count)]
    return {**body, "messages": [*history, *body["messages"]]}


def ai_sdk_body(chat_id: str, text: str) -> dict[str, Any]:
    """An AI SDK `DefaultChatTransport` body: one user message, state {"items": []}."""
    return {"id": chat_id, "trigger": "submit-message", "state": {"items": []},
            "messages": [{"id": f"m-{chat_id}", "role": "user",
                          "parts": [{"type": "text", "text": text}]}]}


@dataclass
class RunResult:
    """What one client saw of one run."""

    ok: bool = False
    status: int = 0
    events: int = 0
    nbytes: int = 0
    ttfe: float = float("nan")
    total: float = float("nan")
    state: Any = None
    last: str = ""
    error: str = ""


def dechunk(raw: bytes) -> bytes:
    """The body of a chunked HTTP/1.1 response (`raw` is the bytes after the headers)."""
    out = bytearray()
    pos = 0
    while True:
        end = raw.index(b"\r\n", pos)
        size = int(raw[pos:end].split(b";")[0], 16)
        if size == 0:
            return bytes(out)
        out += raw[end + 2:end + 2 + size]
        pos = end + 2 + size + 2


def _apply_state(frame: bytes, state: Any) -> Any:
    """The shared state after `frame` (AG-UI STATE_SNAPSHOT/DELTA, AI SDK data-state)."""
    import jsonpatch

    payload = json.loads(frame[6:])
    kind = payload.get("type")
    if kind == "STATE_SNAPSHOT":
        return payload["snapshot"]
    if kind == "STATE_DELTA":
        return jsonpatch.apply_patch(state, payload["delta"])
    if kind == "data-state":
        return payload["data"]
    return state


async def read_run(client: Any, url: str, body: dict[str, Any], started: float) -> RunResult:
    """POST `body`, read the SSE stream to its end; frames are split on blank lines by hand
    (cheaper than `aiter_lines`); only state frames and the last frame are parsed."""
    result = RunResult()
    state: Any = None
    buffer = b""
    last = b""
    try:
        async with client.stream("POST", url, json=body) as response:
            result.status = response.status_code
            async for chunk in response.aiter_raw():
                result.nbytes += len(chunk)
                buffer += chunk
                if b"\n\n" not in buffer:
                    continue
                *frames, buffer = buffer.split(b"\n\n")
                for frame in frames:
                    if frame.startswith(b"id:"):  # the frame's SSE id, then its data
                        frame = frame[frame.find(b"\n") + 1:]
                    if not frame.startswith(b"data:"):
                        continue  # a keep-alive comment
                    if result.events == 0:
                        result.ttfe = time.perf_counter() - started
                    result.events += 1
                    if b'"STATE_' in frame[:40] or b'"data-state"' in frame[:40]:
                        state = _apply_state(frame, state)
                    last = frame
        result.total = time.perf_counter() - started
        result.state = state
        result.last = _kind(last)
        result.ok = result.status == 200 and result.last in ("RUN_FINISHED", "[DONE]")
        if not result.ok:
            result.error = f"status {result.status}, last frame {last[:120]!r}"
    except Exception as exc:  # counted as an error, reported with its type
        result.error = f"{type(exc).__name__}: {exc}"
    return result


def _kind(frame: bytes) -> str:
    if frame == b"data: [DONE]":
        return "[DONE]"
    try:
        return str(json.loads(frame[6:]).get("type", ""))
    except ValueError:
        return ""


# ---------------------------------------------------------------- server processes


@dataclass
class Server:
    """A uvicorn process serving `common:<factory>` on 127.0.0.1:`port`, pinned to `cpu`."""

    factory: str
    port: int
    cpu: int | str = 0
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    loop: str = field(default_factory=lambda: os.environ.get("BENCH_LOOP", "asyncio"))
    """uvicorn's `--loop`: asyncio (the default) or uvloop; env BENCH_LOOP."""
    http: str = field(default_factory=lambda: os.environ.get("BENCH_HTTP", "h11"))
    """uvicorn's `--http`: h11 (the default) or httptools; env BENCH_HTTP."""
    workers: int = 1
    """uvicorn worker processes (`--workers`); above 1, `cpu` may be "0,1"."""
    serve: bool = False
    """Serve `served:app` (the factory's app, `ours_app`) with `pyox-agents serve --workers`
    instead of uvicorn's command: each worker a socket of its own (`loop` and `http` as
    given)."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "Server":
        factory = self.factory if ":" in self.factory else f"common:{self.factory}"
        where = ["--host", "127.0.0.1", "--port", str(self.port), "--workers", str(self.workers),
                 "--loop", self.loop, "--http", self.http]
        if self.serve:
            assert self.factory == "ours_app", "served.py serves ours_app only"
            server = ["pyox_agents.server.cli", "serve", "served:app", *where, "--grace", "5"]
        else:
            server = ["uvicorn", "--factory", factory, "--app-dir", str(BENCH_DIR), *where,
                      "--log-level", "warning", "--no-access-log"]
        command = ["taskset", "-c", str(self.cpu), sys.executable, "-m", *server]
        # BENCH_LIBRARY=/path/to/copy measures a patched copy of pyox_agents (profile notes)
        env = {**os.environ, "PYTHONPATH": os.environ.get("BENCH_LIBRARY", str(ROOT)), **self.env}
        # cwd is not ROOT: `-m` puts the cwd first on sys.path, before BENCH_LIBRARY
        self.proc = subprocess.Popen(command, env=env, cwd=BENCH_DIR)
        deadline = time.monotonic() + 60
        import httpx

        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server {self.factory} exited with {self.proc.returncode}")
            try:
                httpx.get(self.url + "/_bench/stats", timeout=1.0)
                return self
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"server {self.factory} did not start in 60 s") from None
                time.sleep(0.1)

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def cpu_seconds(self) -> float:
        """CPU time of the server so far, all threads: the scheduler's ns counter
        (/proc/PID/task/*/schedstat), since psutil's user+sys ticks are 10 ms apart, too coarse
        for one 60 ms run; psutil is the fallback where schedstat is missing."""
        assert self.proc is not None
        try:
            return sum(process_cpu_seconds(pid) for pid in self.pids())
        except (OSError, ValueError):
            import psutil

            times = psutil.Process(self.proc.pid).cpu_times()
            return times.user + times.system

    def pids(self) -> list[int]:
        """The server process and, with `workers` > 1, its worker processes."""
        assert self.proc is not None
        if self.workers == 1:
            return [self.proc.pid]
        import psutil

        parent = psutil.Process(self.proc.pid)
        return [self.proc.pid, *(child.pid for child in parent.children(recursive=True))]

    def psutil_cpu_seconds(self) -> float:
        """user+sys of the server by psutil (10 ms ticks), to cross-check `cpu_seconds`."""
        import psutil

        assert self.proc is not None
        times = psutil.Process(self.proc.pid).cpu_times()
        return times.user + times.system

    def memory(self) -> tuple[float, float]:
        """(VmRSS, VmHWM) of the server, MiB."""
        assert self.proc is not None
        values = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                values[line.split(":")[0]] = int(line.split()[1]) / 1024
        return values["VmRSS"], values["VmHWM"]


class Background:
    """CPU used on the machine by processes other than this one and `server` while measuring:
    other people's tests on the same 2 cores make every figure noisier."""

    def __init__(self, servers: Sequence["Server"]) -> None:
        self.servers = servers

    def __enter__(self) -> "Background":
        import psutil

        self._start = self._now(psutil)
        return self

    def _now(self, psutil: Any) -> tuple[float, float, float]:
        total = psutil.cpu_times()
        busy = total.user + total.nice + total.system + total.irq + total.softirq
        mine = time.process_time() + sum(s.psutil_cpu_seconds() for s in self.servers)
        return busy, mine, time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        import psutil

        busy, mine, wall = self._now(psutil)
        self.other_cpu = max(0.0, (busy - self._start[0]) - (mine - self._start[1]))
        self.wall = wall - self._start[2]

    @property
    def share(self) -> float:
        """Other processes' CPU as a share of the machine's 2 cores over the measurement."""
        return self.other_cpu / (self.wall * (os.cpu_count() or 1))


def process_cpu_seconds(pid: int) -> float:
    """CPU seconds of process `pid` so far, all its threads: the scheduler's ns counter
    (/proc/PID/task/*/schedstat)."""
    return sum(int((task / "schedstat").read_text().split()[0])
               for task in Path(f"/proc/{pid}/task").iterdir()) / 1e9


def pin_self(cpu: int) -> None:
    """Pin this (client) process to `cpu`, when the machine has it."""
    if cpu < (os.cpu_count() or 1):
        os.sched_setaffinity(0, {cpu})


# ---------------------------------------------------------------- tables


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def spread(values: Sequence[float]) -> str:
    """min–max as a percentage of the median, e.g. "±4%"."""
    if len(values) < 2:
        return "n=1"
    mid = statistics.median(values)
    return f"{(max(values) - min(values)) / 2 / mid * 100:.0f}%" if mid else "-"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def write_section(name: str, text: str, path: Path = BENCH_DIR / "results.md") -> None:
    """Replace (or add) the section `## name` of results.md with `text`."""
    old = path.read_text() if path.exists() else "# Bench results\n"
    start_mark = f"<!-- {name}:start -->"
    end_mark = f"<!-- {name}:end -->"
    block = f"{start_mark}\n## {name}\n\n{text.rstrip()}\n{end_mark}\n"
    if start_mark in old and end_mark in old:
        before, rest = old.split(start_mark, 1)
        after = rest.split(end_mark, 1)[1].lstrip("\n")
        new = before + block + ("\n" + after if after else "")
    else:
        new = old.rstrip("\n") + "\n\n" + block
    path.write_text(new)


Timed = Callable[[], float]
