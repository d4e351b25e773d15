"""What `freeze` says about a value that is not JSON: a lone surrogate, nesting past
`MAX_DEPTH`, a type JSON does not have (each message names the path and what to use instead)."""

from __future__ import annotations

import datetime
import decimal
import enum
from collections.abc import Sequence

from pyox_agents._errors import ToolError
from pyox_agents.state._pointers import DECODE_HINT, lone_surrogate, python_path


class NotJSON(ToolError, TypeError):
    """A value that is not JSON where JSON goes (the shared state, a tool's result, the text
    of a tool's live event): the message names its path and what to use instead, written for
    the model and the person to read (a `ToolError`). A `TypeError`."""


MAX_DEPTH = 64
"""How deeply JSON may nest, everywhere: a request's body, a run's state, a tool's write, a
model's tool arguments (a scalar at the top is 1 level, `{"a": 1}` is 2). Deeper values would
break a parser's or serializer's recursion somewhere between here and a browser."""


def check_text(text: str, path: str, at: Sequence[str | int], key: bool = False) -> None:
    index = lone_surrogate(text)
    if index is not None:
        what = f"has the key {text!r}, which" if key else "is a str that"
        raise NotJSON(
            f"{python_path(path, at)} {what} holds a lone surrogate ({text[index]!r} at index "
            f"{index}); JSON text must be valid Unicode: {DECODE_HINT}")


def too_deep(path: str, at: Sequence[str | int]) -> str:
    return (
        f"{python_path(path, at)} is nested {len(at) + 1} levels deep; JSON here may nest at most "
        f"{MAX_DEPTH} levels (a scalar at the top is 1): flatten it, e.g. a list of items that "
        f"name their parent")


def not_json(value: object, where: str) -> str:
    """The message for a value that is not JSON: what it is and what to use instead (`where`
    names the value: "state[...]", or "the result[...]" for a tool's result)."""
    what = "a tool's result" if where.startswith("the result") else "shared state"
    if isinstance(value, float):
        return (
            f"{where} is {value!r}; {what} must be JSON, which has no NaN or infinity: "
            f"use None or a string")
    if isinstance(value, enum.Enum):
        return (
            f"{where} is an enum member ({value!r}); {what} must be JSON: use its value "
            f"(value.value)")
    if isinstance(value, set | frozenset):
        return f"{where} is a set; {what} must be JSON: use a list"
    if isinstance(value, tuple):
        return f"{where} is a tuple; {what} must be JSON: use a list"
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        kind = type(value).__name__
        return (
            f"{where} is a {kind}; {what} must be JSON: use an ISO 8601 string "
            f"(value.isoformat())")
    if isinstance(value, bytes | bytearray | memoryview):
        return f"{where} is bytes; {what} must be JSON: use a str (decode it, or base64)"
    if isinstance(value, decimal.Decimal):
        return f"{where} is a Decimal; {what} must be JSON: use a float or a str"
    return (
        f"{where} is a {type(value).__qualname__} object; {what} must be JSON: use a dict, "
        f"list, str, int, float, bool or None (for a pydantic model, model.model_dump(mode='json'))"
    )
