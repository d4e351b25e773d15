"""A thread's history as its owner goes back in it: each run (the message it answered, how it
ended, the shared state's version after it), the branches that edits and regenerates left, and
where each user message is, read from the append-only history and the runs' checkpoints.

A regenerate or an edit goes back with `State.restore`: a `Restored` context change takes the
conversation back to a length of history, and what came after stays in the history as a branch
off the thread's conversation. Its runs are listed with `current: false`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyox_agents.state._shown_ids import user_message_id
from pyox_agents.state.conversation import State
from pyox_agents.state.history import (
    ContextChangeEntry,
    HistoryEntry,
    ImportEntry,
    Restored,
    RunStartEntry,
    UserMessageEntry,
)
from pyox_agents.state.messages import NOTICE_PREFIX
from pyox_agents.stores import Checkpoint

__all__ = ["Walk", "history_json", "run_end", "walk"]


@dataclass(frozen=True, slots=True)
class UserTurn:
    """A user message of the history: its id, its entry's index, its place in the entry, and
    its text."""

    id: str
    index: int
    n: int
    text: str = ""


@dataclass
class RunSeen:
    """A run of the history: where it first started, the message it answered, whether it is
    still on the thread's conversation, and where the next run's request began (its end, when
    no checkpoint says)."""

    run_id: str
    index: int
    at: str
    answers: str | None
    asked: str | None = None
    current: bool = True
    end: int | None = None


@dataclass
class Walk:
    """What `walk` read: the runs in the order they started, the branches, and every user
    message (the latest place of an id that is on several branches, an edited one)."""

    runs: dict[str, RunSeen] = field(default_factory=dict)
    branches: list[dict[str, Any]] = field(default_factory=list)
    messages: dict[str, UserTurn] = field(default_factory=dict)


_REQUEST_KINDS = ("user_message", "import", "notice", "context_change", "extra_data")
"""Entries a request adds before its run starts (its messages, a branch it goes back to)."""


def walk(conversation: State) -> Walk:
    """The runs, branches and user messages of `conversation`'s history."""
    found = Walk()
    history = conversation.history
    turns: list[UserTurn] = []
    last: RunSeen | None = None
    for index, entry in enumerate(history):
        if isinstance(entry, ContextChangeEntry) and isinstance(entry.content, Restored):
            _went_back(found, turns, index, entry)
            continue
        for turn in _user_turns(conversation.id, index, entry):
            turns.append(turn)
            found.messages[turn.id] = turn
        if isinstance(entry, RunStartEntry) and entry.content and entry.content not in found.runs:
            if last is not None and last.end is None:
                last.end = _request_start(history, index)
            last = RunSeen(entry.content, index, entry.at.isoformat(),
                           turns[-1].id if turns else None, turns[-1].text if turns else None)
            found.runs[entry.content] = last
    return found


def _went_back(found: Walk, turns: list[UserTurn], index: int, entry: ContextChangeEntry) -> None:
    """A `Restored` entry at `index`: the runs and messages after the length it went back to
    leave the conversation; they stay listed as a branch."""
    assert isinstance(entry.content, Restored)
    length = entry.content.history_length
    left = [run for run in found.runs.values() if run.current and run.index >= length]
    for run in left:
        run.current = False
    turns[:] = [turn for turn in turns if turn.index < length]
    found.branches.append({
        "index": index, "at": entry.at.isoformat(), "back_to": length,
        "after_message": turns[-1].id if turns else None,
        "runs": [run.run_id for run in left],
    })


def _user_turns(thread_id: str, index: int, entry: HistoryEntry) -> list[UserTurn]:
    if isinstance(entry, ImportEntry):
        return [UserTurn(user_message_id(thread_id, m, index, n, "import"), index, n, m.content)
                for n, m in enumerate(entry.content)
                if m.role == "user" and not m.content.startswith(NOTICE_PREFIX)]
    if isinstance(entry, UserMessageEntry):  # (never a notice: that is a NoticeEntry)
        return [UserTurn(user_message_id(thread_id, entry.content, index, 0, "user"), index, 0,
                         entry.content.content)]
    return []


def _request_start(history: tuple[HistoryEntry, ...], start: int) -> int:
    """Where the request of the run starting at `start` began: the entries its request added
    (its messages, the branch it went back to) come right before its start."""
    at = start
    while at > 0 and history[at - 1].kind in _REQUEST_KINDS:
        at -= 1
    return at


def run_end(found: Walk, conversation: State, run_id: str,
            checkpoint: Checkpoint | None) -> int:
    """The length of history right after run `run_id` ended: as its checkpoint recorded it,
    else up to the next run's request (or the whole history, for the last run)."""
    if checkpoint is not None and isinstance(checkpoint.head.get("entries"), int):
        return int(checkpoint.head["entries"])
    seen = found.runs[run_id]
    return seen.end if seen.end is not None else len(conversation.history)


def history_json(conversation: State, checkpoints: Mapping[str, Checkpoint]) -> dict[str, Any]:
    """`conversation`'s runs and branches as JSON: `{runs: [{run_id, started_at, answers,
    asked, status, version, current}], branches: [{index, at, back_to, after_message, runs}]}`.

    `answers` is the id of the user message the run answered (as `GET /threads/{id}` shows
    it) and `asked` its text (a run on a branch answered a message the thread no longer
    shows), `status` and `version` (the shared state's version right after it) are its
    checkpoint's (None when the server recorded none), `current` whether it is on the thread's
    conversation (False: on a branch an edit or a regenerate left).
    """
    found = walk(conversation)
    runs = []
    for run in found.runs.values():
        head = checkpoints[run.run_id].head if run.run_id in checkpoints else {}
        runs.append({"run_id": run.run_id, "started_at": run.at, "answers": run.answers,
                     "asked": run.asked, "status": head.get("status"),
                     "version": head.get("version"), "current": run.current})
    return {"runs": runs, "branches": found.branches}
