"""A user message's images and files in each provider's request format, and the kinds each
provider takes (`OPENAI_INPUTS`, `ANTHROPIC_INPUTS`; `Model.accepts` reads them).

OpenAI Chat Completions: images as `image_url` (https: or data: URL), WAV and MP3 audio as
`input_audio` (base64 data), PDFs as `file` (`file_data` as a data: URL, with a filename).
Anthropic Messages: images as `image`, PDFs and plain text as `document` (base64, text or URL
source).
"""

from __future__ import annotations

import base64
import binascii
import urllib.parse
from typing import Any

from pyox_agents.models._inputs import InputKinds, base_media_type
from pyox_agents.state.messages import File, Message

__all__ = ["ANTHROPIC_INPUTS", "OPENAI_INPUTS", "anthropic_blocks", "data_base64",
           "openai_parts"]

OPENAI_INPUTS = InputKinds({
    "image/*": ("data", "url"),
    "audio/wav": ("data",), "audio/x-wav": ("data",),
    "audio/mpeg": ("data",), "audio/mp3": ("data",),
    "application/pdf": ("data",),
})
"""What the Chat Completions API takes in a user message."""

ANTHROPIC_INPUTS = InputKinds({
    "image/jpeg": ("data", "url"), "image/png": ("data", "url"),
    "image/gif": ("data", "url"), "image/webp": ("data", "url"),
    "application/pdf": ("data", "url"),
    "text/plain": ("data", "url"),
})
"""What the Messages API takes in a user message."""

_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3",
                  "audio/mp3": "mp3"}


def data_base64(url: str) -> tuple[str, str] | None:
    """(media type, base64 data) of a `data:` URL (base64 or percent-encoded), else None."""
    if not url.startswith("data:") or "," not in url:
        return None
    head, data = url[5:].split(",", 1)
    if head.endswith(";base64"):
        return head[:-7], data
    raw = urllib.parse.unquote_to_bytes(data)
    return head, base64.b64encode(raw).decode("ascii")


def openai_parts(message: Message) -> list[dict[str, Any]]:
    """The content parts of user message `message` for Chat Completions: text, then images,
    then files."""
    parts: list[dict[str, Any]] = []
    if message.content:
        parts.append({"type": "text", "text": message.content})
    parts.extend({"type": "image_url", "image_url": {"url": image.url}}
                 for image in message.images)
    parts.extend(_openai_file(file) for file in message.files)
    return parts


def _openai_file(file: File) -> dict[str, Any]:
    media_type = base_media_type(file.media_type)
    data = data_base64(file.url)
    if media_type.startswith("image/"):
        return {"type": "image_url", "image_url": {"url": file.url}}
    if media_type in _AUDIO_FORMATS and data is not None:
        return {"type": "input_audio",
                "input_audio": {"data": data[1], "format": _AUDIO_FORMATS[media_type]}}
    if data is not None:
        name = file.filename or f"file.{media_type.split('/')[-1]}"
        return {"type": "file", "file": {"file_data": f"data:{media_type};base64,{data[1]}",
                                         "filename": name}}
    raise ValueError(f"Chat Completions cannot take a {file.media_type} file by URL "
                     f"({file.url[:60]}); send its data")


def anthropic_blocks(message: Message) -> list[dict[str, Any]]:
    """The content blocks of user message `message` for the Messages API: images, files, then
    the text (Anthropic's advice: media before the question)."""
    blocks = [_anthropic_image(image.url, image.media_type) for image in message.images]
    blocks.extend(_anthropic_file(file) for file in message.files)
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    return blocks


def _anthropic_image(url: str, media_type: str) -> dict[str, Any]:
    data = data_base64(url)
    if data is not None:
        return {"type": "image",
                "source": {"type": "base64", "media_type": data[0] or media_type,
                           "data": data[1]}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _anthropic_file(file: File) -> dict[str, Any]:
    media_type = base_media_type(file.media_type)
    if media_type.startswith("image/"):
        return _anthropic_image(file.url, media_type)
    data = data_base64(file.url)
    source: dict[str, Any]
    if data is None:
        source = {"type": "url", "url": file.url}
    elif media_type == "text/plain":
        source = {"type": "text", "media_type": "text/plain", "data": _text(data[1])}
    else:
        source = {"type": "base64", "media_type": media_type, "data": data[1]}
    block: dict[str, Any] = {"type": "document", "source": source}
    if file.filename:
        block["title"] = file.filename
    return block


def _text(data: str) -> str:
    try:
        return base64.b64decode(data, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise ValueError(f"a text/plain file's data is not base64 of UTF-8 text: {exc}") from None
