"""The shared JSON document of a run: committed versions, drafts, and commits.

Each tool call gets a `Draft` of the current version. `commit` rebases the draft's ops past the
versions committed since it was taken and applies them, giving the next version and its delta
(RFC 6902 dicts, ready to send to a frontend). When nothing was committed meanwhile, the draft's
working copies become the new version in place: committing costs nothing more than the writes.
"""

from __future__ import annotations

import threading
import weakref
from collections import deque
from dataclasses import dataclass

from pyox_agents.state.draft import Draft
from pyox_agents.state.frozen import JSON, freeze
from pyox_agents.state.patch import Op, apply, rebase

__all__ = ["Commit", "SharedState"]


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

    Raises:
        TypeError: `value` is not JSON (the message names the path, e.g. `state["tags"]`).
    """

    def __init__(self, value: object = None) -> None:
        self._value: JSON = freeze(value, "state")
        self._version = 0
        # (version, ops that made it from the one before), kept as far back as open drafts need
        self._log: deque[tuple[int, tuple[Op, ...]]] = deque()
        self._open: weakref.WeakSet[Draft] = weakref.WeakSet()
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
        draft = Draft(
            self._value, self._version, tool=tool, writable=writable, owner=self,
            on_close=self._forget,
        )
        if writable:
            with self._open_lock:
                self._open.add(draft)
        return draft

    def commit(self, draft: Draft) -> Commit | None:
        """Apply a draft's changes as the next version; None if it changed nothing.

        Closes the draft. A draft closed earlier can still be committed, as long as the
        versions committed since it was taken are still kept (they are until the next commit).

        Raises:
            Conflict: another commit since the draft was taken wrote the same place or one
                containing it; nothing of this draft is applied.
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
        applied = tuple(ops)
        draft._committed = True
        self._version += 1
        self._value = new
        self._log.append((self._version, applied))
        self._prune()
        return Commit(
            delta=[op.to_json() for op in applied],
            state=new,
            version=self._version,
            ops=applied,
        )

    def _since(self, version: int) -> list[Op]:
        """The ops committed after `version`, in order."""
        if not self._log or self._log[0][0] > version + 1:
            raise RuntimeError(
                f"cannot commit a draft of version {version}: the changes made since are no "
                f"longer kept; commit a draft before closing it, or take a new draft"
            )
        return [op for made, ops in self._log if made > version for op in ops]

    def _forget(self, draft: Draft) -> None:
        with self._open_lock:
            self._open.discard(draft)

    def _prune(self) -> None:
        """Drop the log entries no open draft needs."""
        with self._open_lock:
            oldest = min((draft.base_version for draft in self._open), default=self._version)
        while self._log and self._log[0][0] <= oldest:
            self._log.popleft()
