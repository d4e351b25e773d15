"""History entries: everything that happened to a `State`, one frozen value per event.

Each entry class has a `kind` (a `Literal`, so `entry.kind == "model_reply"` narrows the type),
`at` (when it was recorded, a timezone-aware UTC datetime) and a typed `content`. Values are
read-only and in JSON form from the moment an entry is built, so a live State and one loaded
from a store hold equal entries: `entry_from_json(entry.to_json()) == entry`.
"""

from __future__ import annotations

import datetime
import json
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast

from pyox_agents.state.frozen import JSON, FrozenDict, FrozenList
from pyox_agents.state.jsonvalue import (
    call_to_json,
    frozen_call,
    frozen_delta,
    frozen_message,
    frozen_reply,
    message_to_json,
    reply_to_json,
    to_json_value,
    usage_to_json,
)
from pyox_agents.state.messages import NOTICE_PREFIX, Image, Message, Reply, ToolCall, Usage
from pyox_agents.state.stopped import (
    Stopped,
    StoppedByFinish,
    StoppedByLimit,
    StoppedByPermission,
    StoppedByUntil,
    stopped_to_json,
)

__all__ = [
    "ClearedToolResults", "Compacted", "ContextChangeEntry", "ErrorEntry", "ExtraDataEntry",
    "FinishEntry", "HistoryEntry", "ImportEntry", "ModelReplyEntry", "ModelRequestEntry",
    "NoticeEntry", "RequestSummary", "Restored", "RunStartEntry", "StateChangeEntry",
    "StopEntry", "Stopped", "StoppedByFinish", "StoppedByLimit", "StoppedByPermission",
    "StoppedByUntil", "ToolResultEntry", "UserMessageEntry", "entry_from_json",
    "shared_state_from", "utc_now",
]

Purpose = Literal["think", "ask", "compact"]
"""Why a model request was made: a think (a turn), an `agent.ask`, or an `agent.compact`."""
Outcome = Literal["ok", "error", "denied", "cancelled"]
"""How a tool call closed."""
_PURPOSES = ("think", "ask", "compact")
_OUTCOMES = ("ok", "error", "denied", "cancelled")


def utc_now() -> datetime.datetime:
    """The current time, timezone-aware in UTC: the `at` of a new entry."""
    return datetime.datetime.now(datetime.UTC)


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


def _check_at(entry: object) -> None:
    at = getattr(entry, "at", None)
    if not isinstance(at, datetime.datetime) or at.tzinfo is None:
        raise ValueError(f"a history entry's at must be a timezone-aware datetime, got {at!r}; "
                         f"use datetime.now(UTC)")
    if at.utcoffset() != datetime.timedelta(0) or at.tzinfo is not datetime.UTC:
        _set(entry, "at", at.astimezone(datetime.UTC))


def _row(kind: str, at: datetime.datetime, content: object, **more: object) -> dict[str, JSON]:
    return cast(dict[str, JSON], {"kind": kind, "at": at.isoformat(), "content": content, **more})


# --- the entries ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ImportEntry:
    """The messages a State started from (`State(messages=...)`)."""

    kind: Literal["import"] = field(default="import", init=False)
    at: datetime.datetime
    content: tuple[Message, ...]

    def __post_init__(self) -> None:
        _check_at(self)
        _set(self, "content", tuple(frozen_message(m, f"messages[{i}]")
                                    for i, m in enumerate(self.content)))

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return _row(self.kind, self.at, [message_to_json(m) for m in self.content])


@dataclass(frozen=True, kw_only=True)
class ExtraDataEntry:
    """The full new extra_data, after `State(extra_data=...)` or an `edit_extra_data()` block."""

    kind: Literal["extra_data"] = field(default="extra_data", init=False)
    at: datetime.datetime
    content: FrozenDict

    def __post_init__(self) -> None:
        _check_at(self)
        value = to_json_value(self.content, "extra_data")
        if not isinstance(value, FrozenDict):
            raise TypeError(f"extra_data must be a dict, got {type(self.content).__name__}")
        _set(self, "content", value)

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return _row(self.kind, self.at, self.content)


@dataclass(frozen=True, kw_only=True)
class RunStartEntry:
    """A run began; `content` is its run id if the loop gave one.

    The first one links the State to the tool call that started it as a subagent (`parent_id`,
    `parent_call_id`, both None for a State no tool call started); later ones repeat that link.
    """

    kind: Literal["run_start"] = field(default="run_start", init=False)
    at: datetime.datetime
    content: str | None = None
    parent_id: str | None = None
    parent_call_id: str | None = None

    def __post_init__(self) -> None:
        _check_at(self)
        for name in ("content", "parent_id", "parent_call_id"):
            if not isinstance(getattr(self, name), str | None):
                raise TypeError(f"RunStartEntry.{name} must be a str or None")
        if (self.parent_id is None) != (self.parent_call_id is None):
            raise ValueError("parent_id and parent_call_id go together: give both or neither")

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return _row(self.kind, self.at, self.content, parent_id=self.parent_id,
                    parent_call_id=self.parent_call_id)


def _user_message(entry: UserMessageEntry | NoticeEntry) -> None:
    _check_at(entry)
    message = frozen_message(entry.content)
    if message.role != "user":
        raise ValueError(f"a {entry.kind} entry holds a user message, got role {message.role!r}")
    if message.content.startswith(NOTICE_PREFIX) != (entry.kind == "notice"):
        raise ValueError(f"a notice is a user message starting {NOTICE_PREFIX!r}, and a "
                         f"user_message is one that does not; got {message.content[:40]!r} "
                         f"in a {entry.kind} entry")
    _set(entry, "content", message)


@dataclass(frozen=True, kw_only=True)
class UserMessageEntry:
    """A user message added with `add_message`."""

    kind: Literal["user_message"] = field(default="user_message", init=False)
    at: datetime.datetime
    content: Message

    def __post_init__(self) -> None:
        _user_message(self)

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return _row(self.kind, self.at, message_to_json(self.content))


@dataclass(frozen=True, kw_only=True)
class NoticeEntry:
    """A notice added with `add_message(Message.notice(...))`: its text starts "[notice] "."""

    kind: Literal["notice"] = field(default="notice", init=False)
    at: datetime.datetime
    content: Message

    def __post_init__(self) -> None:
        _user_message(self)

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return _row(self.kind, self.at, message_to_json(self.content))


@dataclass(frozen=True)
class RequestSummary:
    """What a model request was sent: how many messages, and the names of the tools offered.

    The history keeps this summary, not the request: the messages are in the history already.
    (The request itself is `pyox_agents.models.ModelRequest`.)
    """

    message_count: int
    tool_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if type(self.message_count) is not int or self.message_count < 0:
            raise ValueError(f"message_count must be an int >= 0, got {self.message_count!r}")
        names = tuple(self.tool_names)
        if not all(isinstance(n, str) for n in names):
            raise TypeError(f"tool_names must be strings, got {names!r}")
        _set(self, "tool_names", names)


@dataclass(frozen=True, kw_only=True)
class ModelRequestEntry:
    """A request began waiting on the model: a think (the turn counts from here), ask or compact."""

    kind: Literal["model_request"] = field(default="model_request", init=False)
    at: datetime.datetime
    content: RequestSummary
    purpose: Purpose = "think"

    def __post_init__(self) -> None:
        _check_at(self)
        if not isinstance(self.content, RequestSummary):
            raise TypeError("ModelRequestEntry.content must be a RequestSummary")
        if self.purpose not in _PURPOSES:
            raise ValueError(f"purpose must be think, ask or compact, got {self.purpose!r}")

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        content = {"message_count": self.content.message_count,
                   "tool_names": list(self.content.tool_names)}
        return _row(self.kind, self.at, content, purpose=self.purpose)


@dataclass(frozen=True, kw_only=True)
class ModelReplyEntry:
    """What the model answered to the open request: a `Reply` with its text and tool calls."""

    kind: Literal["model_reply"] = field(default="model_reply", init=False)
    at: datetime.datetime
    content: Reply
    purpose: Purpose = "think"

    def __post_init__(self) -> None:
        _check_at(self)
        _set(self, "content", frozen_reply(self.content))
        if self.purpose not in _PURPOSES:
            raise ValueError(f"purpose must be think, ask or compact, got {self.purpose!r}")

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return _row(self.kind, self.at, reply_to_json(self.content), purpose=self.purpose)


@dataclass(frozen=True, kw_only=True)
class ToolResultEntry:
    """A tool call closed: its `outcome`, result value (`content`) and the `text` the model reads.

    `child_ids` are the ids of the subagent States it started, `usage` what they spent.
    """

    kind: Literal["tool_result"] = field(default="tool_result", init=False)
    at: datetime.datetime
    content: Any
    call: ToolCall
    outcome: Outcome = "ok"
    is_error: bool = False
    text: str | None = None
    images: tuple[Image, ...] = ()
    child_ids: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)

    def __post_init__(self) -> None:
        _check_at(self)
        _set(self, "content", to_json_value(self.content, "result"))
        _set(self, "call", frozen_call(self.call))
        if self.outcome not in _OUTCOMES:
            raise ValueError(f"outcome must be ok, error, denied or cancelled, got "
                             f"{self.outcome!r}")
        if not isinstance(self.is_error, bool):
            raise TypeError(f"is_error must be a bool, got {self.is_error!r}")
        if self.text is None:
            text = self.content if isinstance(self.content, str) else json.dumps(
                self.content, ensure_ascii=False)
            _set(self, "text", text)
        elif not isinstance(self.text, str):
            raise TypeError(f"text must be a str, got {type(self.text).__name__}")
        _set(self, "images", tuple(self.images))
        _set(self, "child_ids", tuple(self.child_ids))
        if not all(isinstance(i, Image) for i in self.images):
            raise TypeError("images must be Image values")
        if not all(isinstance(i, str) for i in self.child_ids):
            raise TypeError(f"child_ids must be State ids (str), got {self.child_ids!r}")
        if not isinstance(self.usage, Usage):
            raise TypeError(f"usage must be a Usage, got {type(self.usage).__name__}")

    @property
    def message(self) -> Message:
        """The tool message the model reads for this result."""
        return Message(role="tool", content=cast(str, self.text), images=self.images,
                       call_id=self.call.id, name=self.call.name, is_error=self.is_error)

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        images = [{"url": i.url, "media_type": i.media_type} for i in self.images]
        return _row(self.kind, self.at, self.content, call=call_to_json(self.call),
                    outcome=self.outcome, is_error=self.is_error, text=self.text, images=images,
                    child_ids=list(self.child_ids), usage=usage_to_json(self.usage))


@dataclass(frozen=True, kw_only=True)
class StateChangeEntry:
    """The shared-state change a tool committed: RFC 6902 ops (`delta`), and the new `version`.

    Histories saved by earlier versions of pyox-agents hold these; they still load, and
    `shared_state_from` still reads them. Runs no longer record the shared state in the
    conversation (seed 004: "Nothing is stored"). It changes no field of the snapshot.
    """

    kind: Literal["state_change"] = field(default="state_change", init=False)
    at: datetime.datetime
    content: FrozenList
    call_id: str
    version: int

    def __post_init__(self) -> None:
        _check_at(self)
        _set(self, "content", frozen_delta(self.content))
        if not isinstance(self.call_id, str):
            raise TypeError(f"call_id must be a str, got {self.call_id!r}")
        if type(self.version) is not int:
            raise TypeError(f"version must be an int, got {self.version!r}")

    @property
    def delta(self) -> FrozenList:
        """The RFC 6902 operations (the same as `content`)."""
        return self.content

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return _row(self.kind, self.at, self.content, call_id=self.call_id, version=self.version)


@dataclass(frozen=True)
class Compacted:
    """`compact(summary)`: the messages became the first user message and the summary."""

    summary: str


@dataclass(frozen=True)
class ClearedToolResults:
    """`clear_tool_results(keep_last)`: older tool results in the messages were blanked."""

    keep_last: int


@dataclass(frozen=True)
class Restored:
    """`restore(snapshot)`: the State went back to the point its history had this length."""

    history_length: int


ContextChange: TypeAlias = Compacted | ClearedToolResults | Restored


@dataclass(frozen=True, kw_only=True)
class ContextChangeEntry:
    """The messages changed without a new message: compact, clear_tool_results or restore."""

    kind: Literal["context_change"] = field(default="context_change", init=False)
    at: datetime.datetime
    content: ContextChange

    def __post_init__(self) -> None:
        _check_at(self)
        match self.content:
            case Compacted(summary=str()) | ClearedToolResults(keep_last=int()) | Restored(
                    history_length=int()):
                pass
            case _:
                raise TypeError(f"ContextChangeEntry.content must be Compacted(str), "
                                f"ClearedToolResults(int) or Restored(int), got {self.content!r}")

    @property
    def change(self) -> Literal["compact", "clear", "restore"]:
        """Which change: "compact", "clear" or "restore"."""
        match self.content:
            case Compacted():
                return "compact"
            case ClearedToolResults():
                return "clear"
            case Restored():
                return "restore"

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        match self.content:
            case Compacted(summary=summary):
                content: dict[str, JSON] = {"change": "compact", "summary": summary}
            case ClearedToolResults(keep_last=keep_last):
                content = {"change": "clear", "keep_last": keep_last}
            case Restored(history_length=length):
                content = {"change": "restore", "history_length": length}
        return _row(self.kind, self.at, content)


@dataclass(frozen=True, kw_only=True)
class FinishEntry:
    """finish(answer) was called; `content` is the answer given (None keeps an earlier one)."""

    kind: Literal["finish"] = field(default="finish", init=False)
    at: datetime.datetime
    content: Any = None

    def __post_init__(self) -> None:
        _check_at(self)
        _set(self, "content", to_json_value(self.content, "answer"))

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return _row(self.kind, self.at, self.content)


@dataclass(frozen=True, kw_only=True)
class StopEntry:
    """The run was set to stop: `content` says why."""

    kind: Literal["stop"] = field(default="stop", init=False)
    at: datetime.datetime
    content: Stopped

    def __post_init__(self) -> None:
        _check_at(self)
        if not isinstance(self.content, StoppedByFinish | StoppedByPermission | StoppedByUntil
                          | StoppedByLimit):
            raise TypeError(f"StopEntry.content must be a Stopped value, got {self.content!r}")

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return _row(self.kind, self.at, stopped_to_json(self.content))


@dataclass(frozen=True, kw_only=True)
class ErrorEntry:
    """Something failed: a model request (`during`: think, ask, compact) or the run (`run`).

    `content` is the error text. A failed think takes its turn back; a failed run leaves
    `stopped` None.
    """

    kind: Literal["error"] = field(default="error", init=False)
    at: datetime.datetime
    content: str
    during: Literal["think", "ask", "compact", "run"] = "think"

    def __post_init__(self) -> None:
        _check_at(self)
        if not isinstance(self.content, str):
            raise TypeError(f"ErrorEntry.content must be the error text, got {self.content!r}")
        if self.during not in (*_PURPOSES, "run"):
            raise ValueError(f"during must be think, ask, compact or run, got {self.during!r}")

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return _row(self.kind, self.at, self.content, during=self.during)


HistoryEntry: TypeAlias = (
    ImportEntry | ExtraDataEntry | RunStartEntry | UserMessageEntry | NoticeEntry
    | ModelRequestEntry | ModelReplyEntry | ToolResultEntry | StateChangeEntry
    | ContextChangeEntry | FinishEntry | StopEntry | ErrorEntry
)
"""One thing that happened to a State; `kind` tells which class it is."""

ENTRY_TYPES: tuple[type, ...] = (
    ImportEntry, ExtraDataEntry, RunStartEntry, UserMessageEntry, NoticeEntry, ModelRequestEntry,
    ModelReplyEntry, ToolResultEntry, StateChangeEntry, ContextChangeEntry, FinishEntry,
    StopEntry, ErrorEntry,
)





def entry_from_json(row: Mapping[str, Any]) -> HistoryEntry:
    """The history entry of a JSON row made by `entry.to_json()` (a store's saved row).

    Raises:
        TypeError: `row` is not a dict.
        ValueError: an unknown `kind`, or a row that is not a valid entry of its kind.
    """
    from pyox_agents.state import history_json  # the reader needs the classes above

    return history_json.entry_from_json(row)


def shared_state_from(history: Iterable[HistoryEntry], initial: Any) -> JSON:
    """The shared state after the `state_change` entries of `history`, applied in order.

    Only histories saved by earlier versions of pyox-agents have such entries (runs no longer
    record the shared state). `initial` is the state before the first of them; it is not
    changed. Returns a read-only value.

    Raises:
        ValueError: a recorded change that does not apply to the state built so far.
    """
    from pyox_agents.state import history_json

    return history_json.shared_state_from(history, initial)


def __getattr__(name: str) -> Any:
    """`ModelRequest`, the old name of `RequestSummary`, with a `DeprecationWarning`."""
    if name == "ModelRequest":
        warnings.warn(
            "pyox_agents.state.history.ModelRequest is now RequestSummary (ModelRequest is the "
            "request a model is sent, in pyox_agents.models): import RequestSummary",
            DeprecationWarning, stacklevel=2,
        )
        return RequestSummary
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
