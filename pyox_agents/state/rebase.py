"""Moving a change past the changes committed since it was made (`rebase`), the way parallel
tools' changes and a person's edits are combined: list indices shift past inserts and removals;
the same place written by both is a `Conflict`, and nothing of the refused change applies.
"""

from __future__ import annotations

import dataclasses

from pyox_agents._errors import PyoxError
from pyox_agents.state.frozen import pointer
from pyox_agents.state.jsonvalue import json_equal
from pyox_agents.state.patch import Op, Path

__all__ = ["Conflict", "rebase", "rebase_edit"]


class Conflict(PyoxError):
    """Another tool changed the same place (or a place containing it) while this tool ran.

    `path` is the JSON Pointer of the contested place. Nothing of the refused change is applied.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        where = f"at {path}" if path else "as a whole"
        super().__init__(f"the shared state changed {where} while this tool ran")


PAIRS_PER_OP = 16
"""How much work a rebase may do: `PAIRS_PER_OP` pairs of ops looked at per op of the two
changes (at least `MIN_PAIRS`), so that its time grows with the size of the changes, never with
their product (a request cannot hold the event loop by sending a long list reordered)."""
MIN_PAIRS = 4_096


def rebase(ops: list[Op] | tuple[Op, ...], committed: list[Op] | tuple[Op, ...]) -> list[Op]:
    """A tool's `ops` (recorded on version v) moved to apply after `committed` (ops since v).

    The inclusion transform: each committed op shifts the list indices of the tool's ops past
    its insert or removal, and is itself shifted past each tool op in turn, so later tool ops
    (recorded after earlier ones) line up. Two inserts at one index: the committed one goes
    first. An append stays at the end of the list.

    Ops under different top-level keys never meet, and when neither change inserts or removes a
    list item nothing moves, so only overlapping places are looked for. Two changes that both
    move items of one part of the document by the hundreds (more pairs of ops than
    `PAIRS_PER_OP` per op) are not combined op by op: that is a `Conflict` at the part.

    Raises:
        Conflict: a committed op and a tool op write the same place, or one writes a place
            containing the other's (inserts into a list write no item, so they never conflict);
            or both move items of one part of the document too much to combine.
    """
    mine = list(ops)
    if not mine or not committed:
        return mine
    if not any(op.moves for op in mine) and not any(op.moves for op in committed):
        _refuse_overlaps(mine, committed)
        return mine
    whole = any(not op.path for op in mine) or any(not op.path for op in committed)
    groups: dict[str | None, tuple[list[int], list[Op]]] = {}
    for at, op in enumerate(mine):
        groups.setdefault(None if whole else _part(op), ([], []))[0].append(at)
    for op in committed:
        part = None if whole else _part(op)
        if part in groups:
            groups[part][1].append(op)
    budget = max(MIN_PAIRS, PAIRS_PER_OP * (len(mine) + len(committed)))
    for key, (places, theirs) in groups.items():
        if not theirs:
            continue
        if len(places) * len(theirs) > budget:
            raise Conflict(pointer((key,)) if key is not None else "")
        budget -= len(places) * len(theirs)
        moved = _rebase_pairs([mine[at] for at in places], theirs)
        for at, op in zip(places, moved, strict=True):
            mine[at] = op
    return mine


def rebase_edit(ops: list[Op] | tuple[Op, ...],
                committed: list[Op] | tuple[Op, ...]) -> list[Op]:
    """A person's edit (`ops`, made on version v) moved to apply after `committed` (the ops
    committed since v, by runs or other people), where the person wins.

    As `rebase`, list indices shift past inserts and removals, and disjoint changes are all
    kept. Where both wrote one place, the edit is the person's latest intent and is applied over
    the committed write: the same place, or a place containing it (a person's delete of a todo a
    run ticked deletes it). Both removing one item: the edit's removal is already done (but if
    both also put the same value back into that list, both moved it: a `Conflict`). An edit
    whose place is gone cannot apply: a committed change removed it, or replaced or removed a
    place containing it (the run cleared the list whose item the person ticked); that is a
    `Conflict` at the place, and nothing of the edit applies.

    Raises:
        Conflict: the place of one of the edit's ops is gone; or both changes move items of
            one part of the document too much to combine (as `rebase`).
    """
    mine: list[Op | None] = list(ops)
    if not mine or not committed:
        return list(ops)
    budget = max(MIN_PAIRS, PAIRS_PER_OP * (len(mine) + len(committed)))
    both_removed: set[Path] = set()  # lists both removed one item from
    for theirs_op in committed:
        theirs: Op | None = theirs_op
        for at, op in enumerate(mine):
            if op is None or theirs is None:
                continue
            budget -= 1
            if budget < 0:
                raise Conflict(pointer(op.path[:1]))
            if _conflicts(op, theirs):
                if _gone(op, theirs):
                    raise Conflict(pointer(op.path))
                if op.kind == "remove" and theirs.kind == "remove" and op.path == theirs.path:
                    mine[at] = None  # removed already: the later ops line up without it
                    theirs = None
                    both_removed.add(op.path[:-1])
                    continue
                # the person's write stands over it (the same place, or a place containing
                # it): what the committed op wrote is written over, and moves no later edit op
                theirs = None
                continue
            mine[at] = _shift(op, theirs, first=False)
            theirs = _shift(theirs, op, first=True)
    moved = [op for op in mine if op is not None]
    for where in both_removed:  # both moved the item (each put it back): it would be twice
        mine_in = [op.value for op in moved if op.inserts and op.path[:-1] == where]
        if any(op.inserts and op.path[:-1] == where and any(json_equal(op.value, value)
                                                           for value in mine_in)
               for op in committed):
            raise Conflict(pointer(where))
    return moved


def _gone(op: Op, theirs: Op) -> bool:
    """Whether `theirs` (committed) removed or replaced the place `op` writes, or a place
    containing it, so that `op` has nothing to write on."""
    if theirs.inserts:
        return False
    if len(theirs.path) < len(op.path) - (1 if op.inserts else 0):
        return _is_prefix(theirs.path, op.path)  # a container of it was replaced or removed
    if op.inserts:  # theirs replaced or removed the list op inserts into
        return theirs.path == op.path[:-1]
    if theirs.path == op.path:
        return theirs.kind == "remove" and op.kind == "replace"
    return False


def _part(op: Op) -> str | None:
    """The part of the document `op` is in: its top-level key (ops under different keys never
    meet), or None under a top-level list (an insert there moves every other part)."""
    return op.path[0] if isinstance(op.path[0], str) else None


def _rebase_pairs(mine: list[Op], committed: list[Op]) -> list[Op]:
    """`rebase` of two changes, op by op (every pair looked at)."""
    for theirs in committed:
        moved: list[Op] = []
        for op in mine:
            if _conflicts(op, theirs):
                raise Conflict(pointer(theirs.path if len(theirs.path) < len(op.path) else op.path))
            moved.append(_shift(op, theirs, first=False))
            theirs = _shift(theirs, op, first=True)
        mine = moved
    return mine


def _refuse_overlaps(mine: list[Op], committed: list[Op] | tuple[Op, ...]) -> None:
    """Raise `Conflict` where an op of `mine` and one of `committed` write overlapping places,
    for changes that move no list item (so no path shifts)."""
    places = _Places(committed)
    for op in mine:
        met = places.met_by(op)
        if met is not None:
            raise Conflict(pointer(met))


class _Places:
    """The places a change writes, to find the ops of another change that meet them (the rule
    of `_conflicts`) by a lookup per prefix of each path, not a look at every pair."""

    def __init__(self, ops: list[Op] | tuple[Op, ...]) -> None:
        self.written: set[Path] = set()  # the paths of ops that write an item or a key
        self.around: set[Path] = set()  # every prefix of those, and of each list inserted into
        for op in ops:
            if op.inserts:
                self.around.update(op.path[:depth] for depth in range(len(op.path)))
            else:
                self.written.add(op.path)
                self.around.update(op.path[:depth] for depth in range(len(op.path) + 1))

    def met_by(self, op: Op) -> Path | None:
        """The contested place if `op` meets one of these places, else None."""
        path = op.path
        if not op.inserts and path in self.around:  # the same place, or one inside this one
            return path
        for depth in range(len(path) if op.inserts else len(path) + 1):
            if path[:depth] in self.written:  # a place containing this one
                return path[:depth]
        return None


def _conflicts(a: Op, b: Op) -> bool:
    """Whether two ops made on one state write overlapping places."""
    if a.inserts and b.inserts:
        return False
    if a.inserts:  # b writes over the list a inserts into, or over a container of it
        return _is_prefix(b.path, a.path[:-1])
    if b.inserts:
        return _is_prefix(a.path, b.path[:-1])
    return _is_prefix(a.path, b.path) or _is_prefix(b.path, a.path)


def _is_prefix(short: Path, long: Path) -> bool:
    return len(short) <= len(long) and long[: len(short)] == short


def _shift(op: Op, by: Op, *, first: bool) -> Op:
    """`op` moved past `by` (both made on one state, not conflicting) if `by` moved list items.

    `first`: on a tie between two inserts at one index, `op` goes first (it does not move).
    """
    if by.kind == "replace" or not by.path or not isinstance(by.path[-1], int):
        return op
    level = len(by.path) - 1
    if len(op.path) <= level or op.path[:level] != by.path[:level]:
        return op
    index = op.path[level]
    at = by.path[-1]
    assert isinstance(index, int)
    if by.kind == "add":
        tie_stays = first and op.inserts and len(op.path) == level + 1
        if index > at or (index == at and not tie_stays):
            index += 1
        else:
            return op
    else:  # remove: _conflicts already refused an op inside the removed item
        if index > at:
            index -= 1
        else:
            return op
    return dataclasses.replace(op, path=(*op.path[:level], index, *op.path[level + 1 :]))
