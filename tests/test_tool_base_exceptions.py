"""What a tool raises that is not an `Exception` and not a cancel (`SystemExit` from argparse or
`sys.exit`, `KeyboardInterrupt`, `GeneratorExit`, a `BaseException` of its own) fails that call
with the public message the model reads, is logged, and the run and the server go on. A cancel
and a person's question (`PersonNeeded`, a `BaseException` too) keep their meaning."""

from __future__ import annotations

import json
import logging
import textwrap
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import pytest

from pyox_agents import Agent, tool
from pyox_agents.events import RunFinished
from pyox_agents.models import FunctionModel, ToolCall
from pyox_agents.tools import Tool
from tests.runs import collect, results
from tests.test_cli import _serve

pytestmark = pytest.mark.anyio


class _OwnStop(BaseException):
    """A library's own `BaseException`, as some use for control flow."""


def _raising(kind: BaseException, *, sync: bool) -> Tool:
    if sync:
        def fail() -> str:
            """Fail in a worker thread."""
            raise kind
        return tool(name="fail")(fail)

    async def afail() -> str:
        """Fail on the loop."""
        raise kind
    return tool(name="fail")(afail)


def _calling(name: str, arguments: dict[str, Any] | None = None) -> FunctionModel:
    def reply(messages: list[Any], tools: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "went on"
        return ToolCall(name, arguments or {})

    return FunctionModel(reply)


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize("kind", [SystemExit(2), KeyboardInterrupt(), GeneratorExit(),
                                  _OwnStop("stop")], ids=lambda k: type(k).__name__)
async def test_a_tool_that_raises_a_base_exception_fails_that_call_and_the_run_goes_on(
        kind: BaseException, sync: bool, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="pyox_agents"):
        events = await collect(Agent(model=_calling("fail"), tools=[_raising(kind, sync=sync)]))
    (result,) = results(events).values()
    name = type(kind).__name__
    assert result.error == (f"the tool failed with an unexpected {name}; the server's log has "
                            "the details")
    assert isinstance(events[-1], RunFinished) and events[-1].answer == "went on"
    assert any(f"raised {name}, which would have ended the process" in record.getMessage()
               for record in caplog.records)


async def test_a_cancel_still_stops_the_run_not_the_call() -> None:
    """Rule: a cancel (here the caller's deadline) is not a tool's failure: it goes on up."""

    @tool
    async def wait() -> str:
        """Wait for ever."""
        await anyio.sleep_forever()
        return "never"

    with anyio.move_on_after(0.2) as scope:
        await collect(Agent(model=_calling("wait"), tools=[wait]))
    assert scope.cancelled_caught


def test_a_tool_that_exits_does_not_end_the_server(tmp_path: Path) -> None:
    """Rule: `pyox-agents serve` goes on after a tool raised `SystemExit` (argparse on a bad
    command line, `sys.exit` in an async tool): the run ends, /healthz answers, and the next
    request runs."""
    (tmp_path / "exiting.py").write_text(textwrap.dedent("""
        import argparse
        import sys

        from pyox_agents import Agent, tool
        from pyox_agents.models import FunctionModel, ToolCall

        @tool
        def grep(command_line: str) -> str:
            \"\"\"Run grep's command line.\"\"\"
            parser = argparse.ArgumentParser(prog="grep")
            parser.add_argument("pattern")
            return str(parser.parse_args(command_line.split()))

        @tool
        async def leave() -> str:
            \"\"\"Leave.\"\"\"
            sys.exit("bye")

        def reply(messages, tools):
            if messages[-1].role == "tool":
                return "went on"
            if "leave" in messages[-1].content:
                return ToolCall("leave", {})
            return ToolCall("grep", {"command_line": "--no-such-flag"})

        agent = Agent(model=FunctionModel(reply), tools=[grep, leave], name="exiting")
    """))
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    for proc, base in _serve(["serve", "exiting:agent"], tmp_path, env):
        for turn, text in enumerate(["grep it", "leave now", "grep again"]):
            frames = _run(base, f"t{turn}", text)
            kinds = [frame["type"] for frame in frames]
            assert kinds[-1] == "RUN_FINISHED", kinds
            (result,) = [frame for frame in frames if frame["type"] == "TOOL_CALL_RESULT"]
            assert "the tool failed with an unexpected SystemExit" in result["content"]
            with urllib.request.urlopen(base + "/healthz", timeout=5) as response:
                assert json.load(response) == {"ok": True}
        assert proc.poll() is None


def _run(base: str, thread: str, text: str) -> list[dict[str, Any]]:
    body = {"threadId": thread, "runId": f"r-{thread}", "state": {}, "tools": [],
            "context": [], "forwardedProps": {},
            "messages": [{"id": f"m-{thread}", "role": "user", "content": text}]}
    request = urllib.request.Request(f"{base}/agents/exiting/ag-ui",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json",
                                              "Accept": "text/event-stream"})
    with urllib.request.urlopen(request, timeout=20) as response:
        stream = response.read().decode()
    return [json.loads(line[len("data: "):]) for line in stream.splitlines()
            if line.startswith("data: ")]

