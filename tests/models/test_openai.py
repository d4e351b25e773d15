"""OpenAIModel against a real HTTP server that streams the way the Chat Completions API does."""

from __future__ import annotations

import contextlib
import gc
import json
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import anyio
import openai
import pytest

from pyox_agents import (
    Agent,
    Image,
    ReasoningDelta,
    RunContext,
    RunFailed,
    RunFailedError,
    RunFinished,
    TextDelta,
    TextEnded,
    ToolResult,
    tool,
)
from pyox_agents.models import (
    Message,
    ModelChunk,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolCall,
    ToolCallChunk,
    UsageChunk,
    resolve_model,
)
from pyox_agents.models.openai import OLLAMA_BASE_URL, OpenAIModel, to_openai_messages
from pyox_agents.models.prices import PRICES

from ..runs import collect
from .fake_providers import OA_DONE, Fail, FakeProvider, Sse, oa_chunk, oa_text, oa_tool_calls

pytestmark = pytest.mark.anyio


def model_at(server: FakeProvider, **kwargs: Any) -> OpenAIModel:
    return OpenAIModel("gpt-5-mini", base_url=server.url, api_key="sk-test", **kwargs)


async def chunks_of(model: OpenAIModel, *messages: Message) -> list[ModelChunk]:
    request = ModelRequest(messages=messages or (Message.user("hi"),))
    return [chunk async for chunk in model.stream(request)]


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo to the shared list.

    Args:
        text: what to do
    """
    ctx.state["todos"].append(text)
    return f"added {text}"


async def test_text_streams_delta_by_delta(openai_server: FakeProvider) -> None:
    openai_server.script(oa_text("Hel", "lo, ", "world"))
    chunks = await chunks_of(model_at(openai_server))
    assert [c for c in chunks if isinstance(c, TextChunk)] == [
        TextChunk("Hel"),
        TextChunk("lo, "),
        TextChunk("world"),
    ]
    assert isinstance(chunks[-1], UsageChunk)
    sent = openai_server.requests[0]
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.json["stream"] is True
    assert sent.json["stream_options"] == {"include_usage": True}
    assert sent.json["model"] == "gpt-5-mini"
    assert sent.json["messages"] == [{"role": "user", "content": "hi"}]
    assert "tools" not in sent.json


async def test_an_agent_streams_the_text_as_events(openai_server: FakeProvider) -> None:
    openai_server.script(oa_text("Hello", " there"))
    events = await collect(Agent(model=model_at(openai_server), instructions="Be brief."))
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Hello", " there"]
    last = events[-1]
    assert isinstance(last, RunFinished) and last.answer == "Hello there"
    assert openai_server.requests[0].json["messages"][0] == {
        "role": "system",
        "content": "Be brief.",
    }


async def test_parallel_tool_calls_stream_their_argument_deltas(
    openai_server: FakeProvider,
) -> None:
    openai_server.script(
        oa_tool_calls(
            ("call_a", "add_todo", ['{"te', 'xt": "mi', 'lk"}']),
            ("call_b", "add_todo", ['{"text"', ': "eggs"}']),
        )
    )
    chunks = await chunks_of(model_at(openai_server))
    calls = [c for c in chunks if isinstance(c, ToolCallChunk)]
    assert calls == [
        ToolCallChunk(0, "", name="add_todo", id="call_a"),
        ToolCallChunk(0, '{"te'),
        ToolCallChunk(0, 'xt": "mi'),
        ToolCallChunk(0, 'lk"}'),
        ToolCallChunk(1, "", name="add_todo", id="call_b"),
        ToolCallChunk(1, '{"text"'),
        ToolCallChunk(1, ': "eggs"}'),
    ]


async def test_a_whole_run_calls_tools_that_change_the_shared_state(
    openai_server: FakeProvider,
) -> None:
    openai_server.script(
        oa_tool_calls(
            ("call_a", "add_todo", ['{"text": ', '"milk"}']),
            ("call_b", "add_todo", ['{"text": "eg', 'gs"}']),
            usage=(50, 20),
        ),
        oa_text("Added ", "both.", usage=(80, 4)),
    )
    agent = Agent(model=model_at(openai_server), tools=[add_todo])
    result = await agent.arun("add milk and eggs", state={"todos": []})
    assert sorted(result.state["todos"]) == ["eggs", "milk"]
    assert result.answer == "Added both."
    assert (result.usage.input_tokens, result.usage.output_tokens) == (130, 24)
    assert result.usage.requests == 2
    first, second = (r.json for r in openai_server.requests)
    assert first["tools"][0]["type"] == "function"
    assert first["tools"][0]["function"]["name"] == "add_todo"
    assert first["tools"][0]["function"]["parameters"]["properties"]["text"]["type"] == "string"
    assistant, *tool_messages = second["messages"][1:]
    assert assistant["role"] == "assistant"
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_a", "call_b"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"text": "milk"}
    assert {(m["role"], m["tool_call_id"], m["content"]) for m in tool_messages} == {
        ("tool", "call_a", "added milk"),
        ("tool", "call_b", "added eggs"),
    }


async def test_usage_costs_what_the_price_table_says(
    openai_server: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(PRICES, "gpt-5-mini", (2.0, 10.0))
    openai_server.script(oa_text("ok", usage=(1000, 500)))
    chunks = await chunks_of(model_at(openai_server))
    usage = chunks[-1]
    assert isinstance(usage, UsageChunk)
    assert (usage.usage.input_tokens, usage.usage.output_tokens) == (1000, 500)
    assert usage.usage.requests == 1
    assert usage.usage.cost == pytest.approx((1000 * 2.0 + 500 * 10.0) / 1_000_000)


async def test_an_unpriced_model_costs_nothing(openai_server: FakeProvider) -> None:
    openai_server.script(oa_text("ok", usage=(1000, 500)))
    model = OpenAIModel("my-local-model", base_url=openai_server.url)
    usage = (await chunks_of(model))[-1]
    assert isinstance(usage, UsageChunk)
    assert usage.usage.cost == 0.0 and usage.usage.input_tokens == 1000


async def test_a_refused_key_fails_the_run_saying_so(openai_server: FakeProvider) -> None:
    openai_server.always(
        Fail(
            401,
            {
                "error": {
                    "message": "Incorrect API key provided: sk-bad.",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
        )
    )
    events = await collect(Agent(model=model_at(openai_server)))
    failed = events[-1]
    assert isinstance(failed, RunFailed)
    assert failed.error.code == "auth"
    assert "refused the API key" in failed.error.message
    assert "Incorrect API key provided: sk-bad." in failed.error.message
    assert "OPENAI_API_KEY" in failed.error.message
    assert len(openai_server.requests) == 1  # a 401 is not retried


async def test_a_429_is_retried_and_the_run_succeeds(openai_server: FakeProvider) -> None:
    openai_server.script(
        Fail(429, {"error": {"message": "Rate limit reached"}}, {"retry-after-ms": "1"}),
        oa_text("made it"),
    )
    result = await Agent(model=model_at(openai_server)).arun("hi")
    assert result.answer == "made it"
    assert len(openai_server.requests) == 2


async def test_a_500_is_retried_up_to_the_bound_then_fails_clearly(
    openai_server: FakeProvider,
) -> None:
    openai_server.always(
        Fail(500, {"error": {"message": "The server is on fire"}}, {"retry-after-ms": "1"})
    )
    with pytest.raises(RunFailedError) as failure:
        await Agent(model=model_at(openai_server, max_retries=2)).arun("hi")
    assert len(openai_server.requests) == 3  # the first try and 2 retries
    error = failure.value.error
    assert error.code == "provider_unavailable"
    assert "HTTP 500 after 2 retries" in error.message
    assert "The server is on fire" in error.message


async def test_malformed_tool_arguments_give_the_model_an_error_and_the_run_goes_on(
    openai_server: FakeProvider,
) -> None:
    openai_server.script(
        oa_tool_calls(("call_x", "add_todo", ['{"text": "mi', "lk"])),
        oa_text("Sorry, let me stop."),
    )
    agent = Agent(model=model_at(openai_server), tools=[add_todo])
    result = await agent.arun("add milk", state={"todos": []})
    assert result.answer == "Sorry, let me stop."
    assert result.state == {"todos": []}
    outcome = next(e for e in result.events if isinstance(e, ToolResult))
    assert outcome.error is not None and "not a JSON object" in outcome.error
    assert '{"text": "milk' in outcome.error  # the raw text the model sent
    tool_message = openai_server.requests[1].json["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_x"
    assert "not a JSON object" in tool_message["content"]


async def test_a_stream_cut_in_a_calls_arguments_fails_the_run_as_a_lost_connection(
    openai_server: FakeProvider,
) -> None:
    """Rule: a stream that ends, with no `finish_reason`, in the middle of a call's arguments
    (a proxy that closed the connection cleanly) is a cut connection, not a reply: the run
    fails saying so and runs nothing; one whose arguments are whole goes on (a compatible
    server that sends no `finish_reason` at all)."""
    cut = oa_tool_calls(("call_x", "add_todo", ['{"text": "mi']))
    openai_server.script(Sse(cut.frames[:-3]))  # no finish, no usage, no [DONE]
    agent = Agent(model=model_at(openai_server), tools=[add_todo])
    events = await collect(agent, state={"todos": []})
    failed = events[-1]
    assert isinstance(failed, RunFailed) and failed.error.code == "connection"
    assert "ended in the middle of a tool call's arguments" in failed.error.message
    assert not any(isinstance(e, ToolResult) for e in events)

    whole = oa_tool_calls(("call_y", "add_todo", ['{"text": "milk"}']))
    openai_server.script(Sse(whole.frames[:-3]), Sse(oa_text("Added.").frames[:-3]))
    result = await agent.arun("add milk", state={"todos": []})
    assert result.state == {"todos": ["milk"]} and result.answer == "Added."


async def test_an_error_mid_stream_fails_the_run_with_the_providers_message(
    openai_server: FakeProvider,
) -> None:
    error = {"error": {"message": "The model overloaded mid-reply.", "type": "server_error"}}
    openai_server.script(
        Sse([oa_chunk({"role": "assistant", "content": "Half"}), f"data: {json.dumps(error)}\n\n"])
    )
    events = await collect(Agent(model=model_at(openai_server)))
    failed = events[-1]
    assert isinstance(failed, RunFailed)
    assert failed.error.code == "model_error"
    assert "The model overloaded mid-reply." in failed.error.message
    assert any(isinstance(e, TextEnded) for e in events)  # what was open is closed


async def test_a_missing_key_names_the_environment_variable() -> None:
    agent = Agent(model="openai:gpt-5-mini")
    with pytest.raises(RunFailedError) as failure:
        await agent.arun("hi")
    assert failure.value.error.code == "no_api_key"
    assert "OPENAI_API_KEY" in failure.value.error.message


async def test_the_key_and_base_url_come_from_the_environment(
    openai_server: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url)
    openai_server.script(oa_text("hi from env"))
    result = await Agent(model="gpt-5-mini").arun("hi")
    assert result.answer == "hi from env"
    assert openai_server.requests[0].headers["authorization"] == "Bearer sk-from-env"


async def test_a_local_server_needs_no_key(openai_server: FakeProvider) -> None:
    openai_server.script(oa_text("local"))
    model = OpenAIModel("llama3.2", base_url=openai_server.url, provider="vllm")
    result = await Agent(model=model).arun("hi")
    assert result.answer == "local"


def test_one_model_object_serves_runs_on_different_event_loops(
    openai_server: FakeProvider,
) -> None:
    openai_server.script(oa_text("one"), oa_text("two"))
    agent = Agent(model=model_at(openai_server))
    assert agent.run("first").answer == "one"
    assert agent.run("second").answer == "two"


async def test_reasoning_from_compatible_servers_streams_as_reasoning(
    openai_server: FakeProvider,
) -> None:
    openai_server.script(
        Sse(
            [
                oa_chunk({"role": "assistant", "reasoning_content": "Think"}),
                oa_chunk({"reasoning": "ing..."}),
                oa_chunk({"content": "Answer"}),
                oa_chunk({}, finish="stop"),
                oa_chunk(usage=(5, 5)),
                OA_DONE,
            ]
        )
    )
    chunks = await chunks_of(model_at(openai_server))
    assert chunks[:3] == [ReasoningChunk("Think"), ReasoningChunk("ing..."), TextChunk("Answer")]
    openai_server.script(
        Sse([oa_chunk({"reasoning_content": "Hmm"}), oa_chunk({"content": "Yes"}), OA_DONE])
    )
    events = await collect(Agent(model=model_at(openai_server)))
    assert [e.delta for e in events if isinstance(e, ReasoningDelta)] == ["Hmm"]


async def test_settings_go_into_the_request_body(openai_server: FakeProvider) -> None:
    openai_server.script(oa_text("ok"))
    model = model_at(openai_server, settings={"temperature": 0, "reasoning_effort": "low"})
    await chunks_of(model)
    sent = openai_server.requests[0].json
    assert sent["temperature"] == 0 and sent["reasoning_effort"] == "low"


async def test_an_unreachable_server_fails_with_a_connection_error() -> None:
    model = OpenAIModel("llama3.2", base_url="http://127.0.0.1:9/v1", max_retries=0)
    with pytest.raises(RunFailedError) as failure:
        await Agent(model=model).arun("hi")
    assert failure.value.error.code == "connection"
    assert "http://127.0.0.1:9/v1" in failure.value.error.message


def test_ollama_names_use_the_local_ollama_server_without_a_key() -> None:
    model = resolve_model("ollama:llama3.2:3b")
    assert isinstance(model, OpenAIModel)
    assert model.name == "ollama:llama3.2:3b"
    assert model.model == "llama3.2:3b"
    assert model.base_url == OLLAMA_BASE_URL == "http://127.0.0.1:11434/v1"


def test_messages_are_converted_to_the_chat_completions_format() -> None:
    call = ToolCall("add_todo", {"text": "milk"}, id="call_1")
    bad = ToolCall("add_todo", {}, id="call_2", raw_arguments="{oops")
    messages = [
        Message.system("Be brief."),
        Message.user("What is this?", Image("https://example.com/a.png")),
        Message.assistant("On it.", (call, bad)),
        Message.tool(call, "added milk"),
        Message.tool(bad, "the arguments are not a JSON object", is_error=True),
    ]
    assert to_openai_messages(messages) == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
            ],
        },
        {
            "role": "assistant",
            "content": "On it.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "add_todo", "arguments": '{"text": "milk"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "add_todo", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "added milk"},
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "content": "Error: the arguments are not a JSON object",
        },
    ]


@contextlib.contextmanager
def resources_left_open() -> Iterator[list[str]]:
    """Collects the ResourceWarnings (open sockets, transports) raised inside, and at the end.
    What earlier tests left for the collector is collected first: it is not this test's."""
    gc.collect()
    gc.collect()
    seen: list[str] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda args: seen.append(f"{args.exc_value!r} in {args.object!r}")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            yield seen
            gc.collect()
            gc.collect()
        seen += [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    finally:
        sys.unraisablehook = hook


def test_a_run_closes_the_connections_its_model_opened(openai_server: FakeProvider) -> None:
    """Each `agent.run` has its own event loop; the client opened on it closes with it."""
    openai_server.script(oa_text("one"), oa_text("two"))
    with resources_left_open() as left_open:
        agent = Agent(model=model_at(openai_server))
        assert agent.run("first").answer == "one"
        assert agent.run("second").answer == "two"
        del agent
    assert left_open == []


async def test_a_model_dropped_while_its_loop_runs_closes_its_connections(
    openai_server: FakeProvider,
) -> None:
    openai_server.script(oa_text("one"))
    with resources_left_open() as left_open:
        model = model_at(openai_server)
        assert [c for c in await chunks_of(model) if isinstance(c, TextChunk)] == [TextChunk("one")]
        del model
        gc.collect()
        await anyio.sleep(0.05)  # the loop runs the close its finalizer hook scheduled
    assert left_open == []


async def test_a_client_the_caller_gave_stays_open(openai_server: FakeProvider) -> None:
    openai_server.script(oa_text("one"), oa_text("two"))
    client = openai.AsyncOpenAI(base_url=openai_server.url, api_key="sk-test",
                                http_client=openai.DefaultAsyncHttpxClient())
    model = OpenAIModel("gpt-5-mini", client=client)
    await chunks_of(model)
    await model.aclose()
    assert not client.is_closed()
    assert [c for c in await chunks_of(model) if isinstance(c, TextChunk)] == [TextChunk("two")]
    await client.close()
