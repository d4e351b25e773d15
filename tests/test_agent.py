"""The agent loop: running, results, failures, cancellation, models."""

from __future__ import annotations

import datetime
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import pydantic
import pytest

from pyox_agents import (
    Agent,
    RunContext,
    RunFailed,
    RunFailedError,
    RunFinished,
    RunStarted,
    State,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
    tool,
)
from pyox_agents.models import (
    FunctionModel,
    Message,
    ModelChunk,
    ModelError,
    ModelRequest,
    ScriptedModel,
    TextChunk,
    ToolCall,
    ToolSpec,
)

from .runs import collect, finished, results

pytestmark = pytest.mark.anyio


@tool
def echo(text: str) -> str:
    """Say it back."""
    return text


async def test_a_run_opens_and_closes_steps_text_and_tool_calls_in_order() -> None:
    call = ToolCall("echo", {"text": "hi"}, id="c1")
    events = await collect(Agent(model=ScriptedModel([call, "All done."]), tools=[echo]))
    kinds = [type(e) for e in events]
    assert kinds[0] is RunStarted and kinds[-1] is RunFinished
    first_step = kinds[1 : kinds.index(StepFinished) + 1]
    assert first_step[0] is StepStarted and ToolCallStarted in first_step
    assert first_step.index(ToolCallStarted) < first_step.index(ToolCallArgsDelta)
    assert first_step.index(ToolCallArgsDelta) < first_step.index(ToolCallEnded)
    assert first_step.index(ToolCallEnded) < first_step.index(ToolResult)
    second_step = kinds[kinds.index(StepFinished) + 1 :]
    assert second_step[:2] == [StepStarted, TextStarted] and TextEnded in second_step
    texts = "".join(e.delta for e in events if isinstance(e, TextDelta))
    assert texts == "All done." and finished(events).answer == "All done."


async def test_text_streams_in_word_sized_deltas() -> None:
    events = await collect(Agent(model=ScriptedModel(["one two three"])))
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["one ", "two ", "three"]


async def test_arun_returns_answer_state_usage_events_and_run_id() -> None:
    @tool
    def add(ctx: RunContext, text: str) -> str:
        """Add."""
        ctx.state["todos"].append(text)
        return "ok"

    agent = Agent(model=ScriptedModel([ToolCall("add", {"text": "a"}), "fine"]), tools=[add])
    result = await agent.arun("go", state={"todos": []})
    assert result.answer == "fine"
    assert result.state == {"todos": ["a"]}
    assert result.usage.requests == 2 and result.usage.output_tokens > 0
    assert isinstance(result.events[0], RunStarted) and result.events[0].run_id == result.run_id
    assert len(result.run_id) == 64 and int(result.run_id, 16) >= 0


def test_run_works_from_sync_code() -> None:
    result = Agent(model=ScriptedModel(["hello"])).run("hi")
    assert result.answer == "hello"


async def test_run_refuses_inside_a_running_event_loop() -> None:
    with pytest.raises(RuntimeError, match=r"use `await agent.arun"):
        Agent(model=ScriptedModel(["hello"])).run("hi")


async def test_a_model_error_ends_the_run_with_run_failed() -> None:
    class Broken:
        name = "broken"

        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
            yield TextChunk("partial ")
            raise ModelError("the provider answered 503: overloaded")

    events = await collect(Agent(model=Broken()))
    assert isinstance(events[-1], RunFailed)
    assert events[-1].error.code == "model_error"
    assert "503: overloaded" in events[-1].error.message
    assert sum(isinstance(e, RunFailed | RunFinished) for e in events) == 1
    assert isinstance(events[-2], StepFinished) and isinstance(events[-3], TextEnded)


async def test_a_bug_in_a_hook_ends_the_run_with_run_failed_not_a_traceback() -> None:
    def instructions(ctx: RunContext) -> str:
        raise KeyError("oops")

    events = await collect(Agent(model=ScriptedModel(["x"]), instructions=instructions))
    assert isinstance(events[-1], RunFailed)
    assert events[-1].error.code == "internal_error" and "KeyError" in events[-1].error.message


async def test_arun_raises_run_failed_error_with_the_events() -> None:
    with pytest.raises(RunFailedError, match="ran out of replies") as info:
        await Agent(model=ScriptedModel([])).arun("hi")
    assert info.value.error.code == "script_exhausted"
    assert isinstance(info.value.events[-1], RunFailed)


async def test_a_script_that_runs_out_says_how_long_it_was() -> None:
    events = await collect(
        Agent(model=ScriptedModel([ToolCall("echo", {"text": "x"})]), tools=[echo])
    )
    assert isinstance(events[-1], RunFailed)
    assert "the script has 1" in events[-1].error.message


async def test_breaking_out_of_the_stream_cancels_running_tools() -> None:
    started, cancelled = anyio.Event(), anyio.Event()

    @tool
    async def forever() -> str:
        """Never returns on its own."""
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "unreachable"

    agent = Agent(model=ScriptedModel([ToolCall("forever", {}), "x"]), tools=[forever])
    stream = agent.stream("go")
    async for event in stream:
        if isinstance(event, ToolCallEnded):
            break
    await stream.aclose()  # what Python does for a dropped `async for`, done here at once
    with anyio.fail_after(5):
        await cancelled.wait()
    assert started.is_set()


async def test_invalid_arguments_give_the_model_an_error_naming_the_field() -> None:
    @tool
    def schedule(title: str, minutes: int) -> str:
        """Schedule something."""
        return f"{title} in {minutes}"

    calls = [
        ToolCall("schedule", {"title": "x", "minutes": "soon"}, id="bad"),
        ToolCall("schedule", {"minutes": 3}, id="missing"),
        ToolCall("schedule", {"title": "x", "minutes": 1, "when": "now"}, id="extra"),
    ]
    model = ScriptedModel([calls, "ok"])
    events = await collect(Agent(model=model, tools=[schedule]))
    by_id = results(events)
    assert "minutes" in (by_id["bad"].error or "") and "integer" in (by_id["bad"].error or "")
    assert "title: Field required" in (by_id["missing"].error or "")
    assert "when: no such argument" in (by_id["extra"].error or "")
    assert finished(events).answer == "ok"
    errors = [m for m in model.requests[1].messages if m.role == "tool"]
    assert all(m.is_error for m in errors)


async def test_arguments_that_are_not_json_give_an_error_result() -> None:
    call = ToolCall("echo", {}, raw_arguments='{"text": "unterminated')
    events = await collect(Agent(model=ScriptedModel([call, "ok"]), tools=[echo]))
    (result,) = results(events).values()
    assert result.error is not None and "not a JSON object" in result.error


async def test_an_unknown_tool_gives_an_error_listing_the_tools() -> None:
    events = await collect(Agent(model=ScriptedModel([ToolCall("nope", {}), "ok"]), tools=[echo]))
    (result,) = results(events).values()
    assert result.error == "there is no tool 'nope'; the tools are: echo"


async def test_sync_tools_run_in_worker_threads_and_async_tools_on_the_loop() -> None:
    threads: dict[str, int] = {}

    @tool
    def sync_tool() -> str:
        """Sync."""
        threads["sync"] = threading.get_ident()
        return "s"

    @tool
    async def async_tool() -> str:
        """Async."""
        threads["async"] = threading.get_ident()
        return "a"

    calls = [ToolCall("sync_tool", {}), ToolCall("async_tool", {})]
    await collect(Agent(model=ScriptedModel([calls, "ok"]), tools=[sync_tool, async_tool]))
    assert threads["async"] == threading.get_ident()
    assert threads["sync"] != threading.get_ident()


async def test_state_that_is_not_json_is_refused_before_the_run_naming_the_path() -> None:
    agent = Agent(model=ScriptedModel(["x"]))
    with pytest.raises(TypeError, match=r'state\["cart"\]\[1\] is a set'):
        agent.stream("go", state={"cart": [1, {"a"}]})


async def test_state_type_validates_the_state_before_the_run() -> None:
    class Todos(pydantic.BaseModel):
        todos: list[str] = []
        title: str = "untitled"

    agent = Agent(model=ScriptedModel(["x"]), state_type=Todos)
    with pytest.raises(pydantic.ValidationError):
        agent.stream("go", state={"todos": "not a list"})
    events = await collect(agent, state={"todos": ["a"]})
    started = events[0]
    assert isinstance(started, RunStarted)
    assert started.state == {"todos": ["a"], "title": "untitled"}


async def test_state_type_checks_the_state_is_json_first_naming_the_path() -> None:
    """Rule (seed 004): the state must be JSON, refused with its path before the run, also
    where a `state_type`'s model would drop the key (it let a NaN through there)."""
    class Todos(pydantic.BaseModel):
        todos: list[str] = []

    agent = Agent(model=ScriptedModel(["x"]), state_type=Todos)
    with pytest.raises(TypeError, match=r'state\["filter"\]\["since"\] is nan'):
        agent.stream("go", state={"todos": [], "filter": {"since": float("nan")}})
    with pytest.raises(TypeError, match=r'state\["tags"\] is a set'):
        agent.stream("go", state={"todos": [], "tags": {"a"}})
    events = await collect(agent, state=Todos(todos=["a"]))  # a model instance is taken as is
    assert isinstance(events[0], RunStarted) and events[0].state == {"todos": ["a"]}


async def test_a_model_name_without_a_provider_fails_clearly_at_run_start() -> None:
    agent = Agent(model="frobnicate-9")
    with pytest.raises(ValueError, match="no provider configured for model 'frobnicate-9'"):
        await agent.arun("hi")


async def test_a_provider_without_its_key_names_the_environment_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(RunFailedError, match="OPENAI_API_KEY"):
        await Agent(model="gpt-5-mini").arun("hi")


async def test_function_model_sees_messages_with_roles_and_content() -> None:
    seen: list[list[Message]] = []

    def reply(messages: list[Message], tools: list[ToolSpec]) -> Any:
        seen.append(messages)
        return ToolCall("echo", {"text": "ping"}) if len(seen) == 1 else "pong"

    agent = Agent(model=FunctionModel(reply), tools=[echo], instructions="Be brief.")
    assert (await agent.arun("hello")).answer == "pong"
    roles = [(m.role, m.content) for m in seen[1]]
    assert roles[:2] == [("system", "Be brief."), ("user", "hello")]
    assert roles[2][0] == "assistant" and seen[1][2].tool_calls[0].name == "echo"
    assert roles[3] == ("tool", "ping")


async def test_an_async_function_model_works() -> None:
    async def reply(messages: list[Message], tools: list[ToolSpec]) -> str:
        await anyio.lowlevel.checkpoint()
        return f"{len(tools)} tools"

    agent = Agent(model=FunctionModel(reply), tools=[echo])
    assert (await agent.arun("hello")).answer == "1 tools"


async def test_a_tool_past_its_timeout_gets_a_timeout_error_and_the_run_goes_on() -> None:
    @tool(timeout=0.05)
    async def hang(ctx: RunContext) -> str:
        """Hangs."""
        ctx.state["touched"] = True
        await anyio.sleep_forever()
        return "never"

    @tool
    def quick() -> str:
        """Quick."""
        return "fine"

    model = ScriptedModel([[ToolCall("hang", {}, id="h"), ToolCall("quick", {}, id="q")], "ok"])
    events = await collect(Agent(model=model, tools=[hang, quick]), state={})
    by_id = results(events)
    assert by_id["h"].error is not None and "did not finish within 0.05 s" in by_id["h"].error
    assert by_id["q"].result == "fine" and finished(events).answer == "ok"
    assert finished(events).state == {}


async def test_the_agents_tool_timeout_applies_to_every_tool() -> None:
    @tool
    async def slow() -> str:
        """Slow."""
        await anyio.sleep_forever()
        return "never"

    agent = Agent(model=ScriptedModel([ToolCall("slow", {}), "ok"]), tools=[slow],
                  tool_timeout=0.05)
    (result,) = results(await collect(agent)).values()
    assert result.error is not None and "did not finish within 0.05 s" in result.error


@pytest.mark.parametrize("messages", [
    "a\ud800b",
    State(messages=[Message.user("fine"), Message.user("x"), Message.user("bad \udc80")]),
    State(messages=[Message(role="user", content="hi", name="n\ud800")]),
], ids=["prompt", "a State's third message", "a name"])
def test_a_message_whose_text_holds_a_lone_surrogate_is_refused_before_the_run(
        messages: Any) -> None:
    """Rule: every bad input gets a clear error: a prompt or a message whose text holds a lone
    surrogate (UTF-8 cannot encode it) is refused before the run starts, naming the message,
    the field and where the surrogate is; the model is not asked and nothing is saved. It
    failed inside the run ("internal_error") when the run's audit record digested the prompt."""
    from pyox_agents.models import InputNotAccepted
    from pyox_agents.stores import MemoryStore

    model, store = ScriptedModel(["never"]), MemoryStore()
    with pytest.raises(InputNotAccepted, match=r"^messages\[\d\]\.(content|name) holds a lone "
                                               r"surrogate \('\\ud[8c]\d\d' at index \d+\), "
                                               r"which is not text") as caught:
        Agent(model, store=store).run(messages)
    assert caught.value.path in {"messages[0].content", "messages[2].content", "messages[0].name"}
    assert model.requests == [] and store.list_threads() == []


@pytest.mark.parametrize(("returned", "said"), [
    ({"when": object()}, 'the result["when"] is a object object; a tool\'s result must be JSON'),
    ({"total": float("nan")}, 'the result["total"] is nan; a tool\'s result must be JSON'),
    # a datetime pydantic makes a string of; the object beside it is what fails
    ({"when": datetime.datetime(2026, 1, 1), "o": [object()]},
     'the result["o"][0] is a object object'),
    ({"raw": b"\xff\xfe"}, 'the result["raw"] is bytes'),  # not UTF-8: it was "unexpected"
])
async def test_a_result_that_is_not_json_fails_the_call_naming_where(returned: Any,
                                                                     said: str) -> None:
    """Rule: every bad input gets a clear error that says what was wrong and where: the call's
    error named only the outer type ("returned a dict"), or spoke of the shared state."""

    @tool
    def report() -> Any:
        """Report."""
        return returned

    events = await collect(Agent(model=ScriptedModel([ToolCall("report", {}), "ok"]),
                                 tools=[report]))
    errors = [e.error for e in events if isinstance(e, ToolResult)]
    assert errors and errors[0] is not None and errors[0].startswith(said), errors
