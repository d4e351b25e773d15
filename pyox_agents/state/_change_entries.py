"""The history entries of changes around the messages: the shared state (old histories), the
context (compacted, cleared, restored), and how a run ended (finish, stop, error)."""

from __future__ import annotations

import datetime
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TypeAlias

from pyox_agents.state._entry_parts import PURPOSES, check_at, entry_row
from pyox_agents.state.frozen import JSON, FrozenList
from pyox_agents.state.jsonvalue import frozen_delta, to_json_value
from pyox_agents.state.stopped import Stopped, stopped_to_json


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
        check_at(self)
        object.__setattr__(self, "content", frozen_delta(self.content))
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
        return entry_row(self.kind, self.at, self.content, call_id=self.call_id,
                         version=self.version)


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
        check_at(self)
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
        return entry_row(self.kind, self.at, {"change": self.change, **asdict(self.content)})


@dataclass(frozen=True, kw_only=True)
class FinishEntry:
    """finish(answer) was called; `content` is the answer given (None keeps an earlier one)."""

    kind: Literal["finish"] = field(default="finish", init=False)
    at: datetime.datetime
    content: Any = None

    def __post_init__(self) -> None:
        check_at(self)
        object.__setattr__(self, "content", to_json_value(self.content, "answer"))

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return entry_row(self.kind, self.at, self.content)


@dataclass(frozen=True, kw_only=True)
class StopEntry:
    """The run was set to stop: `content` says why."""

    kind: Literal["stop"] = field(default="stop", init=False)
    at: datetime.datetime
    content: Stopped

    def __post_init__(self) -> None:
        check_at(self)
        if not isinstance(self.content, Stopped):
            raise TypeError(f"StopEntry.content must be a Stopped value, got {self.content!r}")

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return entry_row(self.kind, self.at, stopped_to_json(self.content))


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
        check_at(self)
        if not isinstance(self.content, str):
            raise TypeError(f"ErrorEntry.content must be the error text, got {self.content!r}")
        if self.during not in (*PURPOSES, "run"):
            raise ValueError(f"during must be think, ask, compact or run, got {self.during!r}")

    def to_json(self) -> dict[str, JSON]:
        """This entry as one JSON row."""
        return entry_row(self.kind, self.at, self.content, during=self.during)
