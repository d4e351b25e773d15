"""A user message's AG-UI content parts <-> the runtime's text, `Image`s and `File`s.

Images come in as `image` parts; documents (PDF, text, ...), audio and video as `document`,
`audio` and `video` parts; each with a `data` (base64) or `url` source. A `metadata.filename`
is kept. The legacy `binary` part of pre-1.0 clients (`{type: "binary", mimeType, data | url,
filename?}`) is read as the media part its media type names, as `@ag-ui/client` itself
upgrades it. Going back, a thread's user message becomes the same parts again.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping, Sequence
from typing import Any

from ag_ui.core import (
    AudioPart,
    DataSource,
    DocumentPart,
    FileSource,
    ImagePart,
    TextPart,
    UrlSource,
    VideoPart,
)

from pyox_agents._run_request import RequestError
from pyox_agents.state.messages import File, Image, Message

__all__ = ["UserContent", "content_parts", "upgrade_binary_parts", "user_content"]

_MEDIA = (ImagePart, AudioPart, VideoPart, DocumentPart)


class UserContent:
    """What a user message's content parts hold: its text, images, files, and the index in
    `content` of each image and file (for error paths)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.images: list[Image] = []
        self.files: list[File] = []
        self.image_at: list[int] = []
        self.file_at: list[int] = []

    @property
    def text(self) -> str:
        """The text parts, one per line."""
        return "\n".join(self.texts)


def user_content(content: str | Sequence[Any], where: str) -> UserContent:
    """The text, images and files of a user message's `content` (`where` is its path).

    Raises:
        RequestError: 422 naming the part: a provider file handle (`file` source), a URL
            source whose media type is neither given nor told by the URL.
    """
    out = UserContent()
    if isinstance(content, str):
        out.texts.append(content)
        return out
    for index, part in enumerate(content):
        at = f"{where}.content[{index}]"
        if isinstance(part, TextPart):
            out.texts.append(part.text)
        elif isinstance(part, ImagePart) and not isinstance(part.source, FileSource):
            out.images.append(Image(_url(part), _media_type(part) or "image/png"))
            out.image_at.append(index)
        elif isinstance(part, _MEDIA) and not isinstance(part.source, FileSource):
            media_type = _media_type(part)
            if media_type is None:
                raise RequestError(
                    422, f"{at} is a {part.type} by URL with no mimeType, and its URL does not "
                         "say what it is: give source.mimeType (e.g. \"application/pdf\")",
                    f"{at}.source.mimeType")
            out.files.append(File(_url(part), media_type, _filename(part)))
            out.file_at.append(index)
        else:
            kind = getattr(part, "type", type(part).__name__)
            raise RequestError(
                422, f"{at} is a {kind} part with a file source (a provider's file handle), "
                     "which this agent cannot pass on; send the bytes as a data source or a "
                     "url source", at)
    return out


def _url(part: Any) -> str:
    source = part.source
    if isinstance(source, DataSource):
        return f"data:{source.mime_type};base64,{source.value}"
    return str(source.value)


def _media_type(part: Any) -> str | None:
    source = part.source
    if isinstance(source, DataSource):
        return str(source.mime_type)
    assert isinstance(source, UrlSource)
    return source.mime_type or mimetypes.guess_type(source.value)[0]


def _filename(part: Any) -> str | None:
    metadata = part.metadata
    name = metadata.get("filename") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) and name else None


# -- the legacy binary part --------------------------------------------------------------------


def upgrade_binary_parts(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The raw `RunAgentInput` JSON `data` with each legacy `binary` part of a message's content
    read as the media part its `mimeType` names (image/audio/video, else document); `data`
    itself when it has none (it is never changed).

    Raises:
        RequestError: 422 naming the part, for a binary part with neither data nor url (an
            `id` only, which this server cannot resolve).
    """
    messages = data.get("messages")
    if not isinstance(messages, list) or not any(map(_has_binary, messages)):
        return data
    return {**data, "messages": [
        {**message, "content": [
            _upgraded(part, f"messages[{m}].content[{p}]") if _is_binary(part) else part
            for p, part in enumerate(message["content"])]} if _has_binary(message) else message
        for m, message in enumerate(messages)]}


def _has_binary(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(map(_is_binary, content))


def _is_binary(part: Any) -> bool:
    return (isinstance(part, dict) and part.get("type") == "binary"
            and isinstance(part.get("mimeType"), str))


def _upgraded(part: dict[str, Any], where: str) -> dict[str, Any]:
    mime = part["mimeType"]
    kind = next((k for k in ("image", "audio", "video") if mime.startswith(k + "/")),
                "document")
    if isinstance(part.get("data"), str):
        source = {"type": "data", "value": part["data"], "mimeType": mime}
    elif isinstance(part.get("url"), str):
        source = {"type": "url", "value": part["url"], "mimeType": mime}
    else:
        raise RequestError(
            422, f"{where} is a binary part ({mime}) with neither data nor url (an id alone "
                 "names nothing this server can read): send the file's base64 data or its url",
            where)
    upgraded: dict[str, Any] = {"type": kind, "source": source}
    if isinstance(part.get("filename"), str):
        upgraded["metadata"] = {"filename": part["filename"]}
    return upgraded


# -- back to parts -----------------------------------------------------------------------------


def content_parts(message: Message) -> str | list[Any]:
    """A user message's AG-UI `content`: its text alone, or text, image and file parts."""
    if not message.images and not message.files:
        return message.content
    parts: list[Any] = [TextPart(text=message.content)] if message.content else []
    parts.extend(ImagePart(source=_source(image.url, image.media_type))
                 for image in message.images)
    for file in message.files:
        kind = {"audio": AudioPart, "video": VideoPart}.get(
            file.media_type.split("/")[0], DocumentPart)
        metadata = {"filename": file.filename} if file.filename else None
        parts.append(kind(source=_source(file.url, file.media_type), metadata=metadata))
    return parts


def _source(url: str, media_type: str) -> DataSource | UrlSource:
    if url.startswith("data:") and ";base64," in url:
        head, value = url[5:].split(";base64,", 1)
        return DataSource(value=value, mime_type=head or media_type)
    return UrlSource(value=url, mime_type=media_type)
