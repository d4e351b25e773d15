"""Files in user messages from the real clients: `@ag-ui/client` (1.0, and 0.0.59 as CopilotKit
bundles it), whose messages keep them after the run's MESSAGES_SNAPSHOT with no warning, and
`ai` 7, 6 and 5 `file` parts; they reach the model."""

from __future__ import annotations

import base64
import uuid
from typing import Any

import pytest

from pyox_agents import Agent, File, Image
from pyox_agents.models import ScriptedModel
from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore
from tests.e2e.test_ag_ui_e2e import CLIENTS, RunNode, Serve

PDF = base64.b64encode(b"%PDF-1.4 tiny").decode()
DOCUMENT = {"type": "document", "source": {"type": "data", "value": PDF,
                                           "mimeType": "application/pdf"},
            "metadata": {"filename": "report.pdf"}}
AUDIO = {"type": "audio", "source": {"type": "url", "value": "https://x.test/memo.wav",
                                     "mimeType": "audio/wav"}}
BINARY = {"type": "binary", "mimeType": "text/csv", "data": "YSxi", "filename": "t.csv"}


@pytest.fixture(params=CLIENTS)
def client(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def run(serve: Serve, run_node: RunNode, client: str, content: list[Any]
        ) -> tuple[ScriptedModel, dict[str, Any]]:
    model = ScriptedModel(["Read them."])
    base = serve(create_app({"a": Agent(model)}, store=MemoryStore()))
    message = {"id": "u1", "role": "user", "content": content}
    result = run_node("agui_run.mjs", f"{base}/agents/a/ag-ui",
                      {"threadId": f"t-{uuid.uuid4().hex[:12]}", "client": client,
                       "message": message})
    assert result["resolved"], result["error"]
    assert result["warnings"] == []
    return model, result


def test_document_and_audio_parts_reach_the_model_and_stay_in_the_clients_messages(
        serve: Serve, run_node: RunNode, client: str) -> None:
    content = [{"type": "text", "text": "Read these"}, DOCUMENT, AUDIO]
    model, result = run(serve, run_node, client, content)
    assert model.requests[0].messages[-1].files == (
        File(f"data:application/pdf;base64,{PDF}", "application/pdf", "report.pdf"),
        File("https://x.test/memo.wav", "audio/wav"))
    user = next(m for m in result["messages"] if m["id"] == "u1")
    assert user["content"] == content


def test_a_legacy_binary_part_from_the_0059_client_reaches_the_model(
        serve: Serve, run_node: RunNode) -> None:
    """@ag-ui/client 0.0.59 sends a `binary` part as the app built it (it upgrades them only
    for agents declaring a max version <= 0.0.47)."""
    model, result = run(serve, run_node, "agui0059", [{"type": "text", "text": "hi"}, BINARY])
    assert result["request"]["messages"][0]["content"][1]["type"] == "binary"
    assert model.requests[0].messages[-1].files == (
        File("data:text/csv;base64,YSxi", "text/csv", "t.csv"),)
    user = next(m for m in result["messages"] if m["id"] == "u1")
    assert user["content"][1] == {"type": "document", "source": {
        "type": "data", "value": "YSxi", "mimeType": "text/csv"}, "metadata": {"filename": "t.csv"}}


@pytest.mark.parametrize("major", [7, 6, 5])
def test_ai_sdk_file_parts_of_a_chat_reach_the_model(serve: Serve, run_node: RunNode,
                                                     major: int) -> None:
    model = ScriptedModel(["Read them."])
    base = serve(create_app({"a": Agent(model)}, store=MemoryStore()))
    first = {"id": "u0", "role": "user", "parts": [
        {"type": "text", "text": "Read these"},
        {"type": "file", "mediaType": "application/pdf", "filename": "report.pdf",
         "url": f"data:application/pdf;base64,{PDF}"},
        {"type": "file", "mediaType": "image/png", "url": "https://x.test/a.png"}]}
    out = run_node("aisdk_chat.mjs", f"{base}/agents/a/ai-sdk?v={major}",
                   {"major": major, "initialMessages": [first], "messages": ["and?"]})
    assert out["error"] is None and out["chunkErrors"] == []
    seen = model.requests[0].messages[0]
    assert seen.files == (File(f"data:application/pdf;base64,{PDF}", "application/pdf",
                               "report.pdf"),)
    assert seen.images == (Image("https://x.test/a.png", "image/png"),)
