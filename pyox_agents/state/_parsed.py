"""A freshly parsed JSON value (orjson's: only dict, list, str, int, float, bool, None; no NaN,
no lone surrogate), checked and frozen with bulk C operations instead of an item-by-item walk.

The parser's result is owned by nobody else, so its containers need no defensive copy beyond the
one that makes them `FrozenDict`/`FrozenList`, and its dicts can be dropped as soon as they are
copied. What freezing must still check is what the parser does not: nesting past a limit, and
floats that may be integers too large for it (orjson reads an integer past 64 bits as a float,
where `json.loads` keeps it an int). On either, `Unsure` is raised: the caller then takes the
value in through `json.loads` and `freeze`, whose errors name the path. A list of records (dicts
of scalars), the shape of most large states, is frozen in one pass per column of work rather
than one Python call per record.
"""

from __future__ import annotations

import gc
import math
from collections import deque
from collections.abc import Callable
from itertools import chain, compress, repeat, starmap
from operator import itemgetter, setitem
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
_slice: Any = list.__getitem__
_is_tracked = gc.is_tracked
_FROZEN_DICT = (FrozenDict,)
_FROZEN_LIST = (FrozenList,)
"""The argument tuples of `dict.__new__`/`list.__new__`, which `starmap` passes as they are: with
`map`, each call would build one (a third of the cost of making an empty `FrozenDict`)."""


def _tracking_tells() -> bool:
    """Whether the garbage collector's tracking of orjson's dicts says which hold containers:
    CPython tracks a dict from the moment a dict or a list is put in it, and leaves a dict of
    scalars untracked (an optimization, not a promise of the language: checked here once)."""
    holding = orjson.loads(b'[{"a": [], "b": 1}, {"a": {}}, {"a": 1, "b": [1]}]')
    plain = orjson.loads(b'{"a": 1, "b": "x", "c": null, "d": 1.5, "e": true}')
    return all(map(_is_tracked, holding)) and not _is_tracked(plain)


_TRACKING_TELLS = _tracking_tells()

_CHUNK = 1024
"""Dicts copied between two drops of the parsed ones: the memory the dropped ones free is then
reused, still in the CPU's cache, by the next copies (a list this short fits in the cache)."""
_NONES = (None,) * _CHUNK


def freeze_parsed(value: Any, levels: int) -> JSON:
    """`value` (just parsed by orjson, shared with nobody) frozen, nesting at most `levels` levels
    (a scalar is 1), as `freeze` would give it. `value`'s lists of dicts are emptied (their
    items set to None) as they are copied: the caller must not use `value` afterwards.

    Containers are found by their types, except in a list of dicts: there the collector's
    tracking tells the dicts of scalars apart (`_tracking_tells`), and in the others the
    containers are looked for under the first one's keys only, a guess that orjson's text of
    the value confirms (each `{` and `[` in it is one container; more are strings that hold
    brackets) or, if it does not, a check of every item of those dicts. Floats are checked only
    when that text holds an `e+`, which every float from 1e16 on is written with (always, with
    an orjson before 3.11.x, which writes `1e16`). The text, written from `value` before it is
    frozen (the same JSON), also gives the size check its bound (`note_text`).

    Raises:
        Unsure: it nests deeper, or holds a float of magnitude 2**63 or more.
    """
    if type(value) is not dict and type(value) is not list:
        if type(value) is float and abs(value) >= _BIG:
            raise Unsure
        return cast(JSON, value)
    try:
        text = orjson.dumps(value)
    except orjson.JSONEncodeError:  # nested past orjson's limit for writing (254 levels)
        raise Unsure from None
    walk = _Walk()
    frozen: JSON = _freeze(value, levels, walk)
    if walk.guessed and walk.count != text.count(b"{") + text.count(b"["):
        for dicts, room in walk.guessed:  # the guess may not have held: check every item
            _freeze_columns(dicts, room, walk, _set_in_dict)
    # no float from 1e16 on (`1e+16`); a `+` in a string (`C++`) costs a second look
    if not PLUS_EXPONENT or (b"+" in text and b"e+" in text):
        _check_levels(frozen, math.inf, FrozenDict, FrozenList)  # depth: checked as it froze
    note_text(frozen, text)
    return frozen


def fits_parsed(value: Any, levels: int) -> None:
    """Check `value` (just parsed by orjson) as `freeze_parsed` does, without freezing it.

    Raises:
        Unsure: it nests deeper than `levels`, or holds a float of magnitude 2**63 or more.
    """
    _check_levels(value, levels, dict, list)


def _check_levels(value: Any, levels: float, dict_type: type[dict[str, Any]],
                  list_type: type[list[Any]]) -> None:
    """Raise `Unsure` if `value`, whose containers are of `dict_type` and `list_type`, nests
    deeper than `levels` or holds a float of magnitude 2**63 or more; one level at a time,
    with C-level map over the items of each."""
    level: list[Any] = [value]
    while level:
        kinds = set(map(type, level))
        if float in kinds and any(abs(item) >= _BIG for item in level if type(item) is float):
            raise Unsure
        if dict_type not in kinds and list_type not in kinds:
            return
        levels -= 1
        if levels < 1:
            raise Unsure
        dicts = [item for item in level if type(item) is dict_type] if dict_type in kinds else []
        lists = [item for item in level if type(item) is list_type] if list_type in kinds else []
        level = list(chain(chain.from_iterable(map(dict.values, dicts)),
                           chain.from_iterable(lists)))


class _Walk:
    """What freezing a value counted: the containers it made, and the lists of dicts frozen on a
    guess (containers only under the first dict's keys), with the room their items have."""

    __slots__ = ("count", "guessed")

    def __init__(self) -> None:
        self.count = 0
        self.guessed: list[tuple[list[FrozenDict], int]] = []


def _freeze(value: Any, room: int, walk: _Walk) -> Any:
    kind = type(value)
    if kind is dict:
        return _freeze_dict(value, room, walk)
    if kind is list:
        return _freeze_list(value, room, walk)
    return value


def _freeze_dict(value: dict[str, Any], room: int, walk: _Walk) -> FrozenDict:
    frozen: FrozenDict = _new_dict(FrozenDict)
    _update(frozen, value)
    walk.count += 1
    if not value:
        return frozen
    if room < 2:
        raise Unsure
    kinds = set(map(type, value.values()))
    if dict in kinds or list in kinds:
        for key, item in value.items():
            if type(item) is dict or type(item) is list:
                _set_in_dict(frozen, key, _freeze(item, room - 1, walk))
    return frozen


def _freeze_list(value: list[Any], room: int, walk: _Walk) -> FrozenList:
    if value and room < 2:
        raise Unsure
    if value and room >= 3 and type(value[0]) is dict:
        return _records(value, room, walk)
    walk.count += 1
    frozen: FrozenList = _new_list(FrozenList)
    _extend(frozen, value)
    if set(map(type, value)) <= _LEAF:
        return frozen
    for index, item in enumerate(value):
        if type(item) is dict or type(item) is list:
            _set_in_list(frozen, index, _freeze(item, room - 1, walk))
    return frozen


def _records(value: list[Any], room: int, walk: _Walk) -> FrozenList:
    """A list that starts with a dict, frozen in bulk `_CHUNK` items at a time: in each run of
    dicts, the containers held by the dicts the collector tracks (the others hold only
    scalars) are frozen into them, a column per key of the first such dict (the guess `walk`
    keeps for `freeze_parsed` to confirm), then the run is copied at once. `value` is emptied
    as it goes: each run of parsed dicts is dropped once copied, so the next run's copies reuse
    their memory while it is in the CPU's cache. A run that holds anything but dicts is frozen
    item by item."""
    frozen: FrozenList = _new_list(FrozenList)
    _extend(frozen, starmap(_new_dict, repeat(_FROZEN_DICT, len(value))))
    walk.count += 1 + len(value)
    keys: list[str] | None = None  # the guess: where the first dict that holds containers has them
    for start in range(0, len(value), _CHUNK):
        end = start + _CHUNK
        parsed = value[start:end]
        if set(map(type, parsed)) != {dict}:
            walk.count -= len(parsed)
            _set_in_list(frozen, slice(start, end),
                         [_freeze(item, room - 1, walk) for item in parsed])
            continue
        # which dicts hold containers; all may, when the first does (then the guess is checked)
        held = (list(map(_is_tracked, parsed))
                if _TRACKING_TELLS and not _is_tracked(parsed[0]) else None)
        guessed = False
        if held is None or any(held):  # their containers frozen in place, before the copy
            holders = parsed if held is None or all(held) else list(compress(parsed, held))
            if keys is None:
                keys = [key for key, item in holders[0].items() if type(item) in _CONTAINERS]
            guessed = _freeze_by_key(holders, keys, room - 2, walk)
            if not guessed:
                _freeze_columns(holders, room - 2, walk, setitem)
        copies: list[FrozenDict] = _slice(frozen, slice(start, end))
        deque(map(_update, copies, parsed), 0)
        value[start:end] = _NONES[:len(parsed)]  # the same length: nothing after it moves
        del parsed
        if guessed:
            walk.guessed.append((copies if held is None else list(compress(copies, held)),
                                 room - 2))
    return frozen


def _freeze_by_key(dicts: list[dict[str, Any]], keys: list[str], room: int, walk: _Walk) -> bool:
    """Freeze the containers under `keys` in every one of `dicts` (parsed ones), in place, a
    column at a time (each item with `room` levels); False if a dict lacks one of the keys.

    Containers under other keys are left as they are: `freeze_parsed`'s count finds them."""
    for key in keys:
        try:
            column = list(map(itemgetter(key), dicts))
        except KeyError:
            return False
        if (set(map(type, column)) == {list} and room >= 2
                and set(map(type, chain.from_iterable(column))) <= _LEAF):
            walk.count += len(column)
            lists: list[FrozenList] = list(starmap(_new_list, repeat(_FROZEN_LIST, len(column))))
            deque(map(_extend, lists, column), 0)
            deque(map(setitem, dicts, repeat(key), lists), 0)
            continue
        for owner, item in zip(dicts, column, strict=True):
            if type(item) is dict or type(item) is list:
                owner[key] = _freeze(item, room, walk)
    return True


def _freeze_columns(dicts: list[Any], room: int, walk: _Walk,
                    put: Callable[[Any, str, Any], object]) -> None:
    """Freeze every container the `dicts` still hold as parsed (each with `room` levels), in
    place (`put` sets an item: `operator.setitem` for parsed dicts, `dict.__setitem__` for
    frozen ones), lists of scalars all at once."""
    items: list[Any] = list(chain.from_iterable(map(dict.values, dicts)))
    held = list(map(_CONTAINERS.__contains__, map(type, items)))  # no Python call per item
    inner = list(compress(items, held))
    if not inner:
        return
    keys = list(compress(chain.from_iterable(map(dict.keys, dicts)), held))
    owners = list(compress(chain.from_iterable(map(repeat, dicts, map(len, dicts))), held))
    if (set(map(type, inner)) == {list} and room >= 2
            and set(map(type, chain.from_iterable(inner))) <= _LEAF):
        walk.count += len(inner)
        lists: list[FrozenList] = list(starmap(_new_list, repeat(_FROZEN_LIST, len(inner))))
        deque(map(_extend, lists, inner), 0)
        deque(map(put, owners, keys, lists), 0)
        return
    for owner, key, item in zip(owners, keys, inner, strict=True):
        put(owner, key, _freeze(item, room, walk))
