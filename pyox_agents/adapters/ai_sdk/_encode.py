"""The AI SDK UI message stream (`ai` 5, 6 and 7; `useChat` with `DefaultChatTransport`).

- `parse_request(body, tools, sdk_version=)`: the transport's body -> `(Chat, RunRequest)`
  (_request.py).
- `translate(chat, events, sdk_version=)`: a run's events -> chunk dicts (_chunks.py has the
  mapping and what each `ai` major is sent).
- `encode_chunk(chunk)`: one chunk as compact JSON (the text of an SSE `data:` line);
  `encode(chunks)`: whole SSE frames, ending `data: [DONE]`; `frame_batches(chat, batches)`:
  a batch's frames in one write, as a server streams them; `frame_log(chat, reads, after=)`:
  the same of a run's log, each frame with its `id:`, from where a reader resumes.

The shared state travels as transient `data-state-delta` parts (an RFC 6902 patch per change,
for `onData` handlers that keep a live copy) and one persistent `data-state` part (id "state")
per assistant message, replaced in place at the start, at step ends (or after every change, or
only at the end: `state_snapshots`) and at the end (_state_parts.py).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterable, AsyncIterator, Mapping, Sequence
from typing import Any

from pyox_agents.adapters._event_ids import Cursor, FrameIds
from pyox_agents.adapters._translating import Translating, sse_frames
from pyox_agents.adapters.ai_sdk._chunks import Chunk, ChunkWriter
from pyox_agents.adapters.ai_sdk._request import Chat
from pyox_agents.events import RunFailed, RunStarted, RuntimeEvent, StateSnapshots
from pyox_agents.state._run_parts import INTERNAL_ERROR_MESSAGE
from pyox_agents.state.run import AgentError

__all__ = ["DONE", "HEADERS", "Frames", "encode", "encode_chunk", "frame_batches", "frame_log",
           "translate", "translate_batches"]

_log = logging.getLogger(__name__)

HEADERS: Mapping[str, str] = {"content-type": "text/event-stream", "cache-control": "no-cache",
                              "connection": "keep-alive", "x-vercel-ai-ui-message-stream": "v1",
                              "x-accel-buffering": "no"}
"""The response headers of a UI message stream (as the AI SDK's own server helpers set them)."""

DONE = "[DONE]"


async def translate(chat: Chat, events: AsyncIterable[RuntimeEvent], *, sdk_version: int = 7,
                    state_snapshots: StateSnapshots = "step") -> AsyncIterator[Chunk]:
    """The chunks of a run's `events` for the chat, as an `ai` `sdk_version` client reads them;
    `state_snapshots` (the agent's) says when the whole shared state is written.

    Deterministic: the same events give the same chunks (a replay's `start` carries the same
    `messageId`). The last chunk is one `finish`; everything opened is closed before it.

    Raises:
        ValueError: `sdk_version` is not 5, 6 or 7.
    """
    batches = translate_batches(chat, ((event,) async for event in events),
                                sdk_version=sdk_version, state_snapshots=state_snapshots)
    async for batch in batches:
        for chunk in batch:
            yield chunk


async def translate_batches(chat: Chat, batches: AsyncIterable[Sequence[RuntimeEvent]], *,
                            sdk_version: int = 7, state_snapshots: StateSnapshots = "step"
                            ) -> AsyncIterator[list[Chunk]]:
    """`translate`, a batch at a time (a server writes each batch in one go).

    Reads `batches` to their end, past `finish`: a server's run is then over, so the client's
    next request finds the chat free.
    """
    writer = ChunkWriter(chat, sdk_version, state_snapshots)
    async for batch in batches:
        out = [chunk for event in batch for chunk in writer.write(event)]
        if out:
            yield out


def frame_batches(chat: Chat, batches: AsyncIterable[Sequence[RuntimeEvent]], *,
                  sdk_version: int = 7, state_snapshots: StateSnapshots = "step") -> Frames:
    """`translate_batches` as a server writes it: each batch's chunks as SSE frames in one
    write, then `data: [DONE]`. A read or a translation that raises is logged, and the stream
    ends as a failed run's does (`error`, `finish`), then `[DONE]`.

    Raises:
        ValueError: `sdk_version` is not 5, 6 or 7.
    """
    return Frames(ChunkWriter(chat, sdk_version, state_snapshots), chat.id, batches)


def frame_log(chat: Chat, reads: AsyncIterable[tuple[int, Sequence[RuntimeEvent]]], *,
              sdk_version: int = 7, state_snapshots: StateSnapshots = "step",
              after: Cursor | None = None) -> Frames:
    """`frame_batches` of a run's log, read from its first event (`reads`: each batch with the
    index of its first event), each frame with its SSE `id:` (`pyox_agents.adapters._event_ids`).
    `after`: a reader that resumes gets only the frames after it; the chunks before it are
    made (they open the parts it continues) but not written. It holds the message it was
    streaming, as `ai` keeps it after a dropped connection (`resumeStreamIsReplay: false`).

    Raises:
        ValueError: `sdk_version` is not 5, 6 or 7.
    """
    return Frames(ChunkWriter(chat, sdk_version, state_snapshots), chat.id, reads,
                  FrameIds(after))


class Frames(Translating[Any, bytes]):
    """The stream `frame_batches` gives: it reads `batches` to their end, past `finish` (a
    server's run is then over, so the client's next request finds the chat free). With `ids`,
    `batches` are a run's log read from its start, each with the index of its first event
    (`frame_log`)."""

    def __init__(self, writer: ChunkWriter, chat_id: str, batches: AsyncIterable[Any],
                 ids: FrameIds | None = None) -> None:
        super().__init__(batches)
        self._writer = writer
        self._chat_id = chat_id
        self._ids = ids

    def _translated(self, batch: Any) -> bytes | None:
        if self._ids is not None:
            return self._numbered(*batch)
        texts: list[str] = []
        for event in batch:
            text = self._writer.delta_json(event)  # a delta: its chunk's JSON straight from it
            if text is not None:
                texts.append(text)
            else:
                texts.extend(encode_chunk(chunk) for chunk in self._writer.write(event))
        return sse_frames(texts) if texts else None

    def _numbered(self, first: int, batch: Sequence[RuntimeEvent]) -> bytes | None:
        ids, writer = self._ids, self._writer
        assert ids is not None
        wanted = -1 if ids.after is None else ids.after.index  # events after it: all frames
        out: list[str] = []
        for index, event in enumerate(batch, first):
            if index == 0 and type(event) is RunStarted:
                ids.begin(event.run_id)
            text = writer.delta_json(event)
            if text is not None and index > wanted:  # (most of a stream: one frame, written)
                out.append(f"id: {ids.tag}{index}\ndata: {text}\n\n")
                continue
            texts = [text] if text is not None else [encode_chunk(chunk)
                                                     for chunk in writer.write(event)]
            skip = ids.skipped(index, len(texts))
            if skip < len(texts):
                out.append(ids.written(index, texts, skip))
        return "".join(out).encode() if out else None

    def _last(self) -> bytes:
        return sse_frames([DONE])

    def _failed(self, exc: Exception) -> bytes:
        _log.error("streaming the run of chat %s failed", self._chat_id, exc_info=exc)
        try:
            chunks = self._writer.write(RunFailed(AgentError("internal_error",
                                                             INTERNAL_ERROR_MESSAGE)))
        except Exception:  # the translation itself is broken: its end, without it
            chunks = [{"type": "error", "errorText": INTERNAL_ERROR_MESSAGE},
                      {"type": "finish", "finishReason": "error"}]
        return sse_frames([*(encode_chunk(chunk) for chunk in chunks), DONE])


def encode_chunk(chunk: Mapping[str, Any]) -> str:
    """`chunk` as compact JSON: the text of one SSE `data:` line."""
    return _COMPACT.encode(chunk)


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""`json.dumps` with these options, built once rather than per chunk."""


async def encode(chunks: AsyncIterable[Mapping[str, Any]]) -> AsyncIterator[bytes]:
    """SSE frames for `chunks`: `data: <json>\\n\\n` each, then `data: [DONE]\\n\\n`."""
    async for chunk in chunks:
        yield f"data: {encode_chunk(chunk)}\n\n".encode()
    yield f"data: {DONE}\n\n".encode()
