"""What every backend shares to keep threads as a resource of their owners: a page of an owner's
threads (newest change first), the title an untitled thread is listed under, and what erasing a
thread takes with it (its runs, its subagents' threads, their event logs)."""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pyox_agents.stores._encoding import dumps, parse_time
from pyox_agents.stores._records import Checkpoint, LoadedThread, ThreadInfo
from pyox_agents.stores._shared import feed_log_key

__all__ = [
    "INFO_COLUMNS",
    "OPENING_ENTRIES",
    "TITLE_CHARS",
    "Belongings",
    "belongings",
    "check_limit",
    "check_title",
    "decode_checkpoint",
    "encode_checkpoint",
    "info_of_row",
    "page",
    "page_key",
    "score",
    "titled",
]

TITLE_CHARS = 80
"""The longest title: a longer title is refused, a first message longer than this is cut."""

OPENING_ENTRIES = 4
"""How many of an untitled thread's first entries are looked at for its first user message."""

MAX_PAGE = 200
"""The largest page of `list_owned`."""

_NOTICE = "[notice]"


def titled(info: ThreadInfo, opening: Iterable[str]) -> ThreadInfo:
    """`info`; if it has no title, titled with the start of its first user message among
    `opening` (its first entries, as JSON text), which is read only then."""
    if info.title is not None:
        return info
    return dataclasses.replace(info, title=_opening_title(json.loads(text) for text in opening))


def _opening_title(entries: Iterable[Mapping[str, Any]]) -> str | None:
    """The start of the first user message (not a notice) among `entries` (JSON rows), on one
    line, cut at `TITLE_CHARS` characters; None if there is none."""
    for entry in entries:
        kind, content = entry.get("kind"), entry.get("content")
        messages = content if kind == "import" and isinstance(content, list) else (
            [content] if kind == "user_message" else [])
        for message in messages:
            if not isinstance(message, Mapping) or message.get("role") != "user":
                continue
            text = " ".join(str(message.get("content") or "").split())
            if text and not text.startswith(_NOTICE):
                return text if len(text) <= TITLE_CHARS else text[:TITLE_CHARS - 1] + "…"
    return None


def check_title(title: str) -> str:
    """`title` as kept: without the spaces around it ("" clears it).

    Raises:
        TypeError: `title` is not a str.
        ValueError: it is longer than `TITLE_CHARS`, or holds a line break or control character.
    """
    if not isinstance(title, str):
        raise TypeError(f"a thread's title is a str, got {type(title).__name__}")
    title = title.strip()
    if len(title) > TITLE_CHARS:
        raise ValueError(f"a thread's title has at most {TITLE_CHARS} characters, got "
                         f"{len(title)}: shorten it")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in title):
        raise ValueError("a thread's title is one line of text: remove its line breaks and "
                         "control characters")
    return title


@dataclass(frozen=True, slots=True)
class EncodedCheckpoint:
    """A checkpoint as JSON text: its `head`, its `state` (None), and its run's `status`."""

    run_id: str
    head: str
    state: str | None
    status: str | None


def encode_checkpoint(thread_id: str, checkpoint: Checkpoint) -> EncodedCheckpoint:
    """`checkpoint` checked and turned into JSON text, before a backend touches anything.

    Raises:
        TypeError, ValueError: a part is not JSON, or the run id is empty.
    """
    if not isinstance(checkpoint, Checkpoint):
        raise TypeError(f"write_checkpoint() takes a Checkpoint, got {type(checkpoint).__name__}")
    if not isinstance(checkpoint.run_id, str) or not checkpoint.run_id:
        raise ValueError(f"a checkpoint of thread {thread_id!r} needs its run's id, got "
                         f"{checkpoint.run_id!r}")
    where = f"the checkpoint of run {checkpoint.run_id[:12]} of thread {thread_id!r}"
    head = dumps(dict(checkpoint.head), where)
    state = None if checkpoint.state is None else dumps(dict(checkpoint.state), where)
    status = checkpoint.head.get("status")
    return EncodedCheckpoint(checkpoint.run_id, head, state,
                             status if isinstance(status, str) else None)


def decode_checkpoint(run_id: str, head: str, state: str | None) -> Checkpoint:
    """The `Checkpoint` a backend kept as `head` and `state` text."""
    return Checkpoint(run_id, json.loads(head), json.loads(state) if state is not None else None)


INFO_COLUMNS = "id, parent_id, entries, created_at, updated_at, owner, title, archived, run_status"
"""The columns of a SQL backend's `threads` table a `ThreadInfo` is made of (`info_of_row`)."""


def info_of_row(row: Sequence[Any]) -> ThreadInfo:
    """A `ThreadInfo` from a row that starts with the `INFO_COLUMNS`."""
    id, parent, count, created, updated, owner, title, archived, status = row[:9]
    return ThreadInfo(id, parent, int(count), parse_time(created), parse_time(updated), owner,
                      title, bool(archived), status)


def check_limit(limit: int) -> None:
    """Refuse a page size that is not 1 to `MAX_PAGE`."""
    if type(limit) is not int or not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"a page holds 1 to {MAX_PAGE} threads, got limit={limit!r}")


def page_key(info: ThreadInfo) -> tuple[str, str]:
    """Where `info` stands in an owner's threads: the text of its `updated_at` ("" for a
    thread with no entries) and its id. Pass the last one of a page as the next's `after`."""
    return (info.updated_at.isoformat() if info.updated_at else "", info.id)


def score(updated_at: str | None) -> float:
    """A thread's place in an owner's sorted set (Redis): its `updated_at` in seconds since the
    epoch, 0 for a thread with no entries."""
    if not updated_at:
        return 0.0
    return datetime.datetime.fromisoformat(updated_at).timestamp()


def page(infos: Iterable[ThreadInfo], owner: str | None, *, archived: bool | None,
         limit: int, after: tuple[str, str] | None) -> list[ThreadInfo]:
    """`list_owned` over every thread (`MemoryStore`): `owner`'s threads no tool call started,
    archived or not (None: both), newest change first, after `after`, at most `limit`."""
    chosen = [info for info in infos if info.owner == owner and info.parent_id is None
              and archived in (None, info.archived)]
    chosen.sort(key=_order, reverse=True)
    if after is not None:
        cursor = (score(after[0]), after[1])
        chosen = [info for info in chosen if _order(info) < cursor]
    return chosen[:limit]


def _order(info: ThreadInfo) -> tuple[float, str]:
    return (info.updated_at.timestamp() if info.updated_at else 0.0, info.id)


@dataclass(frozen=True, slots=True)
class Belongings:
    """What erasing a thread takes: its id and its subagents' threads' (`threads`), the runs
    of all of them (`runs`), and those runs' event logs (`event_logs`, their keys)."""

    threads: tuple[str, ...]
    runs: tuple[str, ...]
    event_logs: tuple[str, ...]


class _Reads(Protocol):
    def load_thread(self, thread_id: str) -> LoadedThread: ...

    def load_checkpoints(self, thread_id: str, run_ids: Sequence[str] | None = None, *,
                         states: bool = False) -> list[Checkpoint]: ...


def belongings(store: _Reads, thread_id: str) -> Belongings:
    """What erasing `thread_id` takes, read from the threads' histories: the runs each started
    (its `run_start` entries), the subagent threads its tool calls started (their `child_ids`),
    and the event logs its server recorded (its checkpoints' `run_key`, and its feed's).
    Empty for an unknown thread."""
    threads: list[str] = []
    runs: dict[str, None] = {}
    logs: list[str] = []
    waiting = [thread_id]
    while waiting:
        current = waiting.pop()
        if current in threads:
            continue
        try:
            loaded = store.load_thread(current)
        except LookupError:
            continue
        threads.append(current)
        logs.append(feed_log_key(current, loaded.owner))
        for entry in loaded.entries:
            if entry.get("kind") == "run_start" and isinstance(entry.get("content"), str):
                runs[entry["content"]] = None
            elif entry.get("kind") == "tool_result":
                waiting.extend(str(child) for child in entry.get("child_ids") or ())
        for checkpoint in store.load_checkpoints(current):
            key = checkpoint.head.get("run_key")
            if isinstance(key, str) and key:
                logs.extend((key, f"{key}:meta"))
    return Belongings(tuple(threads), tuple(runs), tuple(logs))
