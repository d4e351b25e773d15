"""A user `UIMessage`'s parts <-> the runtime's text, `Image`s and `File`s.

`file` parts of `image/*` become images, of any other media type files (with the part's
`filename`); going back, a thread's user message becomes text and `file` parts again (the
`UIMessage` the client sent, for the history a client reloads).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyox_agents._run_request import RequestError
from pyox_agents.state.messages import File, Image, Message

__all__ = ["user_message", "user_ui_parts"]


def user_message(ui: Mapping[str, Any], where: str
                  ) -> tuple[Message | None, dict[tuple[str, int], str]]:
    """A UI user message as the runtime's (None when it has no text and no file), and the path
    of each of its images and files."""
    raw = ui.get("parts")
    indexed = list(enumerate(raw)) if isinstance(raw, list) else []
    texts: list[str] = []
    images: list[Image] = []
    files: list[File] = []
    paths: dict[tuple[str, int], str] = {}
    for index, part in indexed:
        if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
            continue
        if part["type"] == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part["type"] == "file":
            url, media, name = part.get("url"), part.get("mediaType"), part.get("filename")
            if not isinstance(url, str) or not url or not isinstance(media, str) or not media:
                raise RequestError(
                    422, f"{where}.parts[{index}] is a file part without a url and a "
                         "mediaType: send {type: \"file\", mediaType, url} (a data: URL or "
                         "an https: URL)", f"{where}.parts[{index}]")
            if media.startswith("image/"):
                paths["images", len(images)] = f"{where}.parts[{index}]"
                images.append(Image(url, media))
            else:
                paths["files", len(files)] = f"{where}.parts[{index}]"
                files.append(File(url, media, name if isinstance(name, str) and name else None))
    content = ui.get("content")
    if not isinstance(raw, list) and isinstance(content, str):
        texts = [content]  # a pre-v5 message: {role, content}
    text = "\n".join(texts)
    if not (text or images or files):
        return None, paths
    message_id = ui.get("id")
    return Message(role="user", content=text, images=tuple(images), files=tuple(files),
                   id=message_id if isinstance(message_id, str) and message_id else None), paths


def user_ui_parts(message: Message) -> list[dict[str, Any]]:
    """A user message's `UIMessage` parts: its text, then a `file` part per image and file."""
    parts: list[dict[str, Any]] = []
    if message.content:
        parts.append({"type": "text", "text": message.content})
    parts.extend({"type": "file", "mediaType": image.media_type, "url": image.url}
                 for image in message.images)
    for file in message.files:
        part = {"type": "file", "mediaType": file.media_type, "url": file.url}
        if file.filename is not None:
            part["filename"] = file.filename
        parts.append(part)
    return parts
