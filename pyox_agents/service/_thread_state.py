"""A thread's shared state as a server keeps it between runs, and a client's edits merged into it.

The library keeps no shared state between runs (seed 004: "Nothing is stored"); a server is an
app, and keeping a thread's latest state, so that a reloaded page gets it back, is its own
choice (`create_app(..., keep_state=True)`, the default). It keeps the latest version and the
changes back to the `RECENT` versions before it, so that it can tell which version a client last
saw and take the client's own edits against that version.

A client's state is the person's edits on top of the version the client last saw: `merge` takes
the diff from that version to the client's state and rebases it onto the latest version with the
parallel tools' rules (`pyox_agents.state.patch.rebase`): disjoint edits are all kept. Where the
person and a run both wrote one place, the person's write wins (the run has finished: a server
runs one run per thread, and a client's request waits until it ends).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyox_agents.state.frozen import JSON, freeze
from pyox_agents.state.patch import Op, apply, apply_json, diff, inverse, parse_patch
from pyox_agents.state.rebase import rebase, rebase_edit

__all__ = ["RECENT", "ThreadState", "aligned", "edit_running", "json_equal", "merge"]

RECENT = 16
"""How many versions of a thread's state a server keeps (the latest and the ones before it)."""


def json_equal(a: Any, b: Any) -> bool:
    """Whether two JSON values are the same JSON (`true` is not `1`, `-0.0` is not `0.0`)."""
    if a is b:
        return True
    if isinstance(a, dict):
        return (isinstance(b, dict) and len(a) == len(b)
                and all(key in b and json_equal(value, b[key]) for key, value in a.items()))
    if isinstance(a, list):
        return (isinstance(b, list) and len(a) == len(b)
                and all(json_equal(x, y) for x, y in zip(a, b, strict=True)))
    if type(a) is not type(b) or isinstance(b, dict | list) or a != b:
        return False
    return not isinstance(a, float) or math.copysign(1.0, a) == math.copysign(1.0, b)


@dataclass
class ThreadState:
    """One thread's kept shared state: the latest `state`, its `version`, and the way back.

    `back[i]` holds the RFC 6902 ops that turn version `version - i` into the one before it, so
    the `RECENT` latest versions can be rebuilt without keeping each in full.
    """

    version: int = 0
    state: JSON = None
    back: list[list[dict[str, Any]]] = field(default_factory=list)
    _frozen: JSON = field(default=None, repr=False, compare=False)
    _stored: int | None = field(default=None, repr=False, compare=False)
    _unstored: list[dict[str, Any]] = field(default_factory=list, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ThreadState:
        """A ThreadState from what `to_json` gave (as a store returns it): the store holds
        this version, so the versions added next can be written as their changes."""
        version = int(data["version"])
        return cls(version, data["state"], [list(ops) for ops in data["back"]],
                   _stored=version)

    def to_json(self) -> dict[str, Any]:
        """The JSON a store keeps."""
        return {"version": self.version, "state": self.state, "back": self.back}

    def unstored(self) -> tuple[int, list[dict[str, Any]]] | None:
        """The version the store holds and the changes of the versions added since (each
        `{"version": n, "ops": [...]}`, RFC 6902 ops on `to_json`'s document), for
        `Store.append_kept_changes`; None when not known (write the whole state then)."""
        if self._stored is None or not self._unstored:
            return None
        return self._stored, list(self._unstored)

    def stored(self) -> None:
        """The store now holds this version (written whole, or its changes appended)."""
        self._stored, self._unstored = self.version, []

    def add(self, state: Any, number: int | None = None,
            ops: Sequence[Op] | None = None) -> None:
        """Record `state` as the next version, unless it is the same JSON as the latest; or,
        given its `number` (a run's version as the thread counts them), as that version
        (nothing when the thread has it already). `ops`: the ops that made `state` (frozen)
        from the latest, when known: the way back is then their inverse, with no walk of
        the whole document (a big state's edit costs what it changed)."""
        old = self.frozen()
        if number is not None and number <= self.version:
            return
        new = state if ops is not None else aligned(old, state)
        if number is None and self.version and ops is None and not diff(old, new):
            return
        number = self.version + 1 if number is None else number
        entries: list[list[dict[str, Any]]] = []
        if self.version:
            back = inverse(old, tuple(ops)) if ops is not None else diff(new, old)
            entries = [[op.to_json() for op in back]]
            entries += [[] for _ in range(number - self.version - 1)]  # numbers skipped: the
            self.back[:0] = reversed(entries)                          # same JSON as the next
        trimmed = len(self.back[RECENT - 1:])
        del self.back[RECENT - 1:]
        if self._stored is not None:  # the store has a version: this one is its changes
            made = (tuple(ops) if ops is not None else diff(old, new)) if self.version else None
            self._unstored.append(_change(number, new, made, entries, trimmed))
        self.version = number
        self.state, self._frozen = new, new

    def number_of(self, state: Any) -> int:
        """The number `state` would have once added: the latest's if it is the same JSON."""
        if self.version and not diff(self.frozen(), aligned(self.frozen(), state)):
            return self.version
        return self.version + 1

    def keeps(self, number: int) -> bool:
        """Whether version `number` is one of the kept versions."""
        return 0 < number <= self.version and number >= self.version - len(self.back)

    def at(self, number: int) -> JSON | None:
        """Version `number` (frozen), or None when it is not kept (see `keeps`)."""
        for kept, value in self.versions():
            if kept == number:
                return value
            if kept < number:
                return None
        return None

    def copy(self) -> ThreadState:
        """An independent copy (versions added to it leave this one as it is)."""
        return ThreadState(self.version, self.state, list(self.back), self._frozen,
                           self._stored, list(self._unstored))

    def frozen(self) -> JSON:
        """The latest version, read-only."""
        if self._frozen is None:
            self._frozen = freeze(self.state, "state")
        return self._frozen

    def versions(self) -> Iterator[tuple[int, JSON]]:
        """The kept versions (number, frozen value), the latest first."""
        value = self.frozen()
        yield self.version, value
        for number, ops in enumerate(self.back, start=1):
            value = apply_json(value, ops)
            yield self.version - number, value

    def changes(self, since: int, until: int | None = None) -> list[Op]:
        """The ops that were committed from version `since` to `until` (the latest), as they
        were made (each the inverse of its way back): a list item removed is that item's
        removal, not a shift of every item after it, so an edit made on `since` rebases onto
        them by identity of place.

        Raises:
            LookupError: `since` is not kept.
        """
        until = self.version if until is None else until
        if not self.keeps(since) or until > self.version or until < since:
            raise LookupError(f"versions {since} to {until} are not kept")
        steps: list[list[Op]] = []
        value = self.frozen()
        for number, back in enumerate(self.back, start=1):
            newer = self.version - number + 1  # `back` turns version `newer` into the one before
            if newer <= since:
                break
            older, back_ops = parse_patch(value, back)
            if newer <= until:
                steps.append(inverse(value, back_ops))
            value = older
        return [op for step in reversed(steps) for op in step]

    def is_latest(self, state: Any) -> bool:
        """Whether `state` is the same JSON as the latest version (one walk of `state`)."""
        return bool(self.version) and aligned(self.frozen(), state) is self.frozen()

    def holds(self, state: Any) -> bool:
        """Whether `state` is the same JSON as one of the kept versions."""
        if not self.version:
            return False
        target = aligned(self.frozen(), state)
        return any(not diff(value, target) for _, value in self.versions())

    def closest(self, target: JSON) -> tuple[int, JSON]:
        """(number, value) of the kept version `target` (aligned on the latest) equals, else
        of the closest to it (the fewest changes; the newer on a tie)."""
        best: tuple[int, int, JSON] | None = None
        for number, value in self.versions():
            changes = len(diff(value, target))
            if changes == 0:
                return number, value
            if best is None or changes < best[0]:
                best = (changes, number, value)
        assert best is not None
        return best[1], best[2]


def merge(kept: ThreadState, client: Any, seen: Any, version: int | None = None) -> JSON:
    """The state a run starts from: the client's edits (`client` against the kept version it
    last saw: `version` when the client names it, else found from `seen`) rebased onto the
    latest kept version.

    Disjoint edits of the person and of runs are all kept (the parallel tools' rebase). Where
    both wrote one place, the person's write wins (`rebase_edit`), and the runs' other changes
    are kept.

    Raises:
        Conflict: a place the person wrote is gone (a run or another person removed or
            replaced it, or a place containing it): nothing of the edits applies.
        LookupError: `version` is not one the server keeps.
    """
    version, mine_value, mine = _edits(kept, client, seen, version)
    if not mine:
        return kept.frozen()
    theirs = kept.changes(version)
    if not theirs:
        return mine_value
    return apply(kept.frozen(), rebase_edit(mine, theirs))


def merge_onto(kept: ThreadState, client: Any, base: JSON) -> JSON:
    """As `merge`, for a client whose edits are on `base`, a state the kept versions no longer
    hold (what a run left, from its checkpoint): the changes since are read as the difference
    from `base` to the latest version.

    Raises:
        Conflict: as `merge`.
    """
    mine_value = aligned(base, client)
    mine = diff(base, mine_value)
    if not mine:
        return kept.frozen()
    return apply(kept.frozen(), rebase_edit(mine, diff(base, kept.frozen())))


def edit_running(versions: ThreadState, client: Any, seen: Any,
                 version: int | None = None) -> JSON | None:
    """The person's edits (`client` against the version it saw: `version`, else found from
    `seen`) applied to the latest version of a run that is still going (paused for a person):
    rebased onto what it committed since, with its refusal rule. None when the person changed
    nothing.

    Raises:
        Conflict: the run wrote a place the person wrote too (nothing of the edit applies).
        LookupError: `version` is not one the run's versions keep.
    """
    version, _, mine = _edits(versions, client, seen, version)
    if not mine:
        return None
    return apply(versions.frozen(), rebase(mine, versions.changes(version)))


def _edits(kept: ThreadState, client: Any, seen: Any, version: int | None
           ) -> tuple[int, JSON, list[Op]]:
    """The version `client`'s state is edits on, that state aligned on it, and the edits.

    The version is the one the client names, else the kept one its `seen` state equals (or is
    the closest to: a client that names none cannot be told). A state that is the latest is no
    edit, whatever version it names (a page that follows the thread live, its messages naming
    an older one)."""
    if version is None:
        version = kept.closest(aligned(kept.frozen(), seen))[0]
    elif not kept.keeps(version):
        if not kept.is_latest(client):
            raise LookupError(f"version {version} of the thread's state is not one the server "
                              f"keeps (it keeps {max(1, kept.version - len(kept.back))} to "
                              f"{kept.version})")
        version = kept.version
    base = kept.at(version)
    mine_value = aligned(base, client)  # the person's edits are against the base, not latest
    return version, mine_value, diff(base, mine_value)


def _change(number: int, state: JSON, made: Sequence[Op] | None,
            entries: list[list[dict[str, Any]]], trimmed: int) -> dict[str, Any]:
    """Version `number`'s change to the kept document (`ThreadState.to_json`): its number,
    the ops that `made` its `state` (None: the whole state), the `entries` put in front of
    the way back (each in turn, at its front) and the `trimmed` ones dropped from its end."""
    ops: list[dict[str, Any]] = [{"op": "replace", "path": "/version", "value": number}]
    if made is None:
        ops.append({"op": "replace", "path": "/state", "value": state})
    for op in made or ():
        raw = op.to_json()
        ops.append({**raw, "path": f"/state{raw['path']}"})
    ops += [{"op": "add", "path": "/back/0", "value": entry} for entry in entries]
    ops += [{"op": "remove", "path": f"/back/{RECENT - 1}"}] * trimmed
    return {"version": number, "ops": ops}


def aligned(old: JSON, new: Any, at: list[str | int] | None = None) -> JSON:
    """`new` frozen, made of `old`'s own (frozen) parts wherever it holds the same JSON.

    A client's state arrives as fresh JSON; `diff` (made for versions that share structure)
    would see every item of a list that changed length as changed. Aligned on the kept
    version, only what really differs is new: list items are matched in place, then from the
    end (an item added or removed shifts the others). `at`: where `old` is in the document
    (the root by default), so that `freeze` counts `MAX_DEPTH` from the root.

    Raises:
        NotJSON: `new` is not JSON (naming where), or nests past `MAX_DEPTH`.
    """
    at = [] if at is None else at
    if isinstance(old, dict) and isinstance(new, dict):
        out: dict[str, Any] = {}
        same = len(new) == len(old)
        for key, value in new.items():
            child = _aligned_at(old[key], value, at, key) if key in old else value
            same = same and key in old and child is old[key]
            out[key] = child
        return old if same else freeze(out, "state", at=at)
    if isinstance(old, list) and isinstance(new, list):
        count, items = len(old), []
        same = count == len(new)
        for index, value in enumerate(new):
            end = index - len(new) + count  # the same place counted from the end
            if index < count and json_equal(old[index], value):
                child = old[index]
            elif 0 <= end < count and json_equal(old[end], value):
                child = old[end]
            else:
                child = _aligned_at(old[index], value, at, index) if index < count else value
            same = same and child is old[index]
            items.append(child)
        return old if same else freeze(items, "state", at=at)
    return old if json_equal(old, new) else freeze(new, "state", at=at)


def _aligned_at(old: JSON, new: Any, at: list[str | int], token: str | int) -> JSON:
    at.append(token)
    child = aligned(old, new, at)
    at.pop()  # (not on a raise: the walk ends there)
    return child
