"""Images and files in user messages, end to end: AG-UI content parts (and the legacy `binary`
part) and AI SDK `file` parts reach the model, are kept in the thread and given back; a part
the agent's model cannot take is refused before any stream (422) or before the run (library
use), naming the part, its media type and what the model takes; never dropped silently."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui.core import UserMessage
from hypothesis import assume, given
from hypothesis import strategies as st

from pyox_agents import Agent, File, Image, Message, State, ag_ui
from pyox_agents.adapters.ag_ui._parts import content_parts, user_content
from pyox_agents.adapters.ai_sdk import history_to_ui_messages
from pyox_agents.adapters.ai_sdk._user_parts import user_message, user_ui_parts
from pyox_agents.models import InputKinds, InputNotAccepted, ScriptedModel
from pyox_agents.server import create_app
from pyox_agents.state.jsonvalue import message_from_json, message_to_json
from pyox_agents.stores import SQLiteStore
from tests.ag_ui.servers import post_run, serving

pytestmark = pytest.mark.anyio

PDF = base64.b64encode(b"%PDF-1.4 tiny").decode()
WAV = base64.b64encode(b"RIFF....WAVE").decode()
IMAGES_ONLY = InputKinds({"image/*": ("data", "url")})

AG_UI_CONTENT = [
    {"type": "text", "text": "Read these"},
    {"type": "document", "source": {"type": "data", "value": PDF, "mimeType": "application/pdf"},
     "metadata": {"filename": "report.pdf"}},
    {"type": "audio", "source": {"type": "url", "value": "https://x.test/memo.wav",
                                 "mimeType": "audio/wav"}},
    {"type": "video", "source": {"type": "url", "value": "https://x.test/c", "mimeType":
                                 "video/mp4"}},
    {"type": "image", "source": {"type": "data", "value": "AAAA", "mimeType": "image/jpeg"}},
]
FILES = (File(f"data:application/pdf;base64,{PDF}", "application/pdf", "report.pdf"),
         File("https://x.test/memo.wav", "audio/wav"),
         File("https://x.test/c", "video/mp4"))
IMAGE = Image("data:image/jpeg;base64,AAAA", "image/jpeg")


def ag_ui_body(content: Any, thread: str = "t1") -> dict[str, Any]:
    return {"threadId": thread, "runId": "r1", "protocolVersion": "1.0",
            "messages": [{"id": "u1", "role": "user", "content": content}]}


def ai_sdk_body(*parts: dict[str, Any], chat: str = "c1") -> dict[str, Any]:
    return {"id": chat, "trigger": "submit-message",
            "messages": [{"id": "u1", "role": "user", "parts": list(parts)}]}


async def test_ag_ui_document_audio_and_video_parts_reach_the_model_and_come_back(
        tmp_path: Path) -> None:
    model = ScriptedModel(["Read."])
    app = create_app({"a": Agent(model)}, store=SQLiteStore(tmp_path / "s.db"))
    async with serving(app) as url, httpx.AsyncClient() as client:
        response, events = await post_run(client, f"{url}/agents/a/ag-ui",
                                          ag_ui_body(AG_UI_CONTENT))
        thread = (await client.get(f"{url}/threads/t1")).json()
    assert response.status_code == 200
    assert model.requests[0].messages[-1] == Message.user("Read these", IMAGE, *FILES)
    snapshot = next(e for e in events if e["type"] == "MESSAGES_SNAPSHOT")
    assert snapshot["messages"][0]["content"] == AG_UI_CONTENT
    user = thread["messages"][0]
    assert user["images"] == [{"url": IMAGE.url, "media_type": "image/jpeg"}]
    assert user["files"] == [
        {"url": FILES[0].url, "media_type": "application/pdf", "filename": "report.pdf"},
        {"url": "https://x.test/memo.wav", "media_type": "audio/wav"},
        {"url": "https://x.test/c", "media_type": "video/mp4"}]


async def test_ag_ui_legacy_binary_parts_are_read_as_media_parts() -> None:
    """@ag-ui/core 0.0.59's `BinaryInputContent`: {type: "binary", mimeType, data | url,
    filename?} (a 0.0.59 client sends it as the app built it)."""
    model = ScriptedModel(["Read."])
    content = [{"type": "binary", "mimeType": "application/pdf", "data": PDF,
                "filename": "report.pdf"},
               {"type": "binary", "mimeType": "audio/wav", "url": "https://x.test/memo.wav"}]
    async with serving(create_app({"a": Agent(model)})) as url, httpx.AsyncClient() as client:
        response, _ = await post_run(client, f"{url}/agents/a/ag-ui", ag_ui_body(content))
    assert response.status_code == 200
    assert model.requests[0].messages[-1].files == FILES[:2]


async def test_ag_ui_stream_without_the_server_reads_binary_parts_too() -> None:
    model = ScriptedModel(["Read."])
    body = ag_ui_body([{"type": "binary", "mimeType": "application/pdf", "data": PDF,
                        "filename": "report.pdf"}])
    events = [event async for event in ag_ui.stream(Agent(model), body)]
    assert events[-1].type == "RUN_FINISHED"
    assert model.requests[0].messages[-1].files == FILES[:1]
    assert body["messages"][0]["content"][0]["type"] == "binary"  # the caller's, unchanged


async def test_ag_ui_binary_part_with_only_an_id_is_a_422_naming_it() -> None:
    content = [{"type": "text", "text": "hi"},
               {"type": "binary", "mimeType": "application/pdf", "id": "f1"}]
    async with serving(create_app({"a": Agent(ScriptedModel(["x"]))})) as url, \
            httpx.AsyncClient() as client:
        response, _ = await post_run(client, f"{url}/agents/a/ag-ui", ag_ui_body(content))
    assert response.status_code == 422
    assert response.json()["field"] == "messages[0].content[1]"
    assert "neither data nor url" in response.json()["error"]


async def test_ag_ui_part_the_model_cannot_take_is_a_422_before_any_stream() -> None:
    model = ScriptedModel(["never"], inputs=IMAGES_ONLY)
    async with serving(create_app({"a": Agent(model)})) as url, httpx.AsyncClient() as client:
        response, _ = await post_run(client, f"{url}/agents/a/ag-ui", ag_ui_body(AG_UI_CONTENT))
    assert response.status_code == 422 and model.requests == []
    assert response.json() == {
        "error": "messages[0].content[1] is a file of type application/pdf sent as data, "
                 "which model 'scripted' cannot take (it takes image/* (data or URL)); send "
                 "one of those, or run an agent whose model takes application/pdf",
        "field": "messages[0].content[1]"}


async def test_ai_sdk_file_parts_of_any_media_type_reach_the_model_and_the_thread(
        tmp_path: Path) -> None:
    model = ScriptedModel(["Read."])
    store = SQLiteStore(tmp_path / "s.db")
    body = ai_sdk_body({"type": "text", "text": "Read these"},
                       {"type": "file", "mediaType": "application/pdf",
                        "url": f"data:application/pdf;base64,{PDF}", "filename": "report.pdf"},
                       {"type": "file", "mediaType": "audio/wav", "url": "https://x.test/memo.wav"},
                       {"type": "file", "mediaType": "image/jpeg", "url": IMAGE.url})
    async with serving(create_app({"a": Agent(model)}, store=store)) as url, \
            httpx.AsyncClient() as client:
        response = await client.post(f"{url}/agents/a/ai-sdk", json=body, timeout=30)
        thread = (await client.get(f"{url}/threads/c1")).json()
    assert response.status_code == 200
    sent = Message.user("Read these", IMAGE, *FILES[:2])
    assert model.requests[0].messages[-1] == sent
    assert store.load("c1").messages[0] == sent
    assert [f["media_type"] for f in thread["messages"][0]["files"]] == ["application/pdf",
                                                                        "audio/wav"]


async def test_ai_sdk_file_part_the_model_cannot_take_is_a_422_naming_it() -> None:
    model = ScriptedModel(["never"], inputs=IMAGES_ONLY)
    body = ai_sdk_body({"type": "text", "text": "hi"},
                       {"type": "file", "mediaType": "audio/wav", "url": f"data:audio/wav;base64,"
                                                                        f"{WAV}"})
    async with serving(create_app({"a": Agent(model)})) as url, httpx.AsyncClient() as client:
        response = await client.post(f"{url}/agents/a/ai-sdk", json=body, timeout=30)
    assert response.status_code == 422 and model.requests == []
    assert response.text == ("messages[0].parts[1] is a file of type audio/wav sent as data, "
                             "which model 'scripted' cannot take (it takes image/* (data or "
                             "URL)); send one of those, or run an agent whose model takes "
                             "audio/wav")


async def test_ai_sdk_file_part_without_a_media_type_is_a_422_not_dropped() -> None:
    body = ai_sdk_body({"type": "text", "text": "hi"}, {"type": "file", "url": "https://x.test/a"})
    async with serving(create_app({"a": Agent(ScriptedModel(["x"]))})) as url, \
            httpx.AsyncClient() as client:
        response = await client.post(f"{url}/agents/a/ai-sdk", json=body, timeout=30)
    assert response.status_code == 422
    assert response.text.startswith("messages[0].parts[1] is a file part without a url and a "
                                    "mediaType")


def test_library_run_with_a_file_the_model_cannot_take_fails_before_the_run() -> None:
    model = ScriptedModel(["never"], inputs=IMAGES_ONLY)
    state = State(messages=[Message.user("Read", FILES[0])])
    with pytest.raises(InputNotAccepted) as caught:
        Agent(model).run(state)
    assert str(caught.value) == (
        "messages[0].files[0] is a file of type application/pdf sent as data, which model "
        "'scripted' cannot take (it takes image/* (data or URL)); send one of those, or run an "
        "agent whose model takes application/pdf")
    assert model.requests == [] and isinstance(caught.value, ValueError)


def test_think_with_a_file_the_model_cannot_take_fails_before_asking_it() -> None:
    model = ScriptedModel(["never"], inputs=InputKinds({}))
    state = State(messages=[Message.user("", Image("https://x.test/a.png"))])
    with pytest.raises(InputNotAccepted, match=r"messages\[0\]\.images\[0\] is an image of "
                                               r"type image/png sent by URL.*\(it takes text "
                                               r"only\)"):
        Agent(model).think(state)


def test_a_traced_request_names_its_files_as_uri_parts() -> None:
    """Tracing that captures content shows a message's files beside its images (GenAI
    conventions: uri parts with a modality)."""
    from pyox_agents.runtime._tracing_content import input_messages

    _, others = input_messages([Message.user("Read", IMAGE, FILES[0], FILES[1])])
    assert json.loads(others)[0]["parts"][1:] == [
        {"type": "uri", "modality": "image", "mime_type": "image/jpeg", "uri": IMAGE.url},
        {"type": "uri", "modality": "document", "mime_type": "application/pdf",
         "uri": FILES[0].url},
        {"type": "uri", "modality": "audio", "mime_type": "audio/wav", "uri": FILES[1].url}]


# -- round trips ---------------------------------------------------------------------------------

media_types = st.sampled_from(["application/pdf", "audio/wav", "audio/mpeg", "video/mp4",
                               "text/plain", "application/vnd.ms-excel"])
names = st.none() | st.text(min_size=1, max_size=12)
files = st.builds(lambda t, data, name, by_url: File(
    f"https://x.test/f{len(data)}" if by_url else
    f"data:{t};base64,{base64.b64encode(data).decode()}", t, name),
    media_types, st.binary(max_size=24), names, st.booleans())
images = st.builds(lambda data: Image(f"data:image/png;base64,{base64.b64encode(data).decode()}"),
                   st.binary(max_size=12))
user_messages = st.builds(lambda text, i, f: Message.user(text, *i, *f), st.text(max_size=20),
                          st.lists(images, max_size=2), st.lists(files, max_size=3))


@given(user_messages)
def test_a_user_message_survives_its_json_row(message: Message) -> None:
    row = json.loads(json.dumps(message_to_json(message)))
    assert message_from_json(row) == message


@given(user_messages)
def test_ag_ui_content_parts_give_back_the_same_message(message: Message) -> None:
    content = content_parts(message)
    dumped = content if isinstance(content, str) else [
        p.model_dump(by_alias=True, exclude_none=True) for p in content]
    parsed = UserMessage.model_validate({"id": "u", "role": "user", "content": dumped}).content
    read = user_content(parsed, "messages[0]")
    assert Message.user(read.text, *read.images, *read.files) == message


@given(user_messages)
def test_ai_sdk_ui_parts_give_back_the_same_message(message: Message) -> None:
    again, _ = user_message({"role": "user", "parts": user_ui_parts(message)}, "messages[0]")
    expected = message if message.content or message.images or message.files else None
    assert again == expected


@given(user_messages)
def test_a_reloaded_ai_sdk_history_gives_back_each_user_message(message: Message) -> None:
    """Rule: a thread's history as `useChat` reloads it (`history_to_ui_messages`) holds each
    user message as the client sent it: its text, images and files (a PDF's part and its
    filename were dropped, and a file-only message got an empty text part)."""
    assume(message.content or message.images or message.files)
    conversation = State()
    conversation.add_message(message)
    (user,) = history_to_ui_messages(conversation.history)
    again, _ = user_message(user, "messages[0]")
    assert again == message
