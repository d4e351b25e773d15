"""The public module `pyox_agents.ai_sdk`: its names, pinned."""

from __future__ import annotations

from pyox_agents import ai_sdk


def test_public_names_are_pinned() -> None:
    assert set(ai_sdk.__all__) == {
        "CHUNK_TYPES", "FINISH_REASONS", "HEADERS", "SDK_VERSIONS", "STATE_ID", "Chat", "Chunk",
        "RequestError", "encode", "encode_chunk", "finish_reason", "parse_request", "stream",
        "translate", "ui_messages_to_messages",
    }
    for name in ai_sdk.__all__:
        assert getattr(ai_sdk, name) is not None


def test_every_public_callable_has_a_docstring() -> None:
    for name in ai_sdk.__all__:
        value = getattr(ai_sdk, name)
        if callable(value):
            assert value.__doc__, name


def test_headers_are_those_of_the_ai_sdk_helpers() -> None:
    assert ai_sdk.HEADERS["x-vercel-ai-ui-message-stream"] == "v1"
    assert ai_sdk.HEADERS["x-accel-buffering"] == "no"
    assert ai_sdk.HEADERS["cache-control"] == "no-cache"


def test_no_major_is_sent_unknown_and_only_7_gets_interrupted() -> None:
    assert all("unknown" not in ai_sdk.FINISH_REASONS[v] or v == 5 for v in (5, 6, 7))
    assert ["interrupted" in ai_sdk.FINISH_REASONS[v] for v in (5, 6, 7)] == [False, False, True]
