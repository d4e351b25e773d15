"""AnthropicModel against a real HTTP server that streams the way the Messages API does."""

from __future__ import annotations

from typing import Any

import pytest

from pyox_agents import (
    Agent,
    Image,
    ReasoningDelta,
    RunContext,
    RunFailed,
    RunFailedError,
    TextDelta,
    TextEnded,
    ToolError,
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
from pyox_agents.models.anthropic import AnthropicModel, to_anthropic_messages
from pyox_agents.models.prices import PRICES

from ..runs import collect
from .fake_providers import (
    Fail,
    FakeProvider,
    Sse,
    an_end,
    an_event,
    an_start,
    an_text,
    an_text_block,
    an_thinking_block,
    an_tool_block,
)

pytestmark = pytest.mark.anyio


def model_at(server: FakeProvider, **kwargs: Any) -> AnthropicModel:
    return AnthropicModel("claude-test", base_url=server.url, api_key="sk-ant-test", **kwargs)


def sent_key(headers: dict[str, str]) -> str:
    """The API key a request carried (the SDK sends x-api-key or a bearer token)."""
    return headers.get("x-api-key") or headers["authorization"].removeprefix("Bearer ")


async def chunks_of(model: AnthropicModel, *messages: Message) -> list[ModelChunk]:
    request = ModelRequest(messages=messages or (Message.user("hi"),))
    return [chunk async for chunk in model.stream(request)]


@tool
def add_item(ctx: RunContext, name: str) -> str:
    """Add an item to the shared cart.

    Args:
        name: the item
    """
    if name == "unicorn":
        raise ToolError("unicorns are out of stock")
    ctx.state["cart"].append(name)
    return f"added {name}"


async def test_text_streams_delta_by_delta(anthropic_server: FakeProvider) -> None:
    anthropic_server.script(an_text("Hel", "lo, ", "world"))
    chunks = await chunks_of(
        model_at(anthropic_server), Message.system("Be brief."), Message.user("hi")
    )
    assert [c for c in chunks if isinstance(c, TextChunk)] == [
        TextChunk("Hel"),
        TextChunk("lo, "),
        TextChunk("world"),
    ]
    assert isinstance(chunks[-1], UsageChunk)
    sent = anthropic_server.requests[0]
    assert sent_key(sent.headers) == "sk-ant-test"
    assert sent.json["stream"] is True
    assert sent.json["system"] == "Be brief."
    assert sent.json["max_tokens"] == 8192
    assert sent.json["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


async def test_an_agent_streams_the_text_as_events(anthropic_server: FakeProvider) -> None:
    anthropic_server.script(an_text("Hello", " there"))
    events = await collect(Agent(model=model_at(anthropic_server)))
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Hello", " there"]


async def test_parallel_tool_calls_stream_their_input_deltas(
    anthropic_server: FakeProvider,
) -> None:
    anthropic_server.script(
        Sse(
            [
                an_start(),
                *an_text_block(0, "Adding."),
                *an_tool_block(1, "toolu_a", "add_item", '{"na', 'me": "te', 'a"}'),
                *an_tool_block(2, "toolu_b", "add_item", '{"name"', ': "jam"}'),
                *an_end(30, "tool_use"),
            ]
        )
    )
    chunks = await chunks_of(model_at(anthropic_server))
    assert [c for c in chunks if isinstance(c, ToolCallChunk)] == [
        ToolCallChunk(0, "", name="add_item", id="toolu_a"),
        ToolCallChunk(0, '{"na'),
        ToolCallChunk(0, 'me": "te'),
        ToolCallChunk(0, 'a"}'),
        ToolCallChunk(1, "", name="add_item", id="toolu_b"),
        ToolCallChunk(1, '{"name"'),
        ToolCallChunk(1, ': "jam"}'),
    ]


async def test_a_whole_run_with_thinking_changes_the_shared_state(
    anthropic_server: FakeProvider,
) -> None:
    anthropic_server.script(
        Sse(
            [
                an_start(100),
                *an_thinking_block(0, ["The user wants ", "two items."], "sig-123"),
                *an_tool_block(1, "toolu_a", "add_item", '{"name": "tea"}'),
                *an_tool_block(2, "toolu_b", "add_item", '{"name": "unicorn"}'),
                *an_end(40, "tool_use"),
            ]
        ),
        an_text("Added tea; ", "no unicorns.", usage=(200, 6)),
    )
    agent = Agent(model=model_at(anthropic_server), tools=[add_item])
    result = await agent.arun("add tea and a unicorn", state={"cart": []})
    assert result.state == {"cart": ["tea"]}
    assert result.answer == "Added tea; no unicorns."
    reasoning = [e.delta for e in result.events if isinstance(e, ReasoningDelta)]
    assert reasoning == ["The user wants ", "two items."]
    assert (result.usage.input_tokens, result.usage.output_tokens) == (300, 46)
    second = anthropic_server.requests[1].json
    assert second["tools"][0]["name"] == "add_item"
    assert second["tools"][0]["input_schema"]["properties"]["name"]["type"] == "string"
    user, assistant, results = second["messages"]
    assert user == {"role": "user", "content": [{"type": "text", "text": "add tea and a unicorn"}]}
    assert assistant["role"] == "assistant"
    assert assistant["content"] == [
        {"type": "thinking", "thinking": "The user wants two items.", "signature": "sig-123"},
        {"type": "tool_use", "id": "toolu_a", "name": "add_item", "input": {"name": "tea"}},
        {"type": "tool_use", "id": "toolu_b", "name": "add_item", "input": {"name": "unicorn"}},
    ]
    assert results["role"] == "user"  # both results in one user message
    by_id = {block["tool_use_id"]: block for block in results["content"]}
    assert by_id["toolu_a"] == {
        "type": "tool_result",
        "tool_use_id": "toolu_a",
        "content": "added tea",
    }
    assert by_id["toolu_b"]["is_error"] is True
    assert "unicorns are out of stock" in by_id["toolu_b"]["content"]


async def test_usage_costs_what_the_price_table_says(
    anthropic_server: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(PRICES, "claude-test", (3.0, 15.0))
    anthropic_server.script(an_text("ok", usage=(2000, 100)))
    usage = (await chunks_of(model_at(anthropic_server)))[-1]
    assert isinstance(usage, UsageChunk)
    assert (usage.usage.input_tokens, usage.usage.output_tokens) == (2000, 100)
    assert usage.usage.cost == pytest.approx((2000 * 3.0 + 100 * 15.0) / 1_000_000)


async def test_a_refused_key_fails_the_run_saying_so(anthropic_server: FakeProvider) -> None:
    anthropic_server.always(
        Fail(
            401,
            {
                "type": "error",
                "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            },
        )
    )
    events = await collect(Agent(model=model_at(anthropic_server)))
    failed = events[-1]
    assert isinstance(failed, RunFailed)
    assert failed.error.code == "auth"
    assert "refused the API key" in failed.error.message
    assert "invalid x-api-key" in failed.error.message
    assert "ANTHROPIC_API_KEY" in failed.error.message
    assert len(anthropic_server.requests) == 1


async def test_a_429_is_retried_and_the_run_succeeds(anthropic_server: FakeProvider) -> None:
    limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    anthropic_server.script(Fail(429, limited, {"retry-after-ms": "1"}), an_text("made it"))
    result = await Agent(model=model_at(anthropic_server)).arun("hi")
    assert result.answer == "made it"
    assert len(anthropic_server.requests) == 2


async def test_a_500_is_retried_up_to_the_bound_then_fails_clearly(
    anthropic_server: FakeProvider,
) -> None:
    broken = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
    anthropic_server.always(Fail(500, broken, {"retry-after-ms": "1"}))
    with pytest.raises(RunFailedError) as failure:
        await Agent(model=model_at(anthropic_server, max_retries=1)).arun("hi")
    assert len(anthropic_server.requests) == 2
    error = failure.value.error
    assert error.code == "provider_unavailable"
    assert "HTTP 500 after 1 retries" in error.message
    assert "Internal server error" in error.message


async def test_malformed_tool_input_gives_the_model_an_error_and_the_run_goes_on(
    anthropic_server: FakeProvider,
) -> None:
    anthropic_server.script(
        Sse([an_start(), *an_tool_block(0, "toolu_x", "add_item", '{"name": '), *an_end(9)]),
        an_text("Sorry."),
    )
    agent = Agent(model=model_at(anthropic_server), tools=[add_item])
    result = await agent.arun("add tea", state={"cart": []})
    assert result.answer == "Sorry."
    outcome = next(e for e in result.events if isinstance(e, ToolResult))
    assert outcome.error is not None and "not a JSON object" in outcome.error
    assistant, results = anthropic_server.requests[1].json["messages"][1:]
    assert assistant["content"][0]["input"] == {}
    assert results["content"][0]["is_error"] is True


async def test_a_stream_cut_in_a_block_fails_the_run_as_a_lost_connection(
    anthropic_server: FakeProvider,
) -> None:
    """Rule: a stream that ends in the middle of a content block, with no `message_stop` (a
    proxy that closed the connection cleanly), is a cut connection, not a reply: the run fails
    saying so and runs nothing."""
    block = an_tool_block(0, "toolu_x", "add_item", '{"name": "te')
    anthropic_server.script(Sse([an_start(), *block[:-1]]))  # no block stop, no message end
    events = await collect(Agent(model=model_at(anthropic_server), tools=[add_item]),
                           state={"cart": []})
    failed = events[-1]
    assert isinstance(failed, RunFailed) and failed.error.code == "connection"
    assert "ended in the middle of its reply" in failed.error.message
    assert not any(isinstance(e, ToolResult) for e in events)


async def test_an_error_event_mid_stream_fails_the_run_with_the_providers_message(
    anthropic_server: FakeProvider,
) -> None:
    overloaded = {"type": "overloaded_error", "message": "Overloaded"}
    anthropic_server.script(
        Sse(
            [
                an_start(),
                an_event(
                    "content_block_start", index=0, content_block={"type": "text", "text": ""}
                ),
                an_event(
                    "content_block_delta", index=0, delta={"type": "text_delta", "text": "Half"}
                ),
                an_event("error", error=overloaded),
            ]
        )
    )
    events = await collect(Agent(model=model_at(anthropic_server)))
    failed = events[-1]
    assert isinstance(failed, RunFailed)
    assert failed.error.code == "model_error"
    assert "Overloaded" in failed.error.message
    assert any(isinstance(e, TextEnded) for e in events)


async def test_a_missing_key_names_the_environment_variable() -> None:
    with pytest.raises(RunFailedError) as failure:
        await Agent(model="anthropic:claude-sonnet-4-5").arun("hi")
    assert failure.value.error.code == "no_api_key"
    assert "ANTHROPIC_API_KEY" in failure.value.error.message


async def test_the_key_and_base_url_come_from_the_environment(
    anthropic_server: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.url)
    anthropic_server.script(an_text("hi from env"))
    result = await Agent(model="claude-test").arun("hi")
    assert result.answer == "hi from env"
    assert sent_key(anthropic_server.requests[0].headers) == "sk-ant-env"


async def test_settings_go_into_the_request_body(anthropic_server: FakeProvider) -> None:
    anthropic_server.script(an_text("ok"))
    thinking = {"type": "enabled", "budget_tokens": 1024}
    model = model_at(anthropic_server, settings={"max_tokens": 2048, "thinking": thinking})
    chunks = await chunks_of(model)
    assert not any(isinstance(c, ReasoningChunk) for c in chunks)
    sent = anthropic_server.requests[0].json
    assert sent["max_tokens"] == 2048 and sent["thinking"] == thinking


def test_claude_names_resolve_to_the_anthropic_provider() -> None:
    for name in ("claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"):
        model = resolve_model(name)
        assert isinstance(model, AnthropicModel)
        assert model.name == "anthropic:claude-sonnet-4-5"


def test_messages_are_converted_to_the_messages_api_format() -> None:
    call = ToolCall("add_item", {"name": "tea"}, id="toolu_1")
    other = ToolCall("add_item", {"name": "jam"}, id="toolu_2")
    system, messages = to_anthropic_messages(
        [
            Message.system("Be brief."),
            Message.system("Use tools."),
            Message.user(
                "What are these?",
                Image("https://example.com/a.png"),
                Image("data:image/jpeg;base64,AAAA", "image/jpeg"),
            ),
            Message.assistant("", (call, other)),
            Message.tool(call, "added tea"),
            Message.tool(other, "out of jam", is_error=True),
            Message.notice("the user is typing"),
        ]
    )
    assert system == "Be brief.\n\nUse tools."
    assert messages == [
        {
            "role": "user",
            "content": [
                {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/jpeg", "data": "AAAA"},
                },
                {"type": "text", "text": "What are these?"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "add_item", "input": {"name": "tea"}},
                {"type": "tool_use", "id": "toolu_2", "name": "add_item", "input": {"name": "jam"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "added tea"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "out of jam",
                    "is_error": True,
                },
                {"type": "text", "text": "[notice] the user is typing"},
            ],
        },
    ]
