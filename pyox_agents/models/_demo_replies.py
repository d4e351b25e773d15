"""What `DemoModel` says after the tools answered, what it sees of a JSON state in the
instructions, and its help text."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pyox_agents.models._demo_tools import QUANTITY_NAMES, kind_of, main_argument
from pyox_agents.models.base import ToolSpec
from pyox_agents.state.messages import Message, ToolCall

VERBS = {"add": "add", "complete": "mark as done", "remove": "remove", "clear": "clear",
         "read": "show"}


_LABEL_KEYS = ("text", "title", "name", "item", "label", "description", "task")


_LIST_ALIASES = {"list": ("todo", "task", "item"), "todo": ("task",), "task": ("todo",),
                 "basket": ("cart",), "shopping": ("cart",)}


_DONE_KEYS = ("done", "completed", "complete", "checked", "finished")


def summary(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> str:
    start = len(messages)
    while start > 0 and messages[start - 1].role == "tool":
        start -= 1
    calls: dict[str, ToolCall] = {}
    if start > 0 and messages[start - 1].role == "assistant":
        calls = {call.id: call for call in messages[start - 1].tool_calls}
    specs = {spec.name: spec for spec in tools}
    done: dict[str, list[str]] = {}
    failed: list[str] = []
    shown: list[str] = []
    order = {call_id: n for n, call_id in enumerate(calls)}
    results = sorted(messages[start:], key=lambda m: order.get(m.call_id or "", len(order)))
    for result in results:  # in the order the calls were made, whichever finished first
        call = calls.get(result.call_id or "")
        spec = specs.get(result.name or "")
        kind = kind_of(spec) if spec is not None else None
        thing = _thing(call, spec)
        if result.is_error:
            verb = VERBS.get(kind or "", f"run {result.name}")
            failed.append(f"I couldn't {verb}{' ' + thing if thing else ''}: {result.content}")
        elif kind == "read" or (kind is None and result.content):
            shown.append(_render(result.content))
        elif kind == "clear" and result.content:  # what it cleared, or that nothing was
            shown.append(result.content[:1].upper() + _short(result.content[1:]))
        else:
            done.setdefault(kind or "", []).append(thing)
    sentences = [_did(kind, things) for kind, things in done.items()]
    sentences += shown + failed
    text = " ".join(s if s.endswith((".", "!", "?")) else s + "." for s in sentences)
    return text or "Done."


def _thing(call: ToolCall | None, spec: ToolSpec | None) -> str:
    if call is None or not call.arguments:
        return ""
    main = main_argument(spec) if spec is not None else None
    value = call.arguments.get(main) if main is not None else None
    if value is None:
        value = next(iter(call.arguments.values()))
    if isinstance(value, list):
        return _join([str(v) for v in value])
    if isinstance(value, int) and not isinstance(value, bool):
        return f"#{value}"
    return str(value)


def _did(kind: str, things: list[str]) -> str:
    named = _join([t for t in things if t])
    if kind == "add":
        return f"Added {named}" if named else "Added it"
    if kind == "complete":
        return f"Marked {named} as done" if named else "Marked it as done"
    if kind == "remove":
        return f"Removed {named}" if named else "Removed it"
    if kind == "clear":
        return "Cleared the list"
    return f"Done: {named}" if named else "Done"


def _join(things: list[str]) -> str:
    if len(things) <= 1:
        return "".join(things)
    return ", ".join(things[:-1]) + " and " + things[-1]


def _render(content: str) -> str:
    try:
        value = json.loads(content)
    except ValueError:
        return f"Here's what I found: {_short(content)}"
    items = value
    if isinstance(value, Mapping):
        lists = {str(k): v for k, v in value.items() if isinstance(v, list)}
        if not lists:
            return f"Here's what I found: {_short(content)}"
        if len(lists) > 1:
            return "Here's what I see. " + ". ".join(f"{key}: {_numbered(items) or 'empty'}"
                                                     for key, items in lists.items())
        items = next(iter(lists.values()))
    if not isinstance(items, list):
        return f"Here's what I found: {_short(content)}"
    if not items:
        return "Your list is empty"
    return "Here's what's on your list: " + _numbered(items)


def _numbered(items: list[Any]) -> str:
    return "; ".join(f"{n}. {_label(item)}" for n, item in enumerate(items, 1))


def _label(item: Any) -> str:
    if not isinstance(item, Mapping):
        return str(item)
    label = next((str(item[k]) for k in _LABEL_KEYS if k in item), None)
    if label is None:
        label = json.dumps(item, ensure_ascii=False)
    quantity = next((item[k] for k in QUANTITY_NAMES if isinstance(item.get(k), int)), None)
    if quantity is not None and quantity != 1:
        label = f"{quantity} × {label}"
    if any(item.get(k) is True for k in _DONE_KEYS):
        label += " (done)"
    return label


def state_summary(messages: Sequence[Message], asked: str) -> str | None:
    """The lists of a JSON document in the system messages (instructions that show the state)."""
    decoder = json.JSONDecoder()
    document: Any = None
    for message in messages:
        if message.role != "system":
            continue
        for start in (m.start() for m in re.finditer(r"\{", message.content)):
            try:
                document, _ = decoder.raw_decode(message.content, start)
            except ValueError:
                continue
            break
    if not isinstance(document, Mapping):
        return None
    lists = {str(k): v for k, v in document.items() if isinstance(v, list)}
    if not lists:
        return None
    words = set(re.findall(r"[a-z]+", asked.lower()))
    for word, keys in _LIST_ALIASES.items():
        if word in words:
            words.update(keys)
    wanted = {k: v for k, v in lists.items() if {k.lower(), k.lower().rstrip("s")} & words}
    parts = [f"{key}: {_numbered(items) or 'empty'}" for key, items in (wanted or lists).items()]
    return "Here's what I see. " + ". ".join(parts) + "."


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def help_reply(tools: Sequence[ToolSpec], *, greeting: bool) -> str:
    examples = {"add": '"add milk and eggs"', "complete": '"done with milk"',
                "remove": '"remove eggs"', "clear": '"clear the list"',
                "read": '"what\'s on my list?"'}
    kinds = {kind_of(spec) for spec in tools}
    can = [examples[kind] for kind in examples if kind in kinds]
    opener = "Hi! " if greeting else ""
    if not can:
        return (f"{opener}I'm the offline demo model: I follow simple list commands, but this "
                "agent gives me no tools to use.")
    return f"{opener}I'm the offline demo model. Try {_join(can)}."
