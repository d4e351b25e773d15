"""A kept state written as its changes: a base (the whole document, as `write_kept_state` took
it) and the versions appended since, each as its RFC 6902 ops on that document.

A person's edit of one item of a 100,000-item state changes a few hundred bytes, but the whole
document is megabytes of JSON: turning it into text on every write was nearly all of an edit's
cost. A writer that knows the version the store holds appends only the new versions' changes
(`Store.append_kept_changes`); a load applies them to the base in order, with the state's own
patch code (`pyox_agents.state.patch.apply_json`), so it gives exactly what a whole write would
have kept; and a store writes the whole document again (compacts) once the changes pass a share
of the base's size or `MAX_CHANGES` of them, so a load never has many to apply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyox_agents.state.frozen import FrozenDict, freeze
from pyox_agents.state.patch import apply_json
from pyox_agents.stores._encoding import dumps, stale_keeper
from pyox_agents.stores._records import StoreConflict

__all__ = ["COMPACT_SHARE", "MAX_CHANGES", "NOT_FOLDED", "EncodedChanges", "compacted",
           "encode_changes", "fold", "fold_texts", "kept_refusal", "kept_version",
           "moved", "wants_compaction"]

MAX_CHANGES = 500
"""How many appended versions a store holds before it writes the whole kept state again."""

COMPACT_SHARE = 0.5
"""The share of the base's size the appended changes may reach before the store writes the
whole kept state again (a small state is then written whole nearly every time: it is cheap)."""

NOT_FOLDED = "thread %s: its kept state's changes were not folded into it"
"""What a store logs when a compaction failed (the next append folds the changes)."""


@dataclass(frozen=True, slots=True)
class EncodedChanges:
    """The changes of one append, checked and turned into JSON text before a store touches
    anything: `versions[i]` is the version `texts[i]` makes; `size` is the texts' length."""

    since: int
    versions: tuple[int, ...]
    texts: tuple[str, ...]
    size: int

    @property
    def version(self) -> int:
        """The version the kept state is at once the changes are appended."""
        return self.versions[-1]


def encode_changes(thread_id: str, since: int,
                   changes: Sequence[Mapping[str, Any]]) -> EncodedChanges:
    """Check an append's `changes` (`{"version": n, "ops": [...]}` each, versions increasing
    past `since`) and give their JSON text.

    Raises:
        ValueError: no changes, a version that is not an integer past the one before, or ops
            that are not a list; the message names the change.
        TypeError: a change that is not JSON.
    """
    where = f"the kept state of thread {thread_id!r}"
    if type(since) is not int:
        raise ValueError(f"{where}: `since` is {since!r}; give the version (an int) the kept "
                         "state is at, which the changes extend")
    if not changes:
        raise ValueError(f"{where}: an append needs at least one change; pass the new "
                         "versions' changes, or nothing at all")
    versions: list[int] = []
    texts: list[str] = []
    for i, change in enumerate(changes):
        version, ops = change.get("version"), change.get("ops")
        if type(version) is not int or version <= (versions[-1] if versions else since):
            raise ValueError(f"{where}: changes[{i}] has version {version!r}; each change's "
                             "version must be an int past the one before it (and past "
                             f"`since`, {since})")
        if not isinstance(ops, list | tuple):
            raise ValueError(f"{where}: changes[{i}] has no list of RFC 6902 'ops'")
        versions.append(version)
        texts.append(dumps(change, f"{where}: changes[{i}]"))
    return EncodedChanges(since, tuple(versions), tuple(texts), sum(map(len, texts)))


def kept_version(kept: Mapping[str, Any]) -> int | None:
    """The version a kept state is at (its "version"), or None when it has none."""
    version = kept.get("version")
    return version if type(version) is int else None


def moved(thread_id: str, since: int, held: int | None) -> StoreConflict:
    """The refusal of an append whose kept state is not at version `since` (`held` instead)."""
    now = "no kept state" if held is None else f"version {held}"
    return StoreConflict(
        f"the kept state of thread {thread_id!r} is at {now}, not at version {since} that "
        "these changes extend: another writer kept a version meanwhile, or an earlier write "
        "did not land; write the whole state (write_kept_state), or load it again")


def kept_refusal(thread_id: str, encoded: EncodedChanges | None, token: int | None,
                 outcome: str, held: str) -> StoreConflict:
    """The StoreConflict of a backend's refusal of a kept-state write: "moved" (`held` is the
    version the kept state is at) or "fence" (`held` is the lease holder's token)."""
    if outcome == "moved" and encoded is not None:
        return moved(thread_id, encoded.since, int(held) if held else None)
    return stale_keeper(thread_id, token or 0, held)


def fold(base: Mapping[str, Any], changes: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """`base` with each change's ops applied in order: what a whole write of the latest version
    would have kept. Read-only (frozen) where there were changes.

    Raises:
        ValueError: a change's ops do not apply (the message names the op's path).
    """
    if not changes:
        return base
    # each part frozen alone: the document adds no level to its depth
    return _applied(FrozenDict({key: freeze(value, key) for key, value in base.items()}),
                    changes)


def fold_texts(base: str, changes: Sequence[str]) -> Mapping[str, Any]:
    """`fold` of a base and changes as a store holds them (JSON text)."""
    loaded: Mapping[str, Any] = json.loads(base)
    return fold(loaded, [json.loads(text) for text in changes])


def compacted(thread_id: str, base: str, changes: Sequence[str]) -> str:
    """The JSON text of the whole kept state: `base` with `changes` applied (to the parsed
    base as it is: only the containers the changes write are copied, nothing is frozen, as
    the result is only turned into text)."""
    folded = _applied(json.loads(base), [json.loads(text) for text in changes])
    return dumps(folded, f"the kept state of thread {thread_id!r}")


def _applied(root: Any, changes: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """`root` with the changes' ops applied, all by one `apply_json`: a container that many
    changes write (a long list) is copied once, not once per change."""
    folded = apply_json(root, (op for change in changes for op in change["ops"]))
    if not isinstance(folded, dict):
        raise ValueError("a kept state's change replaced the whole document with a value "
                         "that is not an object; the kept state is an object")
    return folded


def wants_compaction(base_size: int, changes_size: int, count: int) -> bool:
    """Whether a store holding `count` appended changes of `changes_size` characters over a
    base of `base_size` should write the whole state again."""
    return count >= MAX_CHANGES or changes_size > base_size * COMPACT_SHARE
