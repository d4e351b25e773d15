"""Fixtures: the fake OpenAI and Anthropic servers (one each per session, reset per test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .fake_providers import FakeProvider, serving


@pytest.fixture(scope="session")
def _openai_server() -> Iterator[FakeProvider]:
    server = FakeProvider("/v1/chat/completions")
    with serving(server.app) as url:
        server.url = url + "/v1"
        yield server


@pytest.fixture(scope="session")
def _anthropic_server() -> Iterator[FakeProvider]:
    server = FakeProvider("/v1/messages")
    with serving(server.app) as url:
        server.url = url
        yield server


@pytest.fixture
def openai_server(_openai_server: FakeProvider) -> Iterator[FakeProvider]:
    """An OpenAI-compatible server at `.url` (the base URL, ending /v1), empty script."""
    _openai_server.reset()
    yield _openai_server
    _openai_server.reset()


@pytest.fixture
def anthropic_server(_anthropic_server: FakeProvider) -> Iterator[FakeProvider]:
    """An Anthropic-compatible server at `.url`, empty script."""
    _anthropic_server.reset()
    yield _anthropic_server
    _anthropic_server.reset()


@pytest.fixture(autouse=True)
def _no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see no provider keys or base URLs from the machine they run on."""
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_ADMIN_KEY",
        "OPENAI_CUSTOM_HEADERS",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_CUSTOM_HEADERS",
        "ANTHROPIC_PROFILE",
    ):
        monkeypatch.delenv(name, raising=False)
