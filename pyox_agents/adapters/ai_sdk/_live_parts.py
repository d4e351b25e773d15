"""A tool's live parts and the message's metadata, as UI message stream chunks.

- `ctx.emit(name, value, id=, transient=)` -> `data-<name>` (`id` and `transient` when given):
  a part of the same id replaces the earlier one; a transient one only reaches `onData`.
- `ctx.progress(id, kind, content)` -> `data-<kind>` with that id: updated in place.
- `ctx.cite(...)` -> `source-url` (a web page) or `source-document` (a document).
- `ctx.attach_file(...)` -> `file`.
- `start` / `finish` carry `messageMetadata`: `{createdAt, model}` when the run starts,
  `{usage: {inputTokens, outputTokens}, cost}` when it ends (`message.metadata` in `useChat`).
"""

from __future__ import annotations

from typing import Any

from pyox_agents.events import CustomEvent, FileAttached, Progress, RunStarted, SourceCited
from pyox_agents.state.messages import Usage

__all__ = ["finish_metadata", "live_part", "start_metadata"]


def live_part(event: CustomEvent | Progress | SourceCited | FileAttached) -> dict[str, Any]:
    """The chunk of a tool's live event."""
    match event:
        case CustomEvent(name=name, value=value, id=part_id, transient=transient):
            chunk: dict[str, Any] = {"type": f"data-{name}", "data": value}
            if part_id is not None:
                chunk["id"] = part_id
            if transient:
                chunk["transient"] = True
            return chunk
        case Progress(id=part_id, kind=kind, content=content):
            return {"type": f"data-{kind}", "id": part_id, "data": content}
        case SourceCited(source_id=source_id, url=url, title=title) if url is not None:
            return {"type": "source-url", "sourceId": source_id, "url": url,
                    **({"title": title} if title is not None else {})}
        case SourceCited(source_id=source_id, title=title, media_type=media, filename=name):
            return {"type": "source-document", "sourceId": source_id,
                    "mediaType": media or "application/octet-stream",
                    "title": title or name or source_id,
                    **({"filename": name} if name is not None else {})}
        case FileAttached(url=url, media_type=media):
            return {"type": "file", "url": url, "mediaType": media}
    raise TypeError(f"not a live event: {event!r}")  # pragma: no cover - the union is closed


def start_metadata(event: RunStarted) -> dict[str, Any]:
    """What `start.messageMetadata` says of a run: when it began and which model answers."""
    meta: dict[str, Any] = {}
    if event.started_at is not None:
        meta["createdAt"] = event.started_at
    if event.model is not None:
        meta["model"] = event.model
    return meta


def finish_metadata(usage: Usage) -> dict[str, Any]:
    """What `finish.messageMetadata` says of a run: the tokens it used and what they cost."""
    return {"usage": {"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens},
            "cost": usage.cost}
