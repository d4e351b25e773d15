"""How `DemoModel` picks a tool by its name and description, and fills its arguments from an
item's text."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pyox_agents.models.base import ToolSpec

_KIND_WORDS: dict[str, tuple[str, ...]] = {
    "add": ("add", "create", "new", "append", "insert", "put", "push", "buy"),
    "complete": ("complete", "done", "finish", "check", "mark", "toggle", "tick"),
    "remove": ("remove", "delete", "drop", "discard"),
    "clear": ("clear", "empty", "reset"),
    "read": ("list", "show", "get", "read", "view", "summary", "summarize", "items", "all"),
}


_NUMBER = re.compile(r"^(?:#|no\.?\s*|number\s+|item\s+)?(\d+)$")


_LEADING_COUNT = re.compile(r"^(\d+)\s+(?:x\s+)?(.+)$")


QUANTITY_NAMES = ("quantity", "qty", "count", "amount", "how_many")


_INDEX_NAMES = ("index", "id", "number", "position", "item_id", "todo_id", "n", "idx")


def _words(spec: ToolSpec) -> tuple[list[str], list[str]]:
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", spec.name).lower()
    return re.split(r"[^a-z0-9]+", name), re.findall(r"[a-z]+", spec.description.lower())


def _score(kind: str, spec: ToolSpec) -> int:
    name_words, description_words = _words(spec)
    score = 0
    for word in _KIND_WORDS[kind]:
        forms = (word, word + "s", word + "d", word + "ed", word + "es")
        score += 4 * sum(1 for w in name_words if w in forms)
        score += sum(1 for w in description_words if w in forms)
    return score


def kind_of(spec: ToolSpec) -> str | None:
    scores = {kind: _score(kind, spec) for kind in _KIND_WORDS}
    best = max(scores, key=lambda kind: scores[kind])
    return best if scores[best] > 0 else None


def tool_for(kind: str, tools: Sequence[ToolSpec], lists: Sequence[str] = ()
              ) -> ToolSpec | None:
    """The best tool for `kind`; of those, one whose name names one of `lists` if any does."""
    candidates = [spec for spec in tools if kind_of(spec) == kind]
    preferred = [spec for spec in candidates if set(_words(spec)[0]) & set(lists)]
    if not candidates:
        return None
    return max(preferred or candidates, key=lambda spec: _score(kind, spec))


def properties_of(spec: ToolSpec) -> Mapping[str, Any]:
    properties = spec.parameters.get("properties", {})
    return properties if isinstance(properties, Mapping) else {}


def types_of(schema: Any) -> set[str]:
    if not isinstance(schema, Mapping):
        return set()
    found: set[str] = set()
    kind = schema.get("type")
    if isinstance(kind, str):
        found.add(kind)
    elif isinstance(kind, Sequence):
        found.update(k for k in kind if isinstance(k, str))
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key, ()) or ():
            found |= types_of(option)
    return found


def main_argument(spec: ToolSpec) -> str | None:
    """The argument an item's text goes to: the first required string, else the first string."""
    properties = properties_of(spec)
    required = [str(r) for r in spec.parameters.get("required", ()) or ()]
    strings = [n for n in properties if types_of(properties[n]) & {"string", "array"}]
    for name in required:
        if name in strings:
            return name
    if strings:
        return strings[0]
    return next(iter(properties), None)


def _integer_argument(spec: ToolSpec, names: tuple[str, ...]) -> str | None:
    properties = properties_of(spec)
    integers = [n for n in properties if types_of(properties[n]) & {"integer", "number"}]
    for name in integers:
        if name.lower() in names or any(name.lower().endswith("_" + n) for n in names):
            return name
    return None


def fill(spec: ToolSpec, item: str) -> dict[str, Any] | None:
    """The arguments for one item, or None when the tool takes only a number and got text."""
    main = main_argument(spec)
    main_types = types_of(properties_of(spec).get(main, {})) if main is not None else set()
    number = _NUMBER.match(item)
    if number is not None:
        index = _integer_argument(spec, _INDEX_NAMES)
        if index is not None:
            return {index: int(number.group(1))}
        if main is not None and main_types & {"integer", "number"}:
            return {main: int(number.group(1))}
    arguments: dict[str, Any] = {}
    counted = _LEADING_COUNT.match(item)
    quantity = _integer_argument(spec, QUANTITY_NAMES)
    if counted is not None and quantity is not None:
        arguments[quantity] = int(counted.group(1))
        item = counted.group(2)
    if main is not None:
        if not main_types & {"string", "array"} and main_types & {"integer", "number"}:
            return None
        arguments[main] = item
    return arguments
