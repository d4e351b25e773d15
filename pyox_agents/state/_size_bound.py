"""Whether a frozen JSON value's compact `json.dumps` text passes a byte limit, without writing
that text with `json.dumps` (as slow as parsing it) for the values far enough under the limit.

orjson writes the same compact JSON as `json.dumps(value, separators=(",", ":"))`, but for three
things, each bounded here from orjson's bytes: a non-ASCII character is its UTF-8 bytes (2 to 4)
where `json.dumps` writes a `\\uXXXX` escape (6 characters, 12 past the BMP); DEL (0x7f) is
itself where `json.dumps` writes `\\u007f`; a float with a one-digit negative exponent
(`1e-7`) takes one character less than `repr` (`1e-07`), and so does, before orjson 3.11.x, one
with a positive exponent (`1e16`, not `1e+16`). Frozen values hold no NaN, infinity or lone
surrogate, which orjson would write otherwise or refuse.
"""

from __future__ import annotations

import json

import orjson

from pyox_agents.state.frozen import FrozenDict, FrozenList

__all__ = ["PLUS_EXPONENT", "json_size", "json_size_bound", "json_size_over", "note_text"]

PLUS_EXPONENT = orjson.dumps(1e16) == b"1e+16"
"""Whether orjson writes a positive exponent as `repr` does (`1e+16`; from 3.11.x on)."""

_ALL = bytes(range(256))
_NOT_LEAD2 = bytes(b for b in range(256) if not 0xC2 <= b <= 0xDF)
_NOT_LEAD3 = bytes(b for b in range(256) if not 0xE0 <= b <= 0xEF)
_NOT_LEAD4 = bytes(b for b in range(256) if not 0xF0 <= b <= 0xF4)


def json_size(value: object) -> int:
    """The size of `value` as compact JSON text: how a server measures a request's state."""
    return len(json.dumps(value, separators=(",", ":")))


def json_size_over(value: object, limit: int) -> int | None:
    """The size of `value` as compact JSON text (`json.dumps(value, separators=(",", ":"))`)
    when it is more than `limit`; None when it is at most `limit`.

    Exact whenever it returns a size; for a frozen value, measured in full only when a bound
    from orjson's text passes `limit`.
    """
    if isinstance(value, FrozenDict | FrozenList):
        bound = _frozen_bound(value, forget=True)
        if bound is not None and bound <= limit:
            return None
    size = json_size(value)
    return size if size > limit else None


def json_size_bound(value: object) -> int:
    """At least the size of `value` as compact JSON text, and for a frozen value seldom more
    than a few bytes per float or non-ASCII character above it (exact otherwise)."""
    if isinstance(value, FrozenDict | FrozenList):
        bound = _frozen_bound(value)
        if bound is not None:
            return bound
    return json_size(value)


def _frozen_bound(value: object, *, forget: bool = False) -> int | None:
    """The bound `note_text` kept for `value` (then dropped with `forget`: once measured, the
    state is not kept here any longer), else one from orjson's text of it; None when orjson
    cannot write it (an int past 64 bits: measure exactly)."""
    known = _known
    if known and known[0][0] is value:
        bound = known[0][1]
        if forget:
            known.clear()
        return bound
    try:
        return _upper_bound(orjson.dumps(value))
    except orjson.JSONEncodeError:
        return None


def note_text(value: object, text: bytes) -> None:
    """Keep the bound of `value` from `text`, orjson's text of it (written while it was taken
    in), for the size check that follows: only the last value is kept, until it is measured."""
    _known[:] = [(value, _upper_bound(text))]


_known: list[tuple[object, int]] = []


def _upper_bound(text: bytes) -> int:
    """At least the length of `json.dumps`'s compact text of what orjson wrote as `text`."""
    size = len(text)
    if b"\x7f" in text:  # `in` looks for one byte at memchr's speed: most texts skip the count
        size += 5 * text.count(b"\x7f")
    if not PLUS_EXPONENT:
        size += text.count(b"e")  # every float's exponent, and more
    elif b"-" in text:
        size += text.count(b"e-")
    if not text.isascii():  # each character: 2 bytes -> 6, 3 bytes -> 6, 4 bytes -> 12
        size += (4 * len(text.translate(_ALL, _NOT_LEAD2))
                 + 3 * len(text.translate(_ALL, _NOT_LEAD3))
                 + 8 * len(text.translate(_ALL, _NOT_LEAD4)))
    return size
