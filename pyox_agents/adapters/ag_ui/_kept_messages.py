"""The client's messages as an open stream keeps them for its final `MESSAGES_SNAPSHOT`: the JSON
the snapshot writes of each (`KeptMessage`), not the ag_ui model it was read into.

A CopilotKit client sends the whole conversation with every request, and the snapshot that ends
the run gives it all back. Kept as pydantic models, a message costs ~700 bytes beside its text
for as long as the run streams (a `__dict__` of every field, the set of those given); kept as the
JSON the snapshot writes, ~200, its strings the model's own (no text is copied). A server's
snapshot then writes them with orjson, in C, rather than with a Python call per field.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from enum import Enum
from typing import Any

from ag_ui._generated.models import GeneratedBaseModel
from ag_ui.core import Message
from pydantic import TypeAdapter

__all__ = ["KeptMessage", "as_models", "fields_of", "kept_messages", "message_id"]


class KeptMessage(dict[str, Any]):
    """One client message as the JSON its snapshot writes: the model's keys (camelCase) in the
    model's order, the optional fields without a value left out; only strings, integers,
    booleans, null, lists and such objects in it."""

    __slots__ = ()


def kept_messages(messages: Sequence[Message]) -> list[Message | KeptMessage]:
    """`messages`, each as a `KeptMessage` where its JSON is plain (the model itself where not:
    an extra field, a float, a free-form object such as `metadata`)."""
    out: list[Message | KeptMessage] = []
    for message in messages:
        kept = KeptMessage()
        out.append(kept if _write_plain(message, kept) else message)
    return out


def as_models(messages: Sequence[Message | KeptMessage]) -> list[Message]:
    """`messages` with the kept ones read back into ag_ui models (for pydantic to write them
    beside a value only it can write)."""
    return [_MESSAGE.validate_python(m) if isinstance(m, KeptMessage) else m for m in messages]


def message_id(message: Message | KeptMessage) -> str:
    """The id of a kept message, whichever way it is kept."""
    if isinstance(message, KeptMessage):
        return str(message["id"])
    return message.id


@functools.cache
def fields_of(kind: type[GeneratedBaseModel]) -> tuple[tuple[str, str, bool], ...]:
    """(attribute, JSON key, left out when None) of each field of an ag_ui model, in pydantic's
    order; ag_ui leaves out the optional fields whose default is None."""
    return tuple((name, info.alias or name, not info.is_required() and info.default is None)
                 for name, info in kind.model_fields.items())


def _write_plain(model: GeneratedBaseModel, out: dict[str, Any]) -> bool:
    """Put in `out` the JSON the encoder writes of `model`; False if it holds anything but
    plain values (the caller keeps the model)."""
    if model.__pydantic_extra__:
        return False
    values = model.__dict__  # the fields' values: no attribute lookup per field
    for name, key, omittable in fields_of(type(model)):
        value = values.get(name, _NOT_PLAIN)  # (a model built without validation may lack one)
        if value is _NOT_PLAIN:
            return False
        if value is None:
            if not omittable:
                out[key] = None
            continue
        kind = type(value)
        if kind is str or kind is int or kind is bool:  # most fields: inline, no call
            out[key] = value
            continue
        plain = _plain_value(value)
        if plain is _NOT_PLAIN:
            return False
        out[key] = plain
    return True


def _plain_value(value: object) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if isinstance(value, GeneratedBaseModel):
        nested: dict[str, Any] = {}
        return nested if _write_plain(value, nested) else _NOT_PLAIN
    if isinstance(value, Enum) and type(value._value_) is str:
        return value._value_
    if kind is list or kind is tuple:
        items = [_plain_value(item) for item in value]  # type: ignore[attr-defined]
        return _NOT_PLAIN if any(item is _NOT_PLAIN for item in items) else items
    return _NOT_PLAIN  # a float (its exponent form), a dict of any JSON: the model writes it


_NOT_PLAIN: Any = object()
_MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)
