"""A freshly parsed JSON value (orjson's: only dict, list, str, int, float, bool, None; no NaN,
no lone surrogate), checked and frozen with bulk C operations instead of an item-by-item walk.

The parser's result is owned by nobody else, so its containers need no defensive copy beyond the
one that makes them `FrozenDict`/`FrozenList`. What freezing must still check is what the parser
does not: nesting past a limit, and floats that may be integers too large for it (orjson reads
an integer past 64 bits as a float, where `json.loads` keeps it an int). On either, `Unsure` is
raised: the caller then takes the value in through `json.loads` and `freeze`, whose errors name
the path. A list of records (dicts of scalars), the shape of most large states, is frozen in
one pass per column of work rather than one Python call per record.
"""

from __future__ import annotations

from collections import deque
from itertools import chain, compress, repeat
from operator import itemgetter
from typing import Any, cast

import orjson

from pyox_agents.state._size_bound import PLUS_EXPONENT, note_text
from pyox_agents.state.frozen import JSON, FrozenDict, FrozenList

__all__ = ["Unsure", "fits_parsed", "freeze_parsed"]


class Unsure(Exception):
    """The value nests too deeply, or may hold an integer the fast parser read as a float."""


_LEAF = frozenset({str, int, bool, type(None), float})
_CONTAINERS = frozenset({dict, list})
_BIG = 2.0**63
"""Floats from this magnitude on may be integers orjson could not keep as ints."""

_new_dict = dict.__new__
_new_list = list.__new__
_update = dict.update
_extend = list.extend
_set_in_dict = dict.__setitem__
_set_in_list = list.__setitem__


def freeze_parsed(value: Any, levels: int) -> JSON:
    """`value` (just parsed by orjson, shared with nobody) frozen, nesting at most `levels` levels
    (a scalar is 1), as `freeze` would give it.

    First on the guess that a list of dicts holds records (dicts of scalars) and that no float
    is large: orjson's own text of the value then says whether the guess held, each `{` and `[`
    being one container (more are strings holding brackets), every float from 1e16 on written
    with `e+` (no `e+` at all: no large float). When it did not, the value is walked again,
    checking every item (always with an orjson before 3.11.x, which writes `1e16`), unless the
    count was off only by strings holding brackets (every guessed record is checked). The text
    also gives the size check its bound (`note_text`).

    Raises:
        Unsure: it nests deeper, or holds a float of magnitude 2**63 or more.
    """
    if type(value) is not dict and type(value) is not list:
        return cast(JSON, _freeze(value, levels, None))
    try:
        text = orjson.dumps(value)
    except orjson.JSONEncodeError:  # nested past orjson's limit for writing (254 levels)
        raise Unsure from None
    frozen: JSON = None
    # no float from 1e16 on (`1e+16`); a `+` in a string (`C++`) costs a second look
    if PLUS_EXPONENT and (b"+" not in text or b"e+" not in text):
        seen = _Guess()
        frozen = _freeze(value, levels, seen)
        if seen.count != text.count(b"{") + text.count(b"[") and not seen.held():
            frozen = None
    if frozen is None:
        frozen = _freeze(value, levels, None)
    note_text(frozen, text)
    return frozen


def fits_parsed(value: Any, levels: int) -> None:
    """Check `value` (just parsed by orjson) as `freeze_parsed` does, without freezing it.

    Raises:
        Unsure: it nests deeper than `levels`, or holds a float of magnitude 2**63 or more.
    """
    level = [value]
    while level:
        kinds = set(map(type, level))
        if float in kinds:
            _check_floats(level)
        if dict not in kinds and list not in kinds:
            return
        levels -= 1
        if levels < 1:
            raise Unsure
        dicts = [item for item in level if type(item) is dict] if dict in kinds else []
        lists = [item for item in level if type(item) is list] if list in kinds else []
        level = list(chain(chain.from_iterable(map(dict.values, dicts)),
                           chain.from_iterable(lists)))


def _check_floats(items: Any) -> None:
    if any(abs(item) >= _BIG for item in items if type(item) is float):
        raise Unsure


class _Guess:
    """The containers frozen on the guesses `freeze_parsed` verifies (records hold scalars only,
    no float is large), and the lists of records frozen on the first; `seen` is None where every
    item is checked instead."""

    __slots__ = ("count", "records")

    def __init__(self) -> None:
        self.count = 0
        self.records: list[list[FrozenDict]] = []

    def held(self) -> bool:
        """Whether every guessed record holds only scalars and frozen containers (the count of
        brackets was off by strings that hold some)."""
        allowed = _LEAF | {FrozenDict, FrozenList}
        return all(set(map(type, chain.from_iterable(map(dict.values, records)))) <= allowed
                   for records in self.records)


def _freeze(value: Any, room: int, seen: _Guess | None) -> Any:
    kind = type(value)
    if kind is dict:
        return _freeze_dict(value, room, seen)
    if kind is list:
        return _freeze_list(value, room, seen)
    if kind is float and abs(value) >= _BIG:
        raise Unsure
    return value


def _freeze_dict(value: dict[str, Any], room: int, seen: _Guess | None) -> FrozenDict:
    frozen: FrozenDict = _new_dict(FrozenDict)
    _update(frozen, value)
    if seen is not None:
        seen.count += 1
    if not value:
        return frozen
    if room < 2:
        raise Unsure
    kinds = set(map(type, value.values()))
    if float in kinds and seen is None:
        _check_floats(value.values())
    if dict in kinds or list in kinds:
        for key, item in value.items():
            if type(item) is dict or type(item) is list:
                _set_in_dict(frozen, key, _freeze(item, room - 1, seen))
    return frozen


def _freeze_list(value: list[Any], room: int, seen: _Guess | None) -> FrozenList:
    if seen is not None:
        seen.count += 1
    if value and room < 2:
        raise Unsure
    kinds = set(map(type, value))
    if float in kinds and seen is None:
        _check_floats(value)
    if kinds <= _LEAF:
        frozen: FrozenList = _new_list(FrozenList)
        _extend(frozen, value)
        return frozen
    if kinds == {dict} and room >= 3:
        return _records(value, room, seen)
    frozen = _new_list(FrozenList)
    _extend(frozen, value)
    for index, item in enumerate(value):
        if type(item) is dict or type(item) is list:
            _set_in_list(frozen, index, _freeze(item, room - 1, seen))
    return frozen


def _records(value: list[dict[str, Any]], room: int, seen: _Guess | None) -> FrozenList:
    """A list of dicts frozen in bulk: all the dicts at once, then all the containers they hold.

    With `seen`, and a first dict that holds only scalars, the dicts are taken to be records
    (dicts of scalars) unchecked, and counted: `freeze_parsed` verifies it."""
    dicts: list[FrozenDict] = list(map(_new_dict, repeat(FrozenDict, len(value))))
    deque(map(_update, dicts, value), 0)
    frozen: FrozenList = _new_list(FrozenList)
    _extend(frozen, dicts)
    if seen is not None:
        seen.count += len(value)
        held = [key for key, item in value[0].items() if type(item) is dict or type(item) is list]
        if not held or _freeze_by_key(value, dicts, held, room - 2, seen):
            seen.records.append(dicts)
            return frozen
    items = list(chain.from_iterable(map(dict.values, value)))
    kinds = set(map(type, items))
    if float in kinds and seen is None:
        _check_floats(items)
    if dict in kinds or list in kinds:
        _freeze_columns(value, dicts, items, room - 2, seen)
    return frozen


def _freeze_by_key(value: list[dict[str, Any]], dicts: list[FrozenDict], keys: list[str],
                   room: int, seen: _Guess) -> bool:
    """Freeze the containers under `keys` (those the first dict holds) in every dict of `value`
    and put them in `dicts`, a column at a time; False if a dict lacks one of the keys.

    Containers under other keys are left unseen: `freeze_parsed`'s count of them finds out."""
    for key in keys:
        try:
            column = list(map(itemgetter(key), value))
        except KeyError:
            return False
        if set(map(type, column)) == {list} and room >= 2:
            leaves = set(map(type, chain.from_iterable(column)))
            if leaves <= _LEAF:
                if float in leaves:
                    _check_floats(chain.from_iterable(column))
                seen.count += len(column)
                lists: list[FrozenList] = list(map(_new_list, repeat(FrozenList, len(column))))
                deque(map(_extend, lists, column), 0)
                deque(map(_set_in_dict, dicts, repeat(key), lists), 0)
                continue
        for owner, item in zip(dicts, column, strict=True):
            if type(item) is dict or type(item) is list:
                _set_in_dict(owner, key, _freeze(item, room, seen))
    return True


def _freeze_columns(value: list[dict[str, Any]], dicts: list[FrozenDict], items: list[Any],
                    room: int, seen: _Guess | None) -> None:
    """Freeze the containers among `items` (the values of the dicts of `value`, in order, each
    with `room` levels) and put each in its place in `dicts` (their frozen copies); lists of
    scalars all at once."""
    held = list(map(_CONTAINERS.__contains__, map(type, items)))  # no Python call per item
    inner = list(compress(items, held))
    keys = list(compress(chain.from_iterable(map(dict.keys, value)), held))
    owners = list(compress(chain.from_iterable(map(repeat, dicts, map(len, value))), held))
    if set(map(type, inner)) == {list} and room >= 2:
        leaves = set(map(type, chain.from_iterable(inner)))
        if leaves <= _LEAF:
            if float in leaves:
                _check_floats(chain.from_iterable(inner))
            if seen is not None:
                seen.count += len(inner)
            lists: list[FrozenList] = list(map(_new_list, repeat(FrozenList, len(inner))))
            deque(map(_extend, lists, inner), 0)
            deque(map(_set_in_dict, owners, keys, lists), 0)
            return
    for owner, key, item in zip(owners, keys, inner, strict=True):
        _set_in_dict(owner, key, _freeze(item, room, seen))
