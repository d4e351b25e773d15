"""Images and files in user messages reach OpenAI- and Anthropic-compatible servers in each
API's own format, and a model refuses what its API cannot take before anything is sent."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from pyox_agents import Agent, File, Image, Message, State
from pyox_agents.models import ANY_INPUT, InputKinds, InputNotAccepted, ScriptedModel
from pyox_agents.models.anthropic import AnthropicModel
from pyox_agents.models.openai import OpenAIModel

from .fake_providers import FakeProvider, an_text, oa_text

pytestmark = pytest.mark.anyio

PDF = base64.b64encode(b"%PDF-1.4 tiny").decode()
WAV = base64.b64encode(b"RIFF....WAVEfmt ").decode()
MP3 = base64.b64encode(b"ID3\x03").decode()
NOTE = base64.b64encode("milk, eggs ✓".encode()).decode()


def sent_user_content(server: FakeProvider) -> Any:
    messages = server.requests[0].json["messages"]
    return next(m for m in messages if m["role"] == "user")["content"]


async def test_openai_gets_images_audio_and_pdfs_as_chat_completions_parts(
        openai_server: FakeProvider) -> None:
    openai_server.script(oa_text("Read them."))
    model = OpenAIModel("gpt-5-mini", base_url=openai_server.url, api_key="sk-test")
    message = Message.user(
        "What is in these?",
        Image("https://x.test/a.png"),
        File(f"data:audio/wav;base64,{WAV}", "audio/wav"),
        File(f"data:audio/mpeg;base64,{MP3}", "audio/mpeg", "memo.mp3"),
        File(f"data:application/pdf;base64,{PDF}", "application/pdf", "report.pdf"),
        File(f"data:application/pdf;base64,{PDF}", "application/pdf"),
    )
    await Agent(model).arun(State(messages=[message]))
    assert sent_user_content(openai_server) == [
        {"type": "text", "text": "What is in these?"},
        {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
        {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}},
        {"type": "input_audio", "input_audio": {"data": MP3, "format": "mp3"}},
        {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF}",
                                  "filename": "report.pdf"}},
        {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF}",
                                  "filename": "file.pdf"}},
    ]


async def test_anthropic_gets_images_and_documents_as_messages_api_blocks(
        anthropic_server: FakeProvider) -> None:
    anthropic_server.script(an_text("Read them."))
    model = AnthropicModel("claude-test", base_url=anthropic_server.url, api_key="k")
    message = Message.user(
        "Summarize",
        Image("data:image/jpeg;base64,AAAA", "image/jpeg"),
        File(f"data:application/pdf;base64,{PDF}", "application/pdf", "report.pdf"),
        File("https://x.test/paper.pdf", "application/pdf"),
        File(f"data:text/plain;base64,{NOTE}", "text/plain", "list.txt"),
        File("https://x.test/notes.txt", "text/plain"),
    )
    await Agent(model).arun(State(messages=[message]))
    assert sent_user_content(anthropic_server) == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg",
                                     "data": "AAAA"}},
        {"type": "document", "title": "report.pdf",
         "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}},
        {"type": "document", "source": {"type": "url", "url": "https://x.test/paper.pdf"}},
        {"type": "document", "title": "list.txt",
         "source": {"type": "text", "media_type": "text/plain", "data": "milk, eggs ✓"}},
        {"type": "document", "source": {"type": "url", "url": "https://x.test/notes.txt"}},
        {"type": "text", "text": "Summarize"},
    ]


@pytest.mark.parametrize(("model", "media_type", "source", "taken"), [
    ("openai", "image/webp", "url", True),
    ("openai", "application/pdf", "data", True),
    ("openai", "application/pdf", "url", False),
    ("openai", "audio/wav", "data", True),
    ("openai", "audio/ogg", "data", False),
    ("openai", "video/mp4", "data", False),
    ("anthropic", "application/pdf", "url", True),
    ("anthropic", "text/plain", "data", True),
    ("anthropic", "audio/wav", "data", False),
    ("anthropic", "image/bmp", "data", False),
])
def test_a_provider_model_says_which_kinds_it_takes(model: str, media_type: str, source: Any,
                                                    taken: bool) -> None:
    made = (OpenAIModel("gpt-5-mini", api_key="k") if model == "openai"
            else AnthropicModel("claude-test", api_key="k"))
    assert made.accepts(media_type, source) is taken


def test_stand_in_models_take_every_kind() -> None:
    assert ScriptedModel(["hi"]).accepts("video/mp4", "url")
    assert ScriptedModel(["hi"]).input_kinds == ANY_INPUT


async def test_a_file_the_model_cannot_take_fails_before_anything_is_sent(
        openai_server: FakeProvider) -> None:
    model = OpenAIModel("gpt-5-mini", base_url=openai_server.url, api_key="sk-test")
    video = Message.user("Watch this", File("https://x.test/clip.mp4", "video/mp4"))
    with pytest.raises(InputNotAccepted, match=r"messages\[0\]\.files\[0\] is a file of type "
                                               r"video/mp4 sent by URL, which model "
                                               r"'openai:gpt-5-mini' cannot take \(it takes "
                                               r"image/\*") as caught:
        await Agent(model).arun(State(messages=[video]))
    assert caught.value.path == "messages[0].files[0]"
    assert openai_server.requests == []


def test_a_server_that_takes_fewer_kinds_says_so() -> None:
    model = OpenAIModel("llama3.2", base_url="http://127.0.0.1:9/v1",
                        inputs=InputKinds({"image/*": ("data", "url")}))
    assert model.accepts("image/png", "url") and not model.accepts("application/pdf")
    assert model.input_kinds.describe() == "image/* (data or URL)"
