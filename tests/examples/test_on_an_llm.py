"""The gallery's agents on an LLM (`"openai:gpt-5-mini"`, a local server that streams as the
Chat Completions API does): the same agents, no demo-model tricks; what the model is told, and
what the page gets from what it streams."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from pyox_agents.examples import AGENTIC_CHAT, PREDICTIVE_STATE_UPDATES, gallery_agents
from pyox_agents.server import create_app
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.servers import serving
from tests.examples.drive import CHANGE_BACKGROUND, Thread
from tests.models.fake_providers import FakeProvider, oa_text, oa_tool_calls
from tests.models.fake_providers import serving as serving_provider

pytestmark = pytest.mark.anyio


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    """An OpenAI-compatible server, which "openai:..." model names reach."""
    server = FakeProvider("/v1/chat/completions")
    with serving_provider(server.app) as url:
        server.url = url + "/v1"
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server


@pytest.fixture
async def base(llm: FakeProvider, tmp_path: Path) -> AsyncIterator[str]:
    app = create_app(gallery_agents("openai:gpt-5-mini"), store=SQLiteStore(tmp_path / "g.db"))
    async with serving(app) as url:
        yield url


async def test_on_an_llm_the_chat_agent_gets_the_pages_tool_context_and_properties(
        llm: FakeProvider, base: str) -> None:
    """Agentic chat with `--model openai:...`: the page's tool is offered to the model, its
    context and forwarded properties are in what the model reads."""
    llm.script(oa_tool_calls(("call_1", "change_background", ['{"backgr', 'ound": "teal"}'])))
    async with httpx.AsyncClient() as client:
        thread = Thread(client, base, AGENTIC_CHAT, tools=[CHANGE_BACKGROUND],
                        context=[{"description": "The person's name", "value": "Ada"}],
                        forwarded={"page": "agentic-chat"})
        run = await thread.say("Make it teal")
    assert run.calls("change_background") == [{"id": "call_1",
                                                "arguments": {"background": "teal"}}]
    sent = llm.requests[0].json
    assert [t["function"]["name"] for t in sent["tools"]] == ["change_background"]
    system = sent["messages"][0]["content"]
    assert "The page forwarded: {\"page\": \"agentic-chat\"}" in system
    assert "- The person's name: Ada" in system


async def test_on_an_llm_the_document_follows_the_streamed_argument(
        llm: FakeProvider, base: str) -> None:
    """Predictive state updates with `--model openai:...`: PredictState first, the argument as
    the model streams it, then the committed document."""
    pieces = ['{"text": "Once', ' upon a', ' time."}']
    llm.script(oa_tool_calls(("call_1", "write_document", pieces)), oa_text("I wrote it."))
    async with httpx.AsyncClient() as client:
        thread = Thread(client, base, PREDICTIVE_STATE_UPDATES, state={"document": ""})
        run = await thread.say("Write a story")
    kinds = [event["type"] for event in run.events]
    assert kinds.index("CUSTOM") < kinds.index("TOOL_CALL_START") < kinds.index("STATE_DELTA")
    assert [e["delta"] for e in run.of("TOOL_CALL_ARGS")] == pieces
    assert thread.state == {"document": "Once upon a time.", "previous": ""}
    assert run.text == "I wrote it."
    assert "The document now:\n(empty)" in llm.requests[0].json["messages"][0]["content"]
