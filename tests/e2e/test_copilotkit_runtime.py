"""The CopilotKit runtime as production apps deploy it, in front of our server, from Chromium.

"The CopilotKit runtime as production apps deploy it: a Node `@copilotkit/runtime` endpoint
(`CopilotRuntime` with an `HttpAgent` pointing at our server) in front of the server, driven
from Chromium by `<CopilotKit runtimeUrl=...>`: chat, a frontend tool, an interrupt, shared
state. CI installs it from the pinned lock file." And, with the repository's runner
(clients/copilotkit-runtime, `PyoxAgentRunner`), the server is the truth of the runtime's
threads: the page lists the person's threads, gets its thread back after a reload (messages,
state, a pending approval) and follows a run going on, across restarts of the runtime, and
its stop button stops the run on the server.

tests/e2e/copilotkit_runtime/ holds its own package.json and lock: `@copilotkit/runtime`
1.75.0, `@copilotkit/react-core` 1.74.0 (the v2 components), React 19.2.4, and the
repository's `@pyox-agents/copilotkit-runtime` (`file:` the checkout's clients/, installed as
a copy: `.npmrc` `install-links`, as it would come from the registry). The runtime's agent is
`@ag-ui/client`'s `HttpAgent` as the runtime bundles it, 0.0.59 (the strict 0.0.x schemas, no
`protocolVersion`). `runtime.ts` is the "Production setup" block of docs/guides/copilotkit.md,
word for word; `server.ts` serves it under /api/copilotkit next to the built page
(page/App.tsx), on one origin. Each test starts our server (uvicorn on 127.0.0.1), that Node
server pointed at it, and Debian's Chromium driven by playwright-core (`drive.mjs`), and
asserts what the person sees. A rules-based model answers, so runs are deterministic. The page
must ask nothing of any host but its own.
"""

from __future__ import annotations

import asyncio
import fcntl
import filecmp
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from starlette.responses import JSONResponse

from pyox_agents import Agent, Message, RunContext, Tool, ToolCall, tool
from pyox_agents.models import FunctionModel
from pyox_agents.server import bearer_tokens, create_app
from pyox_agents.stores import MemoryStore
from tests.e2e.browser_runs import run_browser_script

HERE = Path(__file__).resolve().parent
PACKAGE = HERE / "copilotkit_runtime"
ARTIFACTS = HERE / "artifacts"
GUIDE = HERE.parents[1] / "docs" / "guides" / "copilotkit.md"
CLIENT = HERE.parents[1] / "clients" / "copilotkit-runtime"
"""The repository's runner package; node_modules holds a copy of it (`install-links`)."""
CLIENT_FILES = ["package.json", "index.js", "index.d.ts", "README.md"]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SOURCES = ["runtime.ts", "server.ts", "tsconfig.json", "tsconfig.server.json", "vite.config.ts",
           "package-lock.json", "page"]

# The first test also installs (`npm ci`, ~800 MB) and builds the package.
pytestmark = pytest.mark.timeout(600)


# The agent: a todo list and orders in the shared state, an approval before an order, and the
# page's `change_background` frontend tool. A rules-based model answers.


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo to the list."""
    ctx.state["todos"] = [*ctx.state.get("todos", []), {"text": text, "done": False}]
    return f"added {text}"


@tool
def list_todos(ctx: RunContext) -> str:
    """The todos on the list, comma-separated."""
    return ", ".join(todo["text"] for todo in ctx.state.get("todos", []))


@tool(approval=True)
def place_order(ctx: RunContext) -> str:
    """Place an order (a person approves it first)."""
    orders = [*ctx.state.get("orders", [])]
    ctx.state["orders"] = [*orders, f"order {len(orders) + 1}"]
    return "ordered"


class Gate:
    """Holds `work_slowly` until the test opens it: once per opening, so that each slow run
    waits. `reached()` waits until a run is held there (the server has the run). Used in the
    server's event loop only."""

    def __init__(self) -> None:
        self._events: tuple[asyncio.Event, asyncio.Event] | None = None

    def _pair(self) -> tuple[asyncio.Event, asyncio.Event]:
        if self._events is None:  # made in the loop that uses them
            self._events = (asyncio.Event(), asyncio.Event())
        return self._events

    async def wait(self) -> None:
        opened, held = self._pair()
        held.set()
        await opened.wait()
        opened.clear()

    async def reached(self) -> None:
        _, held = self._pair()
        await asyncio.wait_for(held.wait(), timeout=20)
        held.clear()

    def open(self) -> None:
        self._pair()[0].set()


def slow_tool(gate: Gate) -> Tool:
    """`work_slowly`: a tool that works until the test opens `gate` (a run that goes on while
    the page reloads, or until the person stops it)."""

    @tool
    async def work_slowly(ctx: RunContext) -> str:
        """Do a long piece of work."""
        await gate.wait()
        return "worked"

    return work_slowly


def _tool_name(messages: list[Message], call_id: str | None) -> str:
    for message in messages:
        for call in message.tool_calls:
            if call.id == call_id:
                return call.name
    raise AssertionError(f"no tool call {call_id} in the conversation")


def rules(messages: list[Message], tools: list[Any]) -> Any:
    """What the model answers: a fixed reply or tool call per phrase, then a reply per result."""
    last = messages[-1]
    if last.role == "tool":
        name = _tool_name(messages, last.call_id)
        return {
            "change_background": "The background is teal now.",
            "add_todo": "Added buy milk.",
            "list_todos": f"Your todos: {last.content}.",
            "place_order": "Your order is placed." if last.content == "ordered" else "Not ordered.",
            "work_slowly": "Done slowly.",
        }[name]
    said = last.content.strip().lower()
    if said == "hello":
        return "Hello from pyox-agents, through the CopilotKit runtime."
    if said == "make the background teal":
        assert "change_background" in [t.name for t in tools], "the page's tool was not sent"
        return ToolCall("change_background", {"color": "teal"})
    if said.startswith("add "):
        return ToolCall("add_todo", {"text": said.removeprefix("add ")})
    if said == "list my todos":
        return ToolCall("list_todos", {})
    if said == "check out":
        return ToolCall("place_order", {})
    if said == "work slowly":
        return ToolCall("work_slowly", {})
    return f"I do not know how to answer {said!r}."


def todo_agent(gate: Gate | None = None) -> Agent:
    """The agent the runtime's `HttpAgent` reaches at /agents/todo/ag-ui (with `work_slowly`
    held by `gate`, if given)."""
    tools = [add_todo, list_todos, place_order, *([slow_tool(gate)] if gate else [])]
    return Agent(FunctionModel(rules), tools=tools, name="todo")


# The Node package: installed from its lock, built (tsc type-checks runtime.ts and the page).


def _locked(name: str) -> Any:
    lock = (Path(tempfile.gettempdir()) / f"pyox-ckruntime-{name}.lock").open("w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


def _newest(paths: list[Path]) -> float:
    files = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file()]
    return max(f.stat().st_mtime for f in files)


def _npm(npm: str, *args: str) -> None:
    proc = subprocess.run([npm, *args], cwd=PACKAGE, capture_output=True, text=True,
                          timeout=900, check=False)
    if proc.returncode != 0:
        pytest.fail(f"`npm {' '.join(args)}` in {PACKAGE} failed ({proc.returncode}):\n"
                    f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}",
                    pytrace=False)


def _refresh_client_copy() -> bool:
    """Copy the runner package from clients/ over its installed copy when they differ (as a
    fresh `npm ci` would: `npm ci` runs only when the lock changes); whether it did."""
    installed = PACKAGE / "node_modules" / "@pyox-agents" / "copilotkit-runtime"
    stale = [name for name in CLIENT_FILES if (CLIENT / name).exists() and not (
        (installed / name).exists() and filecmp.cmp(CLIENT / name, installed / name,
                                                    shallow=False))]
    for name in stale:
        shutil.copyfile(CLIENT / name, installed / name)
    return bool(stale)


@pytest.fixture(scope="session")
def runtime_package() -> Path:
    """node_modules installed from package-lock.json (`npm ci` when missing or older), the
    runner package's copy refreshed from clients/, then `npm run build` (tsc for runtime.ts,
    server.ts and the page, vite for the page) when a source is newer than the build."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.fail("Node >= 20 and npm are needed for the CopilotKit runtime tests",
                    pytrace=False)
    with _locked("npm"):
        marker = PACKAGE / "node_modules" / ".package-lock.json"
        if not marker.exists() or marker.stat().st_mtime < (PACKAGE / "package-lock.json").stat(
        ).st_mtime:
            _npm(npm, "ci", "--no-audit", "--no-fund")
        refreshed = _refresh_client_copy()
        built = [PACKAGE / "out" / "server.js", PACKAGE / "dist" / "index.html"]
        if refreshed or not all(p.exists() for p in built) or min(
                p.stat().st_mtime for p in built) < _newest([PACKAGE / name for name in SOURCES]):
            _npm(npm, "run", "build")
    return PACKAGE


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium (.ci/run installs it with apt-get)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium is not at {CHROMIUM}: `apt-get install chromium` (or set "
                    "CHROMIUM to its path)", pytrace=False)
    return CHROMIUM


class NodeRuntime:
    """The Node runtime process (out/server.js), which serves the page too; `restart()` stops
    it and starts a new one on the same port (a deploy, a crash): nothing of the old one's
    memory is left."""

    def __init__(self, package: Path, server: str) -> None:
        self.package = package
        self.server = server
        self.log: list[str] = []
        """What the runtime processes printed (stdout and stderr), in order."""
        self.url = ""
        self._proc: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None

    def start(self, port: int = 0) -> None:
        env = {**os.environ, "PYOX_AGENTS_URL": self.server, "PORT": str(port),
               "COPILOTKIT_TELEMETRY_DISABLED": "true", "DO_NOT_TRACK": "1"}
        proc = subprocess.Popen(["node", "out/server.js"], cwd=self.package, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        self._proc = proc
        for line in proc.stdout:  # its first JSON line says where it listens
            self.log.append(line)
            if line.startswith('{"url"'):
                break
        else:
            proc.wait(timeout=10)
            pytest.fail(f"the Node runtime did not start ({proc.returncode}):\n"
                        f"{''.join(self.log)}", pytrace=False)
        self.url = json.loads(self.log[-1])["url"]
        # Reads what it logs once it listens, so that a full pipe never blocks it.
        self._reader = threading.Thread(target=self.log.extend, args=(proc.stdout,), daemon=True)
        self._reader.start()

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        if self._reader is not None:
            self._reader.join(timeout=5)
        assert proc.stdout is not None
        proc.stdout.close()

    def restart(self) -> None:
        port = int(self.url.rsplit(":", 1)[1])
        self.log.append("--- restarted ---\n")
        self.stop()
        self.start(port)


@dataclass(frozen=True)
class Front:
    """The Node runtime (which serves the page too) and our server behind it."""

    page: str
    server: str
    log: list[str]
    """What the Node runtime printed (stdout and stderr)."""
    control: str = ""
    """Where drive.mjs asks the test for `await-work`, `open-gate` and `restart-runtime`
    (`with_controls`)."""


RuntimeFor = Callable[..., Front]


def with_controls(app: Any, controls: dict[str, Callable[[], Awaitable[None]]]) -> Any:
    """`app`, with `POST /test/<name>` doing `controls[name]` (for drive.mjs: wait for a run in
    `work_slowly`, open its gate, restart the runtime); everything else, lifespan included, is
    `app`'s."""

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        name = scope["path"].removeprefix("/test/") if scope["type"] == "http" else ""
        if scope["type"] == "http" and scope["path"].startswith("/test/") and name in controls:
            await controls[name]()
            await JSONResponse({"done": name})(scope, receive, send)
            return
        await app(scope, receive, send)

    return asgi


@pytest.fixture
def runtime_for(serve: Callable[[Any], str], runtime_package: Path) -> Iterator[RuntimeFor]:
    """``runtime_for(app, gate=None) -> Front``: `app` served by uvicorn, and the Node
    CopilotKit runtime in front of it (PYOX_AGENTS_URL), which also serves the page. With
    `gate`, the server also answers drive.mjs's `POST /test/await-work` (a run is held in
    `work_slowly`), `/test/open-gate` and `/test/restart-runtime`. Everything stops when the
    test ends."""
    started: list[NodeRuntime] = []

    def start(app: Any, gate: Gate | None = None) -> Front:
        runtimes: list[NodeRuntime] = []

        async def restart() -> None:
            await anyio.to_thread.run_sync(runtimes[0].restart)

        async def open_gate() -> None:
            assert gate is not None
            gate.open()

        async def await_work() -> None:
            assert gate is not None
            await gate.reached()

        controls = {"open-gate": open_gate, "await-work": await_work,
                    "restart-runtime": restart} if gate else {}
        server = serve(with_controls(app, controls) if controls else app)
        runtime = NodeRuntime(runtime_package, server)
        runtimes.append(runtime)
        started.append(runtime)
        runtime.start()
        return Front(page=runtime.url, server=server, log=runtime.log,
                     control=f"{server}/test" if controls else "")

    try:
        yield start
    finally:
        for runtime in started:
            runtime.stop()


@pytest.fixture
def runtime_in_front(runtime_for: RuntimeFor) -> Front:
    """The runtime in front of our server serving the todo agent (no auth)."""
    return runtime_for(create_app({"todo": todo_agent()}, store=MemoryStore()))


def drive(front: Front, scenario: str, chromium: str, query: str = "") -> dict[str, Any]:
    """Run one scenario of drive.mjs in Chromium on the page at `front` (+ `query`); its JSON
    report."""
    args = [front.page + query, scenario, str(ARTIFACTS), *([front.control] if front.control
                                                            else [])]
    result = run_browser_script(PACKAGE / "drive.mjs", args, chromium, cwd=PACKAGE)
    assert result["ok"], (
        f"{scenario}: failed after {result['steps']}: {result['error']}\n"
        f"browser console errors: {result['consoleErrors']}\nscreenshot: {result['screenshot']}"
        f"\n--- the Node runtime printed ---\n{''.join(front.log)}"
    )
    assert result["offsite"] == [], f"the page asked other hosts: {result['offsite']}"
    assert result["consoleErrors"] == [], f"the browser console: {result['consoleErrors']}"
    return result


def test_chat_through_the_runtime_shows_the_agents_answer(runtime_in_front: Front,
                                                          chromium: str) -> None:
    """A message typed in `<CopilotChat>` goes page -> runtime -> our server, and the agent's
    text answer appears in the chat."""
    result = drive(runtime_in_front, "chat", chromium)
    assert result["steps"] == ["page loaded", "text answer shown"]


def test_a_frontend_tool_runs_in_the_page_and_the_run_continues(runtime_in_front: Front,
                                                                chromium: str) -> None:
    """`useFrontendTool` registers `change_background`; the agent calls it, the page runs it
    (the background turns teal), and the follow-up run answers from its result."""
    result = drive(runtime_in_front, "frontend-tool", chromium)
    assert result["steps"][-2:] == ["the page ran change_background",
                                    "the run continued with the tool's result"]


def test_an_approval_interrupt_is_answered_in_the_page_and_the_run_resumes(
        runtime_in_front: Front, chromium: str) -> None:
    """An `approval=True` tool ends the run with an interrupt; `useInterrupt` renders it, the
    person approves, and the run resumes (same runId, through the runtime): the order appears
    in the shared state and the agent confirms it."""
    result = drive(runtime_in_front, "interrupt", chromium)
    assert result["steps"][-2:] == ["approval shown", "approved: the run resumed and completed"]


def test_the_server_keeps_the_pages_threads_across_reloads_and_runtime_restarts(
        runtime_for: RuntimeFor, chromium: str) -> None:
    """With `PyoxAgentRunner` and its hooks, in one browser session (ann's token): the page's
    thread list (`useThreads`) shows ann's thread, not bob's; ann closes the tab mid-run, the
    runtime restarts, and the thread opened again has its messages and state back and follows
    the run to its end; the runtime restarts while an approval waits, and the reloaded page
    shows it again and Approve resumes the run; the stop button stops a run on the server."""
    gate = Gate()
    app = create_app({"todo": todo_agent(gate)}, store=MemoryStore(),
                     auth=bearer_tokens({"tok-ann": "ann", "tok-bob": "bob"}))
    front = runtime_for(app, gate)
    bobs = httpx.post(f"{front.server}/agents/todo/ag-ui", json={
        "threadId": "bobs", "runId": "r1", "state": {}, "tools": [], "context": [],
        "forwardedProps": {}, "messages": [{"id": "m1", "role": "user", "content": "bob's plans"}],
    }, headers={"Authorization": "Bearer tok-bob"})
    assert bobs.status_code == 200, bobs.text
    result = drive(front, "production", chromium, query="/?thread=ck-ann&token=tok-ann")
    assert result["steps"] == [
        "page loaded", "the thread list shows the person's threads only",
        "reopened mid-run after a runtime restart: messages and state back, the run followed "
        "to its end",
        "reloaded while paused after a runtime restart: the approval shown again",
        "approved: the run resumed and completed", "stopped: the run ended"]
    history = httpx.get(f"{front.server}/threads/ck-ann/history",
                        headers={"Authorization": "Bearer tok-ann"}).json()
    assert [run["status"] for run in history["runs"]] == [
        "completed", "completed", "completed", "stopped"]
    assert front.log.count("--- restarted ---\n") == 2


def test_shared_state_flows_both_ways_through_the_runtime(runtime_in_front: Front,
                                                          chromium: str) -> None:
    """`useAgent` shows the todo a tool added; the person's edit (`agent.setState`) reaches the
    next run, whose tool reads both todos."""
    result = drive(runtime_in_front, "shared-state", chromium)
    assert result["steps"][-3:] == ["the tool's change shown by useAgent",
                                    "the person added a todo",
                                    "the next run saw the person's edit"]


def test_the_pages_authorization_reaches_the_server_through_the_runtime(
        runtime_for: RuntimeFor, chromium: str) -> None:
    """`<CopilotKit headers={{Authorization: ...}}>` goes to the runtime, which forwards
    `authorization` to the agent's requests by default: with `create_app(auth=bearer_tokens(...))`
    the thread belongs to the person whose token the page sent, and is not found for another."""
    app = create_app({"todo": todo_agent()}, store=MemoryStore(),
                     auth=bearer_tokens({"tok-ann": "ann", "tok-bob": "bob"}))
    front = runtime_for(app)
    result = drive(front, "chat", chromium, query="/?token=tok-ann")
    thread = f"{front.server}/threads/{result['threadId']}"
    for_ann = httpx.get(thread, headers={"Authorization": "Bearer tok-ann"})
    assert for_ann.status_code == 200, for_ann.text
    assert "Hello from pyox-agents" in for_ann.text
    assert httpx.get(thread, headers={"Authorization": "Bearer tok-bob"}).status_code == 404


def test_the_runner_serves_the_runtimes_routes_from_the_server(
        serve: Callable[[Any], str], runtime_package: Path) -> None:
    """runner.test.mjs: `PyoxAgentRunner` and its hooks in the real runtime's fetch handler
    (no browser), against our server with ann's and bob's tokens: `/info` offers the thread
    routes; a run is the caller's thread; a new runtime (a restart) connects to it (messages,
    state); bob gets a 404 for it; rename, archive, restore, delete and the list's pages reach
    the server as the caller; `includeArchived` lists the archived threads too, flagged; a stop
    with no run; the page's own hooks run first; a stop that names a run (`runId`, through the
    hooks or the runtime's own route and `stop`) stops that run, and one that names the
    thread's run that ended leaves the next one going."""
    gate = Gate()
    app = create_app({"todo": todo_agent(gate)}, store=MemoryStore(),
                     auth=bearer_tokens({"tok-ann": "ann", "tok-bob": "bob"}))
    server = serve(with_controls(app, {"await-work": gate.reached}))
    env = {**os.environ, "PYOX_AGENTS_URL": server, "PYOX_AGENTS_CONTROL": f"{server}/test",
           "COPILOTKIT_TELEMETRY_DISABLED": "true", "DO_NOT_TRACK": "1"}
    proc = subprocess.run(["node", "--test", "runner.test.mjs"], cwd=runtime_package, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, f"{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
    counts = dict(re.findall(r"^# (tests|pass) (\d+)$", proc.stdout, re.M))
    assert counts.get("tests") == counts.get("pass") != "0", proc.stdout[-3000:]


def test_the_runtime_runs_the_ag_ui_client_it_pins(runtime_package: Path) -> None:
    """The `HttpAgent` in front of our server is the one `@copilotkit/runtime` 1.75.0 resolves:
    `@ag-ui/client` 0.0.59."""
    script = ("const {createRequire} = require('node:module');"
              "const r = createRequire(require.resolve('@copilotkit/runtime/package.json'));"
              "const v = (p) => r(p + '/package.json').version;"
              "console.log(JSON.stringify({runtime: v('@copilotkit/runtime'), "
              "client: v('@ag-ui/client')}))")
    proc = subprocess.run(["node", "-e", script], cwd=runtime_package, capture_output=True,
                          text=True, timeout=30, check=True)
    assert json.loads(proc.stdout) == {"runtime": "1.75.0", "client": "0.0.59"}


def test_the_guides_production_setup_is_the_runtime_the_tests_run() -> None:
    """The guide's "Production setup: the CopilotKit runtime" block is runtime.ts word for
    word: the code these tests run, type-checked by `npm run build` (tsc --strict) against the
    runtime's own pinned packages."""
    guide = GUIDE.read_text(encoding="utf-8")
    section = guide.split("## Production setup: the CopilotKit runtime", 1)
    assert len(section) == 2, f"{GUIDE} has no 'Production setup: the CopilotKit runtime' part"
    blocks = re.findall(r"```ts\n(.*?)```", section[1].split("\n## ", 1)[0], re.S)
    assert blocks, "the production setup part has no ts block"
    assert blocks[0] == (PACKAGE / "runtime.ts").read_text(encoding="utf-8")
