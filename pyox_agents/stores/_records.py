"""What a store keeps and hands back: a step's `StepRecord`, a thread's `ThreadInfo` and
`LoadedThread`, and the `StoreConflict` of a write that does not follow what is held."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyox_agents._errors import PyoxError

if TYPE_CHECKING:
    from pyox_agents.state.conversation import State


class StoreConflict(PyoxError, ValueError):
    """A write did not follow what the store holds: another State of the same id was saved,
    or another writer appended to the thread (or the run's audit log) meanwhile."""


@dataclass(frozen=True, slots=True)
class StepRecord:
    """What one step writes, in one transaction.

    `entries` are the JSON forms of the thread's new history entries (`entry.to_json()`), the
    first of which is entry number `first_seq` of the thread: the store refuses the record if it
    holds a different count. `run` is the run's record (`RunState.to_dict()`, with its `run_id`)
    and `audit` its new audit records, whose `seq` must continue the run's saved ones.
    `shared_state` is the shared state of the thread's run that is not over (what resuming it
    needs), kept when `shared_version` is given; a run that ended writes None there.
    """

    thread_id: str
    first_seq: int
    entries: tuple[Mapping[str, Any], ...] = ()
    parent_id: str | None = None
    run: Mapping[str, Any] | None = None
    audit: tuple[Mapping[str, Any], ...] = ()
    shared_state: Any = None
    shared_version: int | None = None
    owner: str | None = None


@dataclass(frozen=True, slots=True)
class ThreadInfo:
    """One saved thread, as `list_threads` and `list_owned` report it: `entries` is its history
    length, and `created_at` / `updated_at` the `at` of its first and latest entries (UTC), as
    in `State`.

    `title` is the one `update_thread` gave it; `list_owned` gives an untitled thread the start
    of its first user message instead. `archived` is set by `update_thread`. `run_status` is
    the status of its latest run as the server recorded it when the run ended (its
    checkpoint's: "completed", "paused", "stopped", "failed"), or None.
    """

    id: str
    parent_id: str | None
    entries: int
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None
    owner: str | None = None
    title: str | None = None
    archived: bool = False
    run_status: str | None = None


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What a server recorded of one run of a thread when the run ended (`write_checkpoint`).

    `head` is small JSON read with every checkpoint: the run's `status`, the thread's history
    length when it ended (`entries`), the shared state's `version` then, its event log's key
    (`run_key`), and when (`at`). `state` is what the shared state was then, and how to go back
    to the state the run started from (`{"state": ..., "back": [RFC 6902 ops]}`), read only when
    asked (`load_checkpoints(..., states=True)`); None when the server keeps no state.
    """

    run_id: str
    head: Mapping[str, Any]
    state: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class LoadedThread:
    """A thread's saved entries (JSON rows, oldest first), and the shared state its run that
    has not ended keeps (None once it ended; `shared_version` None if none was ever written)."""

    id: str
    entries: tuple[Mapping[str, Any], ...]
    shared_state: Any = None
    shared_version: int | None = None
    owner: str | None = None

    @classmethod
    def from_texts(cls, thread_id: str, entries: Iterable[str], shared: str | None,
                   version: Any, owner: str | None) -> LoadedThread:
        """The thread a backend read as JSON texts (`version` a number, or its text)."""
        return cls(thread_id, tuple(json.loads(entry) for entry in entries),
                   json.loads(shared) if shared is not None else None,
                   int(version) if version is not None else None, owner)


def bound_state(loaded: LoadedThread, store: object) -> State:
    """The State of the thread `loaded`, bound to `store` (so `child` can load its subagents)."""
    from pyox_agents.state.conversation import State
    from pyox_agents.state.history import entry_from_json

    state = State(id=loaded.id, history=[entry_from_json(entry) for entry in loaded.entries])
    state._bind_store(store)
    return state


def record_after(state: State, count: int, last: Mapping[str, Any] | None) -> StepRecord:
    """The entries of `state` after the store's end of the thread: its `count` entries, the
    `last` of them.

    Raises:
        StoreConflict: the store holds a different State under this id.
    """
    new = state._entries_since(max(count - 1, 0))  # the last saved entry, then the new ones
    if count:
        if not new or last != new[0].to_json():
            raise StoreConflict(
                f"the store holds a different State with id {state.id!r} ({count} entries "
                "that this State's history does not start with): continue a saved State with "
                "store.load(id), not with a new State of the same id"
            )
        new = new[1:]
    return StepRecord(thread_id=state.id, first_seq=count,
                      entries=tuple(entry.to_json() for entry in new),
                      parent_id=state.parent_id)
