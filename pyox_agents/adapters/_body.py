"""A request body's checks, for every protocol: bytes -> JSON, or a `RequestError(400)` that says
what is wrong, before a stream opens."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from pyox_agents._run_request import RequestError
from pyox_agents.state._depth import deep_path, deeper_than
from pyox_agents.state._parsed import Unsure, fits_parsed, freeze_parsed
from pyox_agents.state.frozen import MAX_DEPTH, lone_surrogate, python_path

__all__ = ["ENVELOPE_DEPTH", "read_json"]


ENVELOPE_DEPTH = 8
"""How many levels a protocol's own fields may add around a value (the AI SDK's `data-state` and
tool parts sit at `messages[i].parts[j].data`): a body may nest `MAX_DEPTH` + this, so every state
and tool input the server sent, nested up to `MAX_DEPTH` itself, fits when a client sends it back.
The values inside are then held to `MAX_DEPTH` where they enter a run, with their path."""


def read_json(body: bytes | str, what: str, *, frozen: str | None = None) -> Any:
    """The JSON of a request body, or `RequestError(400)` saying what is wrong with it.

    Refuses what would fail later, after a stream opened: text that is not JSON, nesting past
    `MAX_DEPTH` + `ENVELOPE_DEPTH` (a parser's recursion, a serializer's depth limit), and
    strings with lone surrogates (not UTF-8, so no store or client can take them).

    `frozen` names a field of a body object (a request's shared state) to give frozen, as
    `freeze` would, when it is JSON within `MAX_DEPTH`; otherwise it is left as parsed, for
    `freeze` to refuse with its path where the state enters a run.
    """
    data = _read_fast(body, frozen)
    if data is not _UNSURE:
        return data
    return _read_checked(body, what)


_UNSURE: Any = object()

_DIGITS = 4300
"""The most digits of an integer a body may hold (Python's own limit on reading one)."""


class _TooLong(ValueError):
    """An integer with more than `_DIGITS` digits."""


def _integer(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > _DIGITS:
        raise _TooLong(f"the body holds an integer of {digits:,} digits, more than the "
                       f"{_DIGITS:,} a number may have: send a larger one as a string")
    return int(text)


def _read_fast(body: bytes | str, frozen: str | None) -> Any:
    """The body read by orjson, which refuses lone surrogates, invalid UTF-8, NaN and infinity
    by itself; `_UNSURE` for anything it refuses or that needs a closer look (nesting near the
    limits, a float that may be an integer orjson could not hold), which `_read_checked` then
    reads as `json.loads` does, with the error that names the path."""
    try:
        data = orjson.loads(body)
        if frozen is None or type(data) is not dict or frozen not in data:
            fits_parsed(data, _BODY_DEPTH)
            return data
        value, data[frozen] = data[frozen], None  # the rest checked apart, the keys in order
        fits_parsed(data, _BODY_DEPTH)
        data[frozen] = freeze_parsed(value, MAX_DEPTH)  # so the body nests at most MAX_DEPTH + 1
    except (ValueError, Unsure):  # orjson.JSONDecodeError is a ValueError
        return _UNSURE
    return data


def _read_checked(body: bytes | str, what: str) -> Any:
    try:
        data = json.loads(body, parse_int=_integer)
    except _TooLong as exc:
        raise RequestError(400, f"{exc}; send {what}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RequestError(400, f"the body is not JSON ({exc}); send {what}") from None
    except RecursionError:
        raise RequestError(400, f"the body nests too deeply (the limit is {MAX_DEPTH} levels "
                                f"in a value, {_BODY_DEPTH} in the whole body); send {what}"
                           ) from None
    if deeper_than(data, _BODY_DEPTH):
        raise RequestError(400, f"the body nests deeper than {_BODY_DEPTH} levels at "
                                f"{python_path('body', deep_path(data, _BODY_DEPTH))} (the limit "
                                f"is {MAX_DEPTH} levels in a value, {_BODY_DEPTH} in the whole "
                                f"body); send {what}")
    if _may_hold_surrogates(body):  # the check encodes the whole body: only when it may fail
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            where = python_path("body", _surrogate_path(data))
            raise RequestError(400, f"the body has a string with a lone surrogate (\\ud800-"
                                    f"\\udfff) at {where}, which is not text; send UTF-8 text"
                               ) from None
    return data


_BODY_DEPTH = MAX_DEPTH + ENVELOPE_DEPTH


def _may_hold_surrogates(body: bytes | str) -> bool:
    """Whether `json.loads(body)` may hold a lone surrogate: only a \\uD800-\\uDFFF escape,
    non-ASCII text (json.loads lets encoded surrogates through) or another encoding than UTF-8
    (NUL bytes) can put one in."""
    if not body.isascii() or (isinstance(body, bytes) and b"\x00" in body):
        return True
    text = body if isinstance(body, str) else body.decode("ascii")
    return _SURROGATE_ESCAPE.search(text) is not None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _surrogate_path(value: Any) -> list[str | int]:
    """The path to a string (or the key) holding a lone surrogate in `value`, for an error."""
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str) and lone_surrogate(item) is not None:
            return path
        if isinstance(item, dict):
            for key, child in item.items():
                if lone_surrogate(key) is not None:
                    return path
                stack.append((child, [*path, key]))
        elif isinstance(item, list):
            stack.extend((child, [*path, index]) for index, child in enumerate(item))
    return []
