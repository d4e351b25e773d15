"""The history entries of a conversation's messages: imports and extra data, a run's start,
user messages and notices, model requests and replies, tool results."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from pyox_agents.state._entry_parts import (
    OUTCOMES,
    PURPOSES,
    Outcome,
    Purpose,
    check_at,
    entry_row,
)
from pyox_agents.state.frozen import JSON, FrozenDict
from pyox_agents.state.jsonvalue import (
    call_to_json,
    frozen_call,
    frozen_message,
    frozen_reply,
    message_to_json,
    reply_to_json,
    to_json_value,
    usage_to_json,
)
from pyox_agents.state.messages import NOTICE_PREFIX, Image, Message, Reply, ToolCall, Usage


@dataclass(frozen=True, kw_only=True, slots=True)
class ImportEntry:
    """The messages a State started from (`State(messages=...)`)."""

    kind: Literal["import"] = field(default="import", init=False)
    at: datetime.datetime
    content: tuple[Message, ...]

    def __post_init__(self) -> None:
        check_at(self)
        object.__setattr__(self, "content", tuple(frozen_message(m, f"messages[{i}]")
                                                  for i, m in enumerate(self.content)))

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return entry_row(self.kind, self.at, [message_to_json(m) for m in self.content])


def frozen_extra_data(value: object) -> FrozenDict:
    """`value` as a State's extra_data: a read-only dict in JSON form (else `TypeError`)."""
    frozen = to_json_value(value, "extra_data")
    if not isinstance(frozen, FrozenDict):
        raise TypeError(f"extra_data must be a dict, got {type(value).__name__}")
    return frozen


@dataclass(frozen=True, kw_only=True, slots=True)
class ExtraDataEntry:
    """The full new extra_data, after `State(extra_data=...)` or an `edit_extra_data()` block."""

    kind: Literal["extra_data"] = field(default="extra_data", init=False)
    at: datetime.datetime
    content: FrozenDict

    def __post_init__(self) -> None:
        check_at(self)
        object.__setattr__(self, "content", frozen_extra_data(self.content))

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return entry_row(self.kind, self.at, self.content)


@dataclass(frozen=True, kw_only=True, slots=True)
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
        check_at(self)
        for name in ("content", "parent_id", "parent_call_id"):
            if not isinstance(getattr(self, name), str | None):
                raise TypeError(f"RunStartEntry.{name} must be a str or None")
        if (self.parent_id is None) != (self.parent_call_id is None):
            raise ValueError("parent_id and parent_call_id go together: give both or neither")

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return entry_row(self.kind, self.at, self.content, parent_id=self.parent_id,
                         parent_call_id=self.parent_call_id)


def _user_message(entry: UserMessageEntry | NoticeEntry) -> None:
    check_at(entry)
    message = frozen_message(entry.content)
    if message.role != "user":
        raise ValueError(f"a {entry.kind} entry holds a user message, got role {message.role!r}")
    if message.content.startswith(NOTICE_PREFIX) != (entry.kind == "notice"):
        raise ValueError(f"a notice is a user message starting {NOTICE_PREFIX!r}, and a "
                         f"user_message is one that does not; got {message.content[:40]!r} "
                         f"in a {entry.kind} entry")
    object.__setattr__(entry, "content", message)


@dataclass(frozen=True, kw_only=True, slots=True)
class UserMessageEntry:
    """A user message added with `add_message`."""

    kind: Literal["user_message"] = field(default="user_message", init=False)
    at: datetime.datetime
    content: Message

    def __post_init__(self) -> None:
        _user_message(self)

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return entry_row(self.kind, self.at, message_to_json(self.content))


@dataclass(frozen=True, kw_only=True, slots=True)
class NoticeEntry:
    """A notice added with `add_message(Message.notice(...))`: its text starts "[notice] "."""

    kind: Literal["notice"] = field(default="notice", init=False)
    at: datetime.datetime
    content: Message

    def __post_init__(self) -> None:
        _user_message(self)

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return entry_row(self.kind, self.at, message_to_json(self.content))


@dataclass(frozen=True, slots=True)
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
        object.__setattr__(self, "tool_names", names)


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelRequestEntry:
    """A request began waiting on the model: a think (the turn counts from here), ask or compact."""

    kind: Literal["model_request"] = field(default="model_request", init=False)
    at: datetime.datetime
    content: RequestSummary
    purpose: Purpose = "think"

    def __post_init__(self) -> None:
        check_at(self)
        if not isinstance(self.content, RequestSummary):
            raise TypeError("ModelRequestEntry.content must be a RequestSummary")
        if self.purpose not in PURPOSES:
            raise ValueError(f"purpose must be think, ask or compact, got {self.purpose!r}")

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        content = {"message_count": self.content.message_count,
                   "tool_names": list(self.content.tool_names)}
        return entry_row(self.kind, self.at, content, purpose=self.purpose)


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelReplyEntry:
    """What the model answered to the open request: a `Reply` with its text and tool calls."""

    kind: Literal["model_reply"] = field(default="model_reply", init=False)
    at: datetime.datetime
    content: Reply
    purpose: Purpose = "think"

    def __post_init__(self) -> None:
        check_at(self)
        object.__setattr__(self, "content", frozen_reply(self.content))
        if self.purpose not in PURPOSES:
            raise ValueError(f"purpose must be think, ask or compact, got {self.purpose!r}")

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return entry_row(self.kind, self.at, reply_to_json(self.content), purpose=self.purpose)


@dataclass(frozen=True, kw_only=True, slots=True)
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
        check_at(self)
        object.__setattr__(self, "content", to_json_value(self.content, "result"))
        object.__setattr__(self, "call", frozen_call(self.call))
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome must be ok, error, denied or cancelled, got "
                             f"{self.outcome!r}")
        if not isinstance(self.is_error, bool):
            raise TypeError(f"is_error must be a bool, got {self.is_error!r}")
        if self.text is None:
            text = self.content if isinstance(self.content, str) else json.dumps(
                self.content, ensure_ascii=False)
            object.__setattr__(self, "text", text)
        elif not isinstance(self.text, str):
            raise TypeError(f"text must be a str, got {type(self.text).__name__}")
        object.__setattr__(self, "images", tuple(self.images))
        object.__setattr__(self, "child_ids", tuple(self.child_ids))
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
        return entry_row(self.kind, self.at, self.content, call=call_to_json(self.call),
                         outcome=self.outcome, is_error=self.is_error, text=self.text,
                         images=images, child_ids=list(self.child_ids),
                         usage=usage_to_json(self.usage))
