"""JSON forms of the values a conversation records.

History holds its values read-only and in JSON form from the moment they are recorded: a tuple
becomes a list, a dataclass or pydantic model becomes a dict, and anything else that is not JSON
raises `TypeError` naming where it was. This module turns values into that form (`to_json_value`),
turns the message types into JSON rows and back, and applies RFC 6902 patches to plain values.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import math
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from pyox_agents.state.frozen import JSON, MAX_DEPTH, FrozenDict, FrozenList, freeze
from pyox_agents.state.messages import File, Image, Message, Reply, ToolCall, Usage

__all__ = [
    "call_from_json",
    "call_to_json",
    "file_from_json",
    "file_to_json",
    "frozen_call",
    "frozen_delta",
    "frozen_message",
    "frozen_reply",
    "json_equal",
    "message_from_json",
    "message_to_json",
    "reply_from_json",
    "reply_to_json",
    "to_json_value",
    "usage_from_json",
    "usage_to_json",
]

_T = TypeVar("_T")

_PLAIN = frozenset({str, int, bool, type(None)})


def to_json_value(value: object, where: str) -> JSON:
    """`value` in JSON form, read-only: tuples become lists, dataclasses and pydantic models dicts.

    `where` names the value in error messages (`extra_data`, `finish(answer)`).

    Raises:
        TypeError: a value or key that is not JSON (a str with a lone surrogate, nesting past
            `MAX_DEPTH`), naming its path and what to use instead.
    """
    return freeze(_plain(value, where), path=where)


def frozen_delta(delta: object, where: str = "delta") -> FrozenList:
    """RFC 6902 ops in JSON form, read-only; each op's `value` is held to `MAX_DEPTH` on its own.

    A delta wraps each value in a list and an op, so the depth counts from the value, as it does
    in the shared state the op writes it into.

    Raises:
        TypeError: `delta` is not a list of ops (dicts with a str `op` and `path`), or a value
            in it is not JSON (naming its path).
    """
    shape = f"{where} must be a list of RFC 6902 operations ({{'op': ..., 'path': ...}})"
    if isinstance(delta, Mapping) or not isinstance(delta, Sequence) or isinstance(delta, str):
        raise TypeError(f"{shape}, got {type(delta).__name__}")
    ops = FrozenList()
    for index, op in enumerate(delta):
        if not (isinstance(op, Mapping) and isinstance(op.get("op"), str)
                and isinstance(op.get("path"), str)):
            raise TypeError(f"{shape}; {where}[{index}] is {op!r}")
        frozen = FrozenDict()
        for key, item in op.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}[{index}] has the key {key!r}; use str keys")
            dict.__setitem__(frozen, key, to_json_value(item, f"{where}[{index}][{key!r}]"))
        list.append(ops, frozen)
    return ops


def _plain(value: object, where: str, at: tuple[str | int, ...] = ()) -> object:
    """`value` as plain JSON; `where` + `at` is its path, spelt out only in an error."""
    if len(at) >= MAX_DEPTH:  # freeze() says it in full; stop before Python's recursion limit
        return freeze(value, where, at=at)
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is float:
        if not math.isfinite(cast(float, value)):
            raise TypeError(f"{_path(where, at)} is {value!r}, which is not JSON (JSON has no NaN "
                            f"or infinity): use None or a string")
        return value
    if isinstance(value, FrozenDict | FrozenList):
        return value
    if isinstance(value, enum.Enum):
        raise TypeError(f"{_path(where, at)} is the enum member {value!r}, which is not JSON: use "
                        f"its value (value.value)")
    if isinstance(value, Mapping):
        out: dict[str, object] = {}
        for key, item in value.items():
            if not isinstance(key, str) or isinstance(key, enum.Enum):
                raise TypeError(f"{_path(where, at)} has the key {key!r} ({type(key).__name__}); "
                                f"JSON keys must be str: use str(key)")
            out[str.__str__(key)] = _plain(item, where, (*at, key))
        return out
    if isinstance(value, list | tuple):
        return [_plain(item, where, (*at, index)) for index, item in enumerate(value)]
    if isinstance(value, int):  # subclasses of the JSON scalars (bool has none)
        return int(value)
    if isinstance(value, float):
        return _plain(float(value), where, at)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, BaseModel):
        return _plain(value.model_dump(mode="json"), where, at)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return _plain(fields, where, at)
    raise TypeError(_not_json(value, _path(where, at)))


def _path(where: str, at: tuple[str | int, ...]) -> str:
    """`where["key"][0]...`: the path of a value, for an error message."""
    return where + "".join(f"[{json.dumps(part)}]" if isinstance(part, str) else f"[{part}]"
                           for part in at)


def _not_json(value: object, where: str) -> str:
    if isinstance(value, set | frozenset):
        return f"{where} is a set, which is not JSON: use a list"
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return (f"{where} is a {type(value).__name__}, which is not JSON: use an ISO 8601 string "
                f"(value.isoformat())")
    if isinstance(value, pathlib.PurePath):
        return f"{where} is a path ({value!r}), which is not JSON: use str(path)"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"{where} is bytes, which is not JSON: use a str (decode it, or base64)"
    if isinstance(value, decimal.Decimal):
        return f"{where} is a Decimal, which is not JSON: use a float or a str"
    return (f"{where} is a {type(value).__qualname__} object, which is not JSON: use a dict, "
            f"list, str, int, float, bool or None, a dataclass or a pydantic model")


def json_equal(a: object, b: object) -> bool:
    """Whether two JSON values are the same JSON (`1`, `1.0` and `True` differ; key order not)."""
    if isinstance(a, dict):
        return (isinstance(b, dict) and a.keys() == b.keys()
                and all(json_equal(item, b[key]) for key, item in a.items()))
    if isinstance(a, list):
        return (isinstance(b, list) and len(a) == len(b)
                and all(json_equal(x, y) for x, y in zip(a, b, strict=True)))
    return type(a) is type(b) and a == b


# --- the message types, frozen and as JSON ----------------------------------------------------


def frozen_call(call: ToolCall, where: str = "call") -> ToolCall:
    """`call` with its arguments frozen (the same object when they already are)."""
    if not isinstance(call, ToolCall):
        raise TypeError(f"{where} must be a ToolCall, got {type(call).__name__}")
    arguments = to_json_value(call.arguments, f"{where}.arguments")
    if not isinstance(arguments, FrozenDict):
        raise TypeError(f"{where}.arguments must be a dict, got {type(call.arguments).__name__}")
    if arguments is call.arguments:
        return call
    return dataclasses.replace(call, arguments=arguments)


def frozen_message(message: Message, where: str = "message") -> Message:
    """`message` with its tool calls' arguments frozen and its sequences as tuples."""
    if not isinstance(message, Message):
        raise TypeError(f"{where} must be a Message, got {type(message).__name__}")
    if not isinstance(message.content, str):
        raise TypeError(f"{where}.content must be a str, got {type(message.content).__name__}: "
                        f"use '' for a message with no text")
    calls = tuple(frozen_call(c, f"{where}.tool_calls[{i}]")
                  for i, c in enumerate(message.tool_calls))
    images = tuple(message.images)
    for index, image in enumerate(images):
        if not isinstance(image, Image):
            raise TypeError(f"{where}.images[{index}] must be an Image, got "
                            f"{type(image).__name__}: write Image(url=...)")
    files = tuple(message.files)
    for index, file in enumerate(files):
        if not isinstance(file, File):
            raise TypeError(f"{where}.files[{index}] must be a File, got "
                            f"{type(file).__name__}: write File(url=..., media_type=...)")
    if message.id is not None and not isinstance(message.id, str):
        raise TypeError(f"{where}.id must be a str or None, got {type(message.id).__name__}")
    if (all(a is b for a, b in zip(calls, message.tool_calls, strict=True))
            and type(message.tool_calls) is tuple and type(message.images) is tuple
            and type(message.files) is tuple):
        return message
    return dataclasses.replace(message, tool_calls=calls, images=images, files=files)


def frozen_reply(reply: Reply, where: str = "reply") -> Reply:
    """`reply` with its tool calls' arguments frozen."""
    if not isinstance(reply, Reply):
        raise TypeError(f"{where} must be a Reply, got {type(reply).__name__}")
    if not isinstance(reply.usage, Usage):
        raise TypeError(f"{where}.usage must be a Usage, got {type(reply.usage).__name__}")
    calls = tuple(frozen_call(c, f"{where}.tool_calls[{i}]")
                  for i, c in enumerate(reply.tool_calls))
    return dataclasses.replace(reply, tool_calls=calls)


def usage_to_json(usage: Usage) -> dict[str, JSON]:
    """The JSON row of a `Usage`."""
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "requests": usage.requests, "cost": usage.cost}


def usage_from_json(row: object) -> Usage:
    """The `Usage` of a JSON row (ValueError when it is not one)."""
    data = _object(row, "usage")
    return Usage(input_tokens=_typed(data, "input_tokens", int),
                 output_tokens=_typed(data, "output_tokens", int),
                 requests=_typed(data, "requests", int),
                 cost=_number(data, "cost"))


def call_to_json(call: ToolCall) -> dict[str, JSON]:
    """The JSON row of a `ToolCall`."""
    return {"name": call.name, "arguments": cast(JSON, call.arguments), "id": call.id,
            "raw_arguments": call.raw_arguments}


def call_from_json(row: object) -> ToolCall:
    """The `ToolCall` of a JSON row, arguments frozen (ValueError when it is not one)."""
    data = _object(row, "tool call")
    arguments = data.get("arguments")
    if not isinstance(arguments, dict):
        raise ValueError(f"a tool call's arguments must be an object, got {arguments!r}")
    raw = data.get("raw_arguments")
    if raw is not None and not isinstance(raw, str):
        raise ValueError(f"a tool call's raw_arguments must be a string or null, got {raw!r}")
    return ToolCall(name=_typed(data, "name", str), arguments=cast(FrozenDict, freeze(arguments)),
                    id=_typed(data, "id", str), raw_arguments=raw)


def message_to_json(message: Message) -> dict[str, JSON]:
    """The JSON row of a `Message`."""
    return {
        "role": message.role,
        "content": message.content,
        "images": [{"url": i.url, "media_type": i.media_type} for i in message.images],
        "tool_calls": [call_to_json(c) for c in message.tool_calls],
        "call_id": message.call_id,
        "name": message.name,
        "is_error": message.is_error,
        **({"files": [file_to_json(f) for f in message.files]} if message.files else {}),
        **({"id": message.id} if message.id is not None else {}),
    }


def file_to_json(file: File) -> dict[str, JSON]:
    """The JSON row of a `File` (the filename only when there is one)."""
    row: dict[str, JSON] = {"url": file.url, "media_type": file.media_type}
    if file.filename is not None:
        row["filename"] = file.filename
    return row


def file_from_json(row: object) -> File:
    """The `File` of a JSON row (ValueError when it is not one)."""
    data = _object(row, "file")
    filename = data.get("filename")
    if filename is not None and not isinstance(filename, str):
        raise ValueError(f"a file's filename must be a string or null, got {filename!r}")
    try:
        return File(url=_typed(data, "url", str), media_type=_typed(data, "media_type", str),
                    filename=filename)
    except TypeError as exc:
        raise ValueError(str(exc)) from None


def message_from_json(row: object) -> Message:
    """The `Message` of a JSON row (ValueError when it is not one)."""
    data = _object(row, "message")
    role = _typed(data, "role", str)
    if role not in ("system", "user", "assistant", "tool"):
        raise ValueError(f"a message's role must be system, user, assistant or tool, got {role!r}")
    images = tuple(Image(url=_typed(i, "url", str), media_type=_typed(i, "media_type", str))
                   for i in (_object(x, "image") for x in _typed(data, "images", list)))
    calls = tuple(call_from_json(c) for c in _typed(data, "tool_calls", list))
    files = tuple(file_from_json(f) for f in _typed(data, "files", list)) if "files" in data else ()
    call_id, name, message_id = data.get("call_id"), data.get("name"), data.get("id")
    if not all(value is None or isinstance(value, str) for value in (call_id, name, message_id)):
        raise ValueError("a message's call_id, name and id must be strings or null")
    return Message(role=role, content=_typed(data, "content", str),  # type: ignore[arg-type]
                   images=images, tool_calls=calls, call_id=call_id, name=name,
                   is_error=_typed(data, "is_error", bool), files=files, id=message_id)


def reply_to_json(reply: Reply) -> dict[str, JSON]:
    """The JSON row of a `Reply`."""
    return {"text": reply.text, "tool_calls": [call_to_json(c) for c in reply.tool_calls],
            "reasoning": reply.reasoning, "usage": usage_to_json(reply.usage)}


def reply_from_json(row: object) -> Reply:
    """The `Reply` of a JSON row (ValueError when it is not one)."""
    data = _object(row, "reply")
    return Reply(text=_typed(data, "text", str),
                 tool_calls=tuple(call_from_json(c) for c in _typed(data, "tool_calls", list)),
                 reasoning=_typed(data, "reasoning", str),
                 usage=usage_from_json(data.get("usage")))


def _object(row: object, what: str) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise ValueError(f"a {what} must be a JSON object, got {row!r}")
    return row


def _typed(data: Mapping[str, Any], key: str, kind: type[_T]) -> _T:
    value = data.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{key!r} must be a {kind.__name__}, got {value!r}")
    return value


def _number(data: Mapping[str, Any], key: str) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key!r} must be a number, got {value!r}")
    return value
