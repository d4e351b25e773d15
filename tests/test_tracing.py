"""OpenTelemetry spans of runs (`pyox_agents.tracing`), read from the SDK's in-memory exporter:
their names, parents and attributes follow the GenAI semantic conventions, failures are recorded
on the span where they happened, and content is recorded only when the app opts in."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import pyox_agents.tracing
from pyox_agents import Agent, RunContext, RunFailedError, RunFinished, tool
from pyox_agents.models import FunctionModel, Message, ScriptedModel, ToolCall
from pyox_agents.stores import MemoryStore


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Tracing on, into an in-memory exporter, for one test."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    pyox_agents.tracing.enable(provider)
    yield exporter
    pyox_agents.tracing.disable()
    provider.shutdown()


def _named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def _one(exporter: InMemorySpanExporter, name: str) -> ReadableSpan:
    found = _named(exporter, name)
    names = [s.name for s in exporter.get_finished_spans()]
    assert len(found) == 1, f"expected one span {name!r}, got {names}"
    return found[0]


def _parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def _id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo."""
    ctx.state["todos"].append(text)
    return f"added {text}"


def _todo_agent(**kwargs: Any) -> Agent:
    model = FunctionModel(
        lambda messages, tools: "done" if messages[-1].role == "tool"
        else ToolCall("add_todo", {"text": "milk"}, id="c1"),
        name="openai:gpt-5-mini",
    )
    return Agent(model, tools=[add_todo], name="planner", **kwargs)


def test_a_run_is_an_invoke_agent_span_with_chat_and_tool_spans_under_it(
    spans: InMemorySpanExporter,
) -> None:
    """Issue: "`invoke_agent {agent}` per run, `chat {model}` per model request,
    `execute_tool {tool}` per call, with `gen_ai.operation.name`, `gen_ai.agent.name`,
    `gen_ai.conversation.id` (the thread id), `gen_ai.tool.call.id`,
    `gen_ai.usage.input_tokens/output_tokens`, the request model"."""
    result = _todo_agent().run("plan", state={"todos": []})
    run = _one(spans, "invoke_agent planner")
    chats = _named(spans, "chat gpt-5-mini")
    call = _one(spans, "execute_tool add_todo")
    assert len(chats) == 2
    assert {_parent_of(s) for s in [*chats, call]} == {_id(run)}
    assert run.parent is None
    assert run.attributes is not None and dict(run.attributes) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "planner",
        "gen_ai.conversation.id": result.conversation.id,
        "gen_ai.request.model": "gpt-5-mini",
        "gen_ai.provider.name": "openai",
        "gen_ai.usage.input_tokens": result.usage.input_tokens,
        "gen_ai.usage.output_tokens": result.usage.output_tokens,
        "pyox_agents.run.id": result.run_id,
        "pyox_agents.run.resumed": False,
        "pyox_agents.run.outcome": "success",
    }
    assert call.attributes is not None and dict(call.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add_todo",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.type": "function",
        "gen_ai.conversation.id": result.conversation.id,
        "pyox_agents.tool.outcome": "ok",
    }
    first = chats[0].attributes
    assert first is not None
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.request.model"] == "gpt-5-mini"
    assert first["gen_ai.conversation.id"] == result.conversation.id
    assert first["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert chats[0].kind is SpanKind.CLIENT
    assert sum(s.attributes["gen_ai.usage.output_tokens"] for s in chats  # type: ignore[index,misc]
               ) == result.usage.output_tokens
    assert all(s.status.status_code is StatusCode.UNSET for s in [run, *chats, call])


def test_a_chat_span_ends_after_the_model_reply_and_before_the_tool_span_starts(
    spans: InMemorySpanExporter,
) -> None:
    """The spans are in the order the run did things: decide, then call the tool."""
    _todo_agent().run("plan", state={"todos": []})
    first = _named(spans, "chat gpt-5-mini")[0]
    call = _one(spans, "execute_tool add_todo")
    assert first.end_time is not None and call.start_time is not None
    assert first.end_time <= call.start_time


def test_a_model_failure_is_recorded_on_the_chat_span_and_fails_the_run_span(
    spans: InMemorySpanExporter,
) -> None:
    """Issue: "errors recorded on the span"."""
    agent = Agent(ScriptedModel([]), name="empty")
    with pytest.raises(RunFailedError):
        agent.run("hi")
    chat = _one(spans, "chat scripted")
    run = _one(spans, "invoke_agent empty")
    assert chat.status.status_code is StatusCode.ERROR
    assert chat.attributes is not None
    assert chat.attributes["error.type"] == "pyox_agents.models.scripted.ScriptExhausted"
    assert [e.name for e in chat.events] == ["exception"]
    assert run.status.status_code is StatusCode.ERROR
    assert run.status.description is not None and "ran out of replies" in run.status.description
    assert run.attributes is not None
    assert run.attributes["error.type"] == "script_exhausted"
    assert run.attributes["pyox_agents.run.outcome"] == "failed"


def test_a_tool_that_raises_records_its_error_on_its_span_only(
    spans: InMemorySpanExporter,
) -> None:
    """A tool's error is an error result the model reads: its span is an error, the run's not."""

    @tool
    def explode(ctx: RunContext) -> str:
        """Fail."""
        raise ValueError("no such city")

    Agent(ScriptedModel([ToolCall("explode", {}, id="x1"), "sorry"]), tools=[explode]).run("go")
    call = _one(spans, "execute_tool explode")
    run = _one(spans, "invoke_agent")
    assert call.status.status_code is StatusCode.ERROR
    assert call.status.description == "ValueError: no such city"
    assert call.attributes is not None
    assert call.attributes["error.type"] == "builtins.ValueError"
    assert call.attributes["pyox_agents.tool.outcome"] == "error"
    assert run.status.status_code is StatusCode.UNSET
    assert run.attributes is not None and "gen_ai.agent.name" not in run.attributes


CONTENT = ("gen_ai.input.", "gen_ai.output.", "gen_ai.system_instructions",
           "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")


def test_content_is_recorded_only_when_the_app_opts_in(spans: InMemorySpanExporter) -> None:
    """Issue: "Message content only when the user opts in"."""
    _todo_agent(instructions="You keep todos.").run("plan my trip", state={"todos": []})
    for span in spans.get_finished_spans():
        assert span.attributes is not None
        recorded = {k for k in span.attributes if k.startswith(CONTENT)}
        assert not recorded, f"{span.name} recorded content without capture_content: {recorded}"


def test_opted_in_content_has_the_messages_the_model_saw_and_answered() -> None:
    """With `capture_content=True`, chat spans carry `gen_ai.system_instructions`,
    `gen_ai.input.messages` and `gen_ai.output.messages`, tool spans the call's arguments and
    result, as the GenAI conventions write them (JSON of role and parts)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    pyox_agents.tracing.enable(provider, capture_content=True)
    try:
        _todo_agent(instructions="You keep todos.").run("plan my trip", state={"todos": []})
    finally:
        pyox_agents.tracing.disable()
    first, second = _named(exporter, "chat gpt-5-mini")
    call = _one(exporter, "execute_tool add_todo")
    assert first.attributes is not None and second.attributes is not None
    assert json.loads(str(first.attributes["gen_ai.system_instructions"])) == [
        {"type": "text", "content": "You keep todos."}]
    assert json.loads(str(first.attributes["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": "plan my trip"}]}]
    assert json.loads(str(first.attributes["gen_ai.output.messages"])) == [
        {"role": "assistant", "finish_reason": "tool_call", "parts": [
            {"type": "tool_call", "id": "c1", "name": "add_todo", "arguments": {"text": "milk"}}]}]
    assert json.loads(str(second.attributes["gen_ai.input.messages"]))[-1] == {
        "role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                   "response": "added milk"}]}
    assert call.attributes is not None
    assert json.loads(str(call.attributes["gen_ai.tool.call.arguments"])) == {"text": "milk"}
    assert call.attributes["gen_ai.tool.call.result"] == "added milk"


def test_a_subagent_run_nests_under_the_tool_call_that_started_it(
    spans: InMemorySpanExporter,
) -> None:
    """Brief: "Subagent runs nest under the tool span that started them"."""
    researcher = Agent(ScriptedModel(["found it in b.py"]), name="researcher")
    model = ScriptedModel([ToolCall("researcher", {"task": "find the bug"}, id="r1"), "done"])
    result = Agent(model, tools=[researcher.as_tool()], name="lead").run("go")
    lead = _one(spans, "invoke_agent lead")
    call = _one(spans, "execute_tool researcher")
    sub = _one(spans, "invoke_agent researcher")
    sub_chat = [s for s in _named(spans, "chat scripted") if _parent_of(s) == _id(sub)]
    assert _parent_of(call) == _id(lead)
    assert _parent_of(sub) == _id(call)
    assert len(sub_chat) == 1
    assert sub.context is not None and lead.context is not None
    assert sub.context.trace_id == lead.context.trace_id
    assert sub.attributes is not None
    child_ids = [c for c in result.conversation._children]
    assert sub.attributes["gen_ai.conversation.id"] in child_ids


def test_a_paused_run_ends_its_span_saying_so_and_its_resume_is_a_span_of_its_own(
    spans: InMemorySpanExporter,
) -> None:
    """Brief: "A paused (approval) run ends its span with an attribute saying so; the resume
    is its own `invoke_agent` span"."""

    @tool(approval=True)
    def pay(ctx: RunContext, amount: int) -> str:
        """Pay."""
        return f"paid {amount}"

    def decide(messages: list[Message], tools: list[Any]) -> Any:
        return "paid" if messages[-1].role == "tool" else ToolCall("pay", {"amount": 3}, id="p1")

    agent = Agent(FunctionModel(decide), tools=[pay], name="cashier", store=MemoryStore())
    paused = agent.run("pay it")
    assert isinstance(paused.events[-1], RunFinished)
    first = _one(spans, "invoke_agent cashier")
    assert first.attributes is not None
    assert first.attributes["pyox_agents.run.outcome"] == "interrupt"
    assert first.attributes["pyox_agents.run.paused"] is True
    assert first.attributes["pyox_agents.run.pending_call_id"] == "p1"
    assert first.status.status_code is StatusCode.UNSET
    waiting = _one(spans, "execute_tool pay")
    assert waiting.attributes is not None
    assert waiting.attributes["pyox_agents.tool.outcome"] == "paused"
    spans.clear()
    agent.resume(paused.run_id, approve=True)
    resumed = _one(spans, "invoke_agent cashier")
    assert resumed.attributes is not None
    assert resumed.attributes["pyox_agents.run.resumed"] is True
    assert resumed.attributes["pyox_agents.run.id"] == paused.run_id
    assert resumed.attributes["pyox_agents.run.outcome"] == "success"
    assert _parent_of(_one(spans, "execute_tool pay")) == _id(resumed)


def test_an_apps_own_span_is_the_parent_of_the_run(spans: InMemorySpanExporter) -> None:
    """A span the app has open when it runs the agent (a request's, say) is the run's parent."""
    from opentelemetry import trace

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    with trace.get_tracer("app", tracer_provider=provider).start_as_current_span("request"):
        Agent(ScriptedModel(["hi"]), name="greeter").run("hello")
    assert _parent_of(_one(spans, "invoke_agent greeter")) == _id(_one(spans, "request"))


def test_after_disable_runs_make_no_spans(spans: InMemorySpanExporter) -> None:
    pyox_agents.tracing.disable()
    assert not pyox_agents.tracing.enabled()
    Agent(ScriptedModel(["hi"])).run("hello")
    assert spans.get_finished_spans() == ()


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=60, check=False)


def test_tracing_off_imports_nothing_of_opentelemetry() -> None:
    """Issue: "Off by default, no cost when off" (and "nothing of it imported unless used")."""
    done = _python("""
        import sys
        import pyox_agents, pyox_agents.tracing, pyox_agents.server
        from pyox_agents import Agent
        from pyox_agents.models import ScriptedModel
        Agent(ScriptedModel(["hi"])).run("hello")
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_enabling_without_the_extra_says_what_to_install() -> None:
    """Issue: "errors that say what to do (... missing extra ...)"."""
    done = _python("""
        import sys
        sys.modules["opentelemetry"] = None   # as if opentelemetry-api were not installed
        import pyox_agents.tracing
        try:
            pyox_agents.tracing.enable()
        except ImportError as exc:
            print(exc)
    """)
    assert done.returncode == 0, done.stderr
    assert "pip install 'pyox-agents[otel]'" in done.stdout
    assert "OpenTelemetry API" in done.stdout


def test_parallel_tool_calls_are_each_a_child_of_their_run(spans: InMemorySpanExporter) -> None:
    """The calls of one reply run at once, in tasks of their own: each span still has the
    run's span as its parent."""

    @tool
    async def one(ctx: RunContext) -> str:
        """One."""
        return "1"

    @tool
    async def two(ctx: RunContext) -> str:
        """Two."""
        return "2"

    calls = [ToolCall("one", {}, id="a"), ToolCall("two", {}, id="b")]
    Agent(ScriptedModel([calls, "done"]), tools=[one, two], name="both").run("go")
    run = _one(spans, "invoke_agent both")
    assert _parent_of(_one(spans, "execute_tool one")) == _id(run)
    assert _parent_of(_one(spans, "execute_tool two")) == _id(run)


@pytest.mark.anyio
async def test_a_cancelled_run_ends_its_spans_saying_so(spans: InMemorySpanExporter) -> None:
    """Breaking out of `agent.stream` cancels the run: its span and the running call's end,
    with status ERROR and `error.type` "cancelled"."""
    import anyio

    @tool
    async def wait(ctx: RunContext) -> str:
        """Wait for ever."""
        await anyio.sleep_forever()
        return "never"

    agent = Agent(ScriptedModel([ToolCall("wait", {}, id="w1")]), tools=[wait], name="waiter")
    events = agent.stream("go")
    async for event in events:
        if type(event).__name__ == "ToolCallEnded":
            break
    await events.aclose()  # type: ignore[attr-defined]
    run = _one(spans, "invoke_agent waiter")
    call = _one(spans, "execute_tool wait")
    for span in (run, call):
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes is not None and span.attributes["error.type"] == "cancelled"
    assert run.attributes is not None and run.attributes["pyox_agents.run.outcome"] == "cancelled"


@pytest.mark.anyio
async def test_a_served_runs_conversation_id_is_the_ag_ui_thread_id(
    spans: InMemorySpanExporter,
) -> None:
    """Issue: "`gen_ai.conversation.id` (the thread id)", as a client names it."""
    import httpx

    from pyox_agents.server import create_app
    from tests.ag_ui.servers import post_run, serving

    app = create_app({"greeter": Agent(ScriptedModel(["hi"]), name="greeter")})
    body = {"threadId": "thread-7", "runId": "r1", "protocolVersion": "1.0",
            "messages": [{"id": "u1", "role": "user", "content": "hello"}]}
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as http:
        response, _ = await post_run(http, "/agents/greeter/ag-ui", body)
    assert response.status_code == 200
    run = _one(spans, "invoke_agent greeter")
    assert run.attributes is not None
    assert run.attributes["gen_ai.conversation.id"] == "thread-7"
    assert _one(spans, "chat scripted").attributes["gen_ai.conversation.id"] == "thread-7"  # type: ignore[index]
