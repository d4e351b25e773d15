"""The shared JSON document of a run: committed versions, drafts, and commits.

Each tool call gets a `Draft` of the current version. `commit` rebases the draft's ops past the
versions committed since it was taken and applies them, giving the next version and its delta
(RFC 6902 dicts, ready to send to a frontend). When nothing was committed meanwhile, the draft's
working copies become the new version in place: committing costs nothing more than the writes.

A commit also holds the new version to the rules a request's state is held to (`MAX_DEPTH`, the
server's byte limit, the agent's `state_type`), so whatever a run streams, a client may send
back. A commit that breaks one raises `Refused` and changes nothing.
"""

from __future__ import annotations

import collections
import threading
import weakref
from dataclasses import dataclass
from typing import Any

import pydantic

from pyox_agents._errors import PyoxError
from pyox_agents.state._depth import deeper_than
from pyox_agents.state._size_bound import json_size, json_size_bound
from pyox_agents.state._validation import describe_problems
from pyox_agents.state.draft import Draft
from pyox_agents.state.frozen import JSON, MAX_DEPTH, freeze, pointer
from pyox_agents.state.jsonvalue import json_equal
from pyox_agents.state.patch import Op, apply
from pyox_agents.state.rebase import rebase, rebase_edit

__all__ = ["EDIT_BACK", "Commit", "Refused", "SharedState", "json_size"]

EDIT_BACK = 16
"""How many versions back a person's edit may be made on and still be rebased (`commit_edit`)."""


class Refused(PyoxError, ValueError):
    """A commit would make a state the run could not take back: nothing of it was applied.

    The message names the limit and, where there is one, the path or the field.
    """


@dataclass(frozen=True, slots=True)
class Commit:
    """What one commit made: the delta (plain RFC 6902 dicts), the new frozen state, its version
    number, and the ops as applied."""

    delta: list[dict[str, JSON]]
    state: JSON
    version: int
    ops: tuple[Op, ...]


class SharedState:
    """A run's JSON document. `value` is the current version (frozen), `version` counts commits.

    The caller's object is never changed. Commits are made on one thread (the event loop);
    drafts may be written in worker threads.

    `state_type` (a pydantic model) validates every new version: it costs one validation per
    commit. `max_bytes` bounds the new version's size as compact JSON; it is kept from the ops as
    an upper bound, so a commit serializes the whole document only when that bound passes it.

    Raises:
        TypeError: `value` is not JSON (the message names the path, e.g. `state["tags"]`).
    """

    __slots__ = ("_log", "_open", "_open_lock", "_recent", "_size", "_value", "_version",
                 "max_bytes", "state_type")

    def __init__(self, value: object = None, *,
                 state_type: type[pydantic.BaseModel] | None = None,
                 max_bytes: int | None = None) -> None:
        self._value: JSON = freeze(value, "state")
        self.state_type = state_type
        """The pydantic model every committed version must validate against, or None."""
        self.max_bytes = max_bytes
        """The most bytes of compact JSON a committed version may take, or None for no limit."""
        # an upper bound of json_size(self._value): taken now with a limit, else when one is set
        self._size: int | None = json_size_bound(self._value) if max_bytes is not None else None
        self._version = 0
        # (version, ops that made it from the one before), kept as far back as open drafts need
        self._log: list[tuple[int, tuple[Op, ...]]] = []
        # the ops of the latest EDIT_BACK commits, for a person's edit made on one of them
        # (made at the first commit: a deque is 600 bytes, and most runs of a server commit none)
        self._recent: collections.deque[tuple[int, tuple[Op, ...]]] | None = None
        # the writable drafts not closed yet (made at the first: most runs take none)
        self._open: weakref.WeakSet[Draft] | None = None
        self._open_lock = threading.Lock()  # close() may come from a tool's worker thread

    @property
    def value(self) -> JSON:
        """The current committed version (read-only `FrozenDict`/`FrozenList` containers)."""
        return self._value

    @property
    def version(self) -> int:
        """How many commits made the current version (0 for the value given)."""
        return self._version

    def draft(self, tool: str = "", *, writable: bool = True) -> Draft:
        """A draft of the current version for one tool call (`writable=False`: reads only)."""
        draft = Draft(self._value, self._version, tool=tool, writable=writable, owner=self,
                      on_close=self._forget)
        if writable:
            with self._open_lock:
                if self._open is None:
                    self._open = weakref.WeakSet()
                self._open.add(draft)
        return draft

    def commit(self, draft: Draft) -> Commit | None:
        """Apply a draft's changes as the next version; None if it changed nothing.

        Closes the draft. A draft closed earlier can still be committed, as long as the
        versions committed since it was taken are still kept (they are until the next commit).

        Raises:
            Conflict: another commit since the draft was taken wrote the same place or one
                containing it; nothing of this draft is applied.
            Refused: the new version would nest past `MAX_DEPTH`, pass `max_bytes` or fail
                `state_type`; nothing of this draft is applied.
            ValueError: the draft belongs to another SharedState.
            RuntimeError: the draft's base version is no longer kept (closed, then other
                commits were made), or it was already committed.
        """
        if draft.owner is not self:
            raise ValueError("this draft was made by another SharedState; commit it there")
        draft.close()
        ops = draft.ops
        if not ops:
            return None
        if draft._committed:
            raise RuntimeError("this draft was already committed; take a new draft")
        if draft.base_version == self._version:
            new = draft._end()  # its working copies become the new version: no copy
        else:
            ops = rebase(ops, self._since(draft.base_version))
            new = apply(self._value, ops)
        commit = self._publish(tuple(ops), new)
        draft._committed = True
        return commit

    def commit_edit(self, ops: list[Op] | tuple[Op, ...], base_version: int) -> Commit | None:
        """Apply a person's edit (`ops`, made on version `base_version`) as the next version,
        rebased past the commits made since with the person's rule (`rebase_edit`): where both
        wrote one place the edit wins; an edit whose place is gone is refused. None if it
        changes nothing. The versions of `EDIT_BACK` commits back are kept for it.

        Raises:
            Conflict: the place of one of its ops is gone (nothing of it is applied).
            Refused: as `commit`.
            LookupError: `base_version` is newer than this state, or older than it keeps.
        """
        if base_version > self._version:
            raise LookupError(f"version {base_version} is newer than the latest, "
                              f"{self._version}")
        if base_version < self._version:
            recent = self._recent or ()
            if not recent or recent[0][0] > base_version + 1:
                raise LookupError(f"version {base_version} is older than the versions kept "
                                  f"to rebase an edit on (the latest is {self._version})")
            ops = rebase_edit(ops, [op for made, made_ops in recent if made > base_version
                                    for op in made_ops])
        new, kept = self._value, []
        for op in ops:  # an op that writes what is there already changes nothing: left out
            if not _writes_same(new, op):
                new = apply(new, [op])
                kept.append(op)
        if not kept:
            return None
        return self._publish(tuple(kept), new)

    def _publish(self, ops: tuple[Op, ...], new: JSON) -> Commit:
        """Make `new`, which `ops` made, the next version, once `_check` passes it."""
        size = self._check(ops, new)
        delta = [op.to_json() for op in ops]  # everything that may fail, before any change
        self._size = size
        self._version += 1
        self._value = new
        self._log.append((self._version, ops))
        if self._recent is None:
            self._recent = collections.deque(maxlen=EDIT_BACK)
        self._recent.append((self._version, ops))
        self._prune()
        return Commit(delta=delta, state=new, version=self._version, ops=ops)

    def _check(self, ops: tuple[Op, ...], new: JSON) -> int | None:
        """Refuse `new` if it breaks a rule; its size bound (None when there is no byte limit)."""
        for op in ops:
            room = MAX_DEPTH - len(op.path)
            if op.kind != "remove" and deeper_than(op.value, room):
                raise Refused(f"the change at {pointer(op.path) or 'the root'} would make the "
                              f"shared state nest deeper than {MAX_DEPTH} levels, the limit; "
                              "keep it flatter")
        size = self._bound(ops, new)
        if size is not None and self.max_bytes is not None and size > self.max_bytes:
            size = json_size(new)  # the bound passed the limit: measure exactly
            if size > self.max_bytes and size > json_size(self._value):
                raise Refused(f"the change would make the shared state {size:,} bytes of JSON; "
                              f"the server's limit (max_state_bytes) is {self.max_bytes:,}: "
                              "keep less in it")
        if self.state_type is not None:
            try:
                self.state_type.model_validate(new)
            except pydantic.ValidationError as exc:
                fields = describe_problems(exc, root="state")
                raise Refused(f"the change would make a shared state that does not match the "
                              f"agent's state_type {self.state_type.__name__} ({fields}); keep "
                              "to its fields") from None
        return size

    def _bound(self, ops: tuple[Op, ...], new: JSON) -> int | None:
        """An upper bound of `json_size(new)`, from the current bound and the ops' values."""
        if self.max_bytes is None:
            return None
        size = self._size
        for op in ops:
            if not op.path:
                size = json_size(op.value)
            elif size is not None and op.kind != "remove":
                key = op.path[-1]
                size += json_size(op.value) + 1  # a comma
                if isinstance(key, str):
                    size += json_size(key) + 1  # "key":
        return json_size_bound(new) if size is None else size

    def _since(self, version: int) -> list[Op]:
        """The ops committed after `version`, in order."""
        if not self._log or self._log[0][0] > version + 1:
            raise RuntimeError(f"cannot commit a draft of version {version}: the changes made "
                               "since are no longer kept; commit a draft before closing it, or "
                               "take a new draft")
        return [op for made, ops in self._log if made > version for op in ops]

    def _forget(self, draft: Draft) -> None:
        with self._open_lock:
            if self._open is not None:
                self._open.discard(draft)

    def _prune(self) -> None:
        """Drop the log entries no open draft needs."""
        with self._open_lock:
            oldest = min((draft.base_version for draft in self._open or ()),
                         default=self._version)
        needed = next((at for at, (made, _) in enumerate(self._log) if made > oldest),
                      len(self._log))
        del self._log[:needed]


def _writes_same(root: JSON, op: Op) -> bool:
    """Whether `op` (a replace, or an add of an object key) writes the value already there."""
    if op.kind == "remove" or op.inserts:
        return False
    node: Any = root
    for token in op.path:
        there = (token in node if isinstance(node, dict) and isinstance(token, str)
                 else isinstance(node, list) and isinstance(token, int) and 0 <= token < len(node))
        if not there:
            return False
        node = node[token]
    return json_equal(node, op.value)
