"""Runs that mostly wait: N streams open at once in one server process, each a model streaming
`--tokens` tokens `--pace` ms apart (200 tokens 20 ms apart by default), as real models do.

Targets, each a fresh uvicorn process (asyncio + h11) pinned to CPU 0, this client on CPU 1:
- ours: `create_app` over AG-UI, the agent's model a `PacedModel` (an asyncio sleep before each
  token), no tool, state `{"items": []}`;
- floor: a bare Starlette `StreamingResponse` writing the same AG-UI frames on the same pacing
  (start frames, one TEXT_MESSAGE_CONTENT per token, end frames);
- pai: pydantic-ai's `AGUIAdapter` with a `FunctionModel` that sleeps the same way, at the counts
  of `--pai-sizes` (it needs 20-30x our CPU per event, so it survives fewer).
`--protocol ai-sdk`: ours over its AI SDK route (`useChat`'s request), the floor writing the
UI message stream's frames (start, the state part, one `text-delta` per token, finish, `[DONE]`).

The client is a bare asyncio HTTP/1.1 client (`Connection: close`), one connection per run, all
started together. Per burst: memory per open run = (the server's peak RSS, VmHWM, minus its RSS
when idle after a warm-up) / N, and the same with its RSS when the first run ends instead of the
peak, which comes as the runs end (every run is still open then; near its last token only if the
server kept the pace, see the run length); server
CPU per token = server CPU over the burst / (N x tokens);
the longest event-loop stall in the steady state (the max lateness of a 10 ms timer in the
server, from when every run has had its first token to when a run first has its last one),
and beside it the same to the burst's end (the runs' ends, which come together, included); every
token delivered, in order, in every run; and the median run length against the paced ideal
(tokens x pace: above it, the server could not keep the pace). Rounds interleave the targets;
figures are medians over rounds, each as a ratio to the floor's of the same N.

Run: .venv/bin/python bench/paced_streams.py [--sizes 1000,10000] [--rounds 2] [--quick]
                                             [--protocol ai-sdk]
"""

import argparse
import asyncio
import json
import os
import re
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    AG_UI_PATH,
    AI_SDK_PATH,
    Server,
    _paced,
    ai_sdk_body,
    dechunk,
    instrument,
    median,
    pin_self,
    run_input,
    spread,
    table,
    with_history,
    write_section,
)

TARGETS = {"ours": "ours_app", "floor": "paced_streams:floor_app", "pai": "paced_streams:pai_app"}
LABELS = {"ours": "ours (AG-UI)", "floor": "floor: bare Starlette",
          "pai": "pydantic-ai AGUIAdapter"}


# ---------------------------------------------------------------- server side


def floor_app() -> Any:
    """A bare Starlette endpoint writing an AG-UI stream of paced tokens, frames formatted by
    hand: the least a server can do for these streams (with `BENCH_PROTOCOL=ai-sdk`, an AI SDK
    UI message stream at `AI_SDK_PATH` instead)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    tokens, pace = _paced()
    if os.environ.get("BENCH_PROTOCOL") == "ai-sdk":
        return _ai_sdk_floor(tokens, pace)

    async def run(request: Request) -> StreamingResponse:
        body = json.loads(await request.body())
        thread, run_id = body["threadId"], body["runId"]
        text = body["messages"][-1]["content"]
        head = (f'data: {{"type":"RUN_STARTED","threadId":"{thread}","runId":"{run_id}"}}\n\n'
                f'data: {{"type":"STATE_SNAPSHOT","snapshot":{json.dumps(body["state"])}}}\n\n'
                'data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n\n')

        async def send() -> AsyncIterator[bytes]:
            yield head.encode()
            for i in range(tokens):
                await asyncio.sleep(pace)
                yield (f'data: {{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":'
                       f'"{text}t{i} "}}\n\n').encode()
            yield (f'data: {{"type":"TEXT_MESSAGE_END","messageId":"m"}}\n\n'
                   f'data: {{"type":"RUN_FINISHED","threadId":"{thread}","runId":"{run_id}"}}'
                   '\n\n').encode()

        return StreamingResponse(send(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    return instrument(Starlette(routes=[Route(AG_UI_PATH, run, methods=["POST"])]))


def _ai_sdk_floor(tokens: int, pace: float) -> Any:
    """`floor_app` for the AI SDK: start, the state part, a text's start, one `text-delta` per
    token, its end, finish, `[DONE]`, as `useChat` reads them."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    async def run(request: Request) -> StreamingResponse:
        body = json.loads(await request.body())
        chat = body["id"]
        text = body["messages"][-1]["parts"][0]["text"]
        head = (f'data: {{"type":"start","messageId":"msg_{chat}"}}\n\n'
                f'data: {{"type":"data-state","id":"state","data":{json.dumps(body["state"])}}}'
                '\n\ndata: {"type":"start-step"}\n\ndata: {"type":"text-start","id":"m"}\n\n')

        async def send() -> AsyncIterator[bytes]:
            yield head.encode()
            for i in range(tokens):
                await asyncio.sleep(pace)
                yield f'data: {{"type":"text-delta","id":"m","delta":"{text}t{i} "}}\n\n'.encode()
            yield (b'data: {"type":"text-end","id":"m"}\n\ndata: {"type":"finish-step"}\n\n'
                   b'data: {"type":"finish","finishReason":"stop"}\n\ndata: [DONE]\n\n')

        return StreamingResponse(send(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache",
                                          "x-vercel-ai-ui-message-stream": "v1"})

    return instrument(Starlette(routes=[Route(AI_SDK_PATH, run, methods=["POST"])]))


def pai_app() -> Any:
    """pydantic-ai's AGUIAdapter; its FunctionModel streams the paced tokens."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.ui.ag_ui import AGUIAdapter
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    tokens, pace = _paced()

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        text = next(part.content for message in reversed(messages)
                    if isinstance(message, ModelRequest) for part in message.parts
                    if isinstance(part, UserPromptPart))
        for i in range(tokens):
            await asyncio.sleep(pace)
            yield f"{text}t{i} "

    agent = Agent(FunctionModel(stream_function=stream))

    async def run(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    return instrument(Starlette(routes=[Route(AG_UI_PATH, run, methods=["POST"])]))


# ---------------------------------------------------------------- client side


class Burst:
    """N paced runs started together; when every run has its first token, `all_started` is set;
    when the first run ends, `first_ended`; `last_token` notes when a run first had its last
    token. Each request carries `history` earlier messages."""

    def __init__(self, port: int, n: int, tokens: int, history: int = 0,
                 protocol: str = "ag-ui") -> None:
        self.port = port
        self.n = n
        self.tokens = tokens
        self.history = history
        self.protocol = protocol
        self.started = 0
        self.all_started = asyncio.Event()
        self.first_ended = asyncio.Event()
        self.last_token: float | None = None
        """When a run first had its last token (`time.monotonic()`): the steady state's end."""

    async def one(self, text: str) -> tuple[str, float]:
        """One run: '' or what was wrong, and its length in seconds."""
        key = uuid.uuid4().hex
        if self.protocol == "ai-sdk":
            path, body = AI_SDK_PATH, ai_sdk_body(f"c-{key}", text)
        else:
            path, body = AG_UI_PATH, with_history(run_input(f"t-{key}", f"r-{key}", text),
                                                  self.history)
        payload = json.dumps(body).encode()
        begin = time.perf_counter()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port, limit=2**20)
        except OSError as exc:
            self._count_start()
            return f"connect: {exc}", 0.0
        writer.write(b"POST %s HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                     b"accept: text/event-stream\r\nconnection: close\r\ncontent-length: %d\r\n\r\n"
                     % (path.encode(), len(payload)) + payload)
        mark, last = f"{text}t0 ".encode(), f"{text}t{self.tokens - 1} ".encode()
        data = bytearray()
        counted = False
        try:
            while chunk := await reader.read(65536):
                data += chunk
                if not counted and mark in data:
                    counted = True
                    self._count_start()
                if self.last_token is None and last in data[-len(chunk) - len(last):]:
                    self.last_token = time.monotonic()
        except OSError as exc:
            return f"read: {exc}", 0.0
        finally:
            writer.close()
            if not counted:
                self._count_start()
        self.first_ended.set()
        return self._check(bytes(data), text), time.perf_counter() - begin

    def _count_start(self) -> None:
        self.started += 1
        if self.started == self.n:
            self.all_started.set()

    def _check(self, data: bytes, text: str) -> str:
        head, _, rest = data.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            return f"status {head[:40]!r}"
        if b"transfer-encoding: chunked" in head.lower():
            rest = dechunk(rest)
        # the deltas, in order, come first (a final message snapshot may repeat the text)
        seen = [int(i) for i in re.findall(re.escape(text).encode() + rb"t(\d+) ", rest)]
        seen = seen[:self.tokens]
        if seen != list(range(self.tokens)):
            return f"tokens {len(seen)} of {self.tokens}, in order: {seen == sorted(seen)}"
        end = b"data: [DONE]" if self.protocol == "ai-sdk" else b'"RUN_FINISHED"'
        if end not in rest.rstrip().rsplit(b"\n\n", 1)[-1][:60]:
            return f"no {end.decode()} at the end"
        return ""


async def run_burst(server: Server, n: int, tokens: int, budget: float, history: int = 0,
                    protocol: str = "ag-ui"
                    ) -> tuple[list[tuple[str, float]], dict[str, Any], float]:
    """The runs' results, the server's stats of the steady state (`whole_late_ms`: the
    longest stall from the steady state's start to the burst's end, the runs' ends included),
    the wall time."""
    burst = Burst(server.port, n, tokens, history, protocol)
    steady: dict[str, Any] = {}
    done = asyncio.Event()

    async def watch() -> None:
        async with httpx.AsyncClient(timeout=60) as client:
            await burst.all_started.wait()
            await client.post(server.url + "/_bench/reset")
            await burst.first_ended.wait()
            # the stall up to the first run's last token: the ends that follow (hundreds of
            # runs in a few loop turns) are not the steady state, and the server may serve
            # this request only after them
            steady.update((await client.get(server.url + "/_bench/stats", params={
                "until": burst.last_token or time.monotonic()})).json())
            await done.wait()
            steady["whole_late_ms"] = (await client.get(server.url + "/_bench/stats")
                                       ).json()["whole_late_ms"]

    watcher = asyncio.create_task(watch())
    start = time.perf_counter()
    texts = [f"p{i}x{uuid.uuid4().hex[:4]}" for i in range(n)]
    try:
        async with asyncio.timeout(budget):
            results = await asyncio.gather(*(burst.one(text) for text in texts))
    except TimeoutError:
        results = [(f"over {budget:.0f} s", 0.0)] * n
    wall = time.perf_counter() - start
    done.set()
    try:
        async with asyncio.timeout(30):
            await watcher
    except (TimeoutError, httpx.HTTPError):
        watcher.cancel()
    return results, steady, wall


def measure(target: str, n: int, port: int, tokens: int, pace_ms: float,
            timeout: float, history: int = 0, protocol: str = "ag-ui") -> dict[str, Any]:
    env = {"BENCH_MODEL": "paced", "BENCH_TOKENS": str(tokens), "BENCH_PACE_MS": str(pace_ms),
           "BENCH_PROTOCOL": protocol}
    with Server(TARGETS[target], port, env=env) as server:
        results, _, _ = asyncio.run(run_burst(server, 5, tokens, 120, history,
                                              protocol))  # warm-up
        if any(error for error, _ in results):
            raise RuntimeError(f"warm-up of {target} failed: {results[0][0]}")
        idle, _ = server.memory()
        cpu = server.cpu_seconds()
        load = os.getloadavg()[0]
        results, steady, wall = asyncio.run(run_burst(server, n, tokens, timeout, history,
                                                      protocol))
        cpu = server.cpu_seconds() - cpu
        _, peak = server.memory()
    errors = [error for error, _ in results if error]
    return {"target": target, "n": n, "mem_kib": (peak - idle) * 1024 / n,
            "open_kib": (steady.get("rss_mib", float("nan")) - idle) * 1024 / n,
            "cpu_us_token": cpu / (n * tokens) * 1e6, "stall_ms": steady.get("max_late_ms",
                                                                              float("nan")),
            "whole_ms": steady.get("whole_late_ms", float("nan")),
            "gc_max_ms": steady.get("gc_max_ms", float("nan")),
            "run_s": median([length for error, length in results if not error]),
            "wall": wall, "errors": len(errors), "first_error": errors[0] if errors else "",
            "load": load, "idle": idle, "peak": peak}


def report(rows: list[dict[str, Any]], args: Any) -> str:
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["target"], row["n"]), []).append(row)

    def med(target: str, n: int, key: str) -> float:
        return median([r[key] for r in groups.get((target, n), [])])

    ideal = args.tokens * args.pace / 1000
    out = []
    for n in sorted({r["n"] for r in rows}):
        for target in TARGETS:
            group = groups.get((target, n))
            if not group:
                continue
            mem, cpu = med(target, n, "mem_kib"), med(target, n, "cpu_us_token")
            held = med(target, n, "open_kib")
            out.append([
                LABELS[target].replace("AG-UI", "AI SDK") if args.protocol == "ai-sdk"
                else LABELS[target], f"{n:,}", len(group), f"{mem:.1f}",
                f"{mem / med('floor', n, 'mem_kib'):.2f}x",
                f"{held:.1f} ({held / med('floor', n, 'open_kib'):.2f}x)",
                f"{cpu:.1f}", spread([r["cpu_us_token"] for r in group]),
                f"{cpu / med('floor', n, 'cpu_us_token'):.2f}x",
                f"{med(target, n, 'stall_ms'):.0f} (max "
                f"{max(r['stall_ms'] for r in group):.0f})",
                f"{med(target, n, 'whole_ms'):.0f}",
                f"{med(target, n, 'gc_max_ms'):.0f}",
                f"{med(target, n, 'run_s') / ideal:.2f}x",
                f"{med(target, n, 'load'):.1f}",
                sum(r["errors"] for r in group),
            ])
    lines = [table(["server", "open runs", "bursts", "memory per open run KiB",
                    "vs floor", "while all are open KiB (vs floor)", "server CPU per token µs",
                    "spread", "vs floor",
                    "longest loop stall, steady state ms",
                    "with the runs' ends ms", "longest GC pause ms",
                    f"run length / ideal ({ideal:g} s)", "load average before",
                    "errors (missing or out-of-order tokens included)"], out), ""]
    sizes = sorted({r["n"] for r in rows if r["target"] == "ours"})
    if sizes and all(groups.get(("floor", n)) for n in sizes):
        mem = {n: med("ours", n, "mem_kib") / med("floor", n, "mem_kib") for n in sizes}
        held = {n: med("ours", n, "open_kib") / med("floor", n, "open_kib") for n in sizes}
        cpu = {n: med("ours", n, "cpu_us_token") / med("floor", n, "cpu_us_token")
               for n in sizes}
        stall = max(r["stall_ms"] for r in rows if r["target"] == "ours")
        lines.append(
            "Goals (ours): memory per open run ≤ 1.5x the floor's: "
            + ", ".join(f"{n:,} {r:.2f}x" for n, r in mem.items())
            + f" ({'met' if all(r <= 1.5 for r in mem.values()) else 'NOT met'}; while all are "
            "open: " + ", ".join(f"{n:,} {r:.2f}x" for n, r in held.items()) + "); CPU per token "
            "≤ 1.5x the floor's: " + ", ".join(f"{n:,} {r:.2f}x" for n, r in cpu.items())
            + f" ({'met' if all(r <= 1.5 for r in cpu.values()) else 'NOT met'}); longest "
            f"stall < 50 ms: {stall:.0f} ms ({'met' if stall < 50 else 'NOT met'}); every token "
            f"in order: {sum(r['errors'] for r in rows if r['target'] == 'ours')} runs wrong.")
        if len(sizes) > 1:
            lines.append(f"Flat from {sizes[0]:,} to {sizes[-1]:,}: CPU per token "
                         f"{med('ours', sizes[-1], 'cpu_us_token') / med('ours', sizes[0], 'cpu_us_token'):.2f}x, "  # noqa: E501
                         f"memory per run {med('ours', sizes[-1], 'mem_kib') / med('ours', sizes[0], 'mem_kib'):.2f}x.")  # noqa: E501
    said = (f" every request carries {args.history} earlier messages of 200 characters, as a "
            "CopilotKit client sends the whole conversation each time;" if args.history else "")
    lines.append(
        f"\n{args.tokens} tokens {args.pace:g} ms apart per run;{said} server "
        "(uvicorn asyncio + h11) "
        "on CPU 0, the client on CPU 1; a fresh server per burst, 5 warm-up runs. \"While all are "
        "open\": the RSS when the first run ends, beside the peak, which comes as the runs end "
        "(where the run length is far above the ideal, many runs had streamed little by then). "
        "Run length / "
        "ideal above 1: the server (or the client) could not keep the pace, so the runs were "
        "open longer than paced. Load average column: what else ran on the 2 cores.")
    firsts = [f"{r['target']} {r['n']}: {r['first_error']}" for r in rows if r["first_error"]]
    if firsts:
        lines.append("First error per failing burst: " + "; ".join(firsts[:6]))
    lines.append("\nCommand: `.venv/bin/python bench/paced_streams.py "
                 + " ".join(sys.argv[1:]) + "`")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--pai-sizes", default="1000", help="the counts pydantic-ai runs at")
    parser.add_argument("--targets", default="ours,floor,pai")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--pace", type=float, default=20.0, help="ms between tokens")
    parser.add_argument("--timeout", type=float, default=300.0, help="per burst, seconds")
    parser.add_argument("--history", type=int, default=0,
                        help="earlier messages in every request (the goals are at 0)")
    parser.add_argument("--protocol", choices=["ag-ui", "ai-sdk"], default="ag-ui",
                        help="ai-sdk: ours over its AI SDK route, the floor writing a UI "
                             "message stream (no pydantic-ai)")
    parser.add_argument("--quick", action="store_true", help="1,000 runs, one round")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.rounds, args.pai_sizes = "1000", 1, "1000"
    if args.protocol == "ai-sdk":
        if args.history:
            parser.error("--history is for AG-UI requests (a CopilotKit client's)")
        args.targets = ",".join(t for t in args.targets.split(",") if t != "pai")
    pin_self(1)
    rows = []
    port = 19100
    for round_ in range(args.rounds):
        for n in [int(s) for s in args.sizes.split(",")]:
            for target in args.targets.split(","):
                if target == "pai" and (round_ > 0 or str(n) not in args.pai_sizes.split(",")):
                    continue
                port += 1
                row = measure(target, n, port, args.tokens, args.pace, args.timeout,
                              args.history, args.protocol)
                rows.append(row)
                print(f"{target:>5} N={n:<6} mem {row['mem_kib']:6.1f} KiB/run (open "
                      f"{row['open_kib']:.1f})  cpu "
                      f"{row['cpu_us_token']:6.1f} µs/token  stall {row['stall_ms']:5.0f} ms "
                      f"(ends {row['whole_ms']:.0f})  "
                      f"run {row['run_s']:.1f} s  wall {row['wall']:.1f} s  errors "
                      f"{row['errors']} {row['first_error']}  load {row['load']:.1f}",
                      flush=True)
    text = report(rows, args)
    print(text)
    if not args.no_write:
        write_section("paced streams" + (", AI SDK" if args.protocol == "ai-sdk" else "")
                      + (f", {args.history} messages of history" if args.history else ""), text)


if __name__ == "__main__":
    main()
