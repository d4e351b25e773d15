"""`DemoModel`: a deterministic offline model that drives list demos (todos, carts) with tools.

It reads the last user message, picks one of the tools it is given by matching their names and
descriptions, and fills the tool's main argument from the text. After the tools answer, it says
in a sentence what happened. No network, no randomness: the same conversation gives the same
reply, which makes it good for demos, tutorials and tests of a frontend.

Phrases it understands (case-insensitive; "please", "can you" and a trailing "to my list" are
ignored; several items are split on commas and "and", one tool call each, in parallel):

- add: "add milk and eggs", "put bread on the list", "buy apples", "I need to call mom",
  "remember to water the plants"; "add 2 apples" fills a `quantity`/`qty`/`count` argument.
- complete: "done with milk", "I finished the report", "complete 2", "mark eggs as done",
  "check off milk", "milk is done".
- remove: "remove eggs", "delete 3", "take milk off my list", "get rid of bread".
- clear: "clear the list", "empty my cart" (a tool named like clear/empty/reset).
- show: "show my list", "what's on my list?", "list", "what do I have?" (a read tool, such as
  `list_todos`/`get_cart`; with none, the lists of a JSON state shown in the instructions, the
  ones the user names first; with neither, it says it cannot see the list).
- plan: "plan a trip to Rome", "plan my week", "pack for a beach holiday", "plan a party"
  add the several items of a built-in plan in one reply (one add call each, in parallel).
- anything else: a short reply saying what it can do with the tools it has.

A number ("complete 2", "remove #3") goes to an integer argument (`index`, `id`, `number`...)
when the tool has one. Tools are matched generically: a tool whose name or description says
"add"/"create"/"new" adds, "complete"/"done"/"finish"/"check"/"toggle" completes,
"remove"/"delete" removes, "list"/"show"/"get"/"read"/"view" reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyox_agents.models._streaming import stream_reply
from pyox_agents.models.base import ModelChunk, ModelRequest, ToolSpec
from pyox_agents.state.messages import NOTICE_PREFIX, Message, Reply, ToolCall

__all__ = ["DemoModel", "decide"]

_KIND_WORDS: dict[str, tuple[str, ...]] = {
    "add": ("add", "create", "new", "append", "insert", "put", "push", "buy"),
    "complete": ("complete", "done", "finish", "check", "mark", "toggle", "tick"),
    "remove": ("remove", "delete", "drop", "discard"),
    "clear": ("clear", "empty", "reset"),
    "read": ("list", "show", "get", "read", "view", "summary", "summarize", "items", "all"),
}
_VERBS = {
    "add": "add",
    "complete": "mark as done",
    "remove": "remove",
    "clear": "clear",
    "read": "show",
}

_POLITE = re.compile(
    r"^(?:(?:hey|hi|hello|ok|okay|so|and|also|now)[,!]?\s+)*"
    r"(?:please\s+|can you\s+|could you\s+|would you\s+|will you\s+|pls\s+)?"
)
_TRAILING = re.compile(r"(?:[\s,]*(?:please|thanks|thank you))?[\s.!?]*$")
_PLACE = re.compile(r"\s+(?:to|on|onto|in|into|from|off|off of)\s+(?:my|the|our|your)\s+[\w\s-]*$")
_INTENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("complete", re.compile(r"^(?P<items>.+?)\s+(?:is|are)\s+(?:done|finished|completed?)$")),
    (
        "complete",
        re.compile(
            r"^(?:i'?m\s+|i\s+am\s+|i'?ve\s+|i\s+have\s+|i\s+)?"
            r"(?:done with|finished with|finished|finish|completed?|check(?:ed)? off|"
            r"tick(?:ed)? off|mark(?:ed)?|got|bought)\s+(?P<items>.+?)"
            r"(?:\s+(?:as\s+)?(?:done|complete|completed|finished))?$"
        ),
    ),
    (
        "remove",
        re.compile(
            r"^(?:remove|delete|drop|take|get rid of|cancel|forget|scratch)\s+(?P<items>.+?)"
            r"(?:\s+(?:off|out))?$"
        ),
    ),
    ("clear", re.compile(r"^(?:clear|empty|reset)\b(?P<items>)")),
    (
        "read",
        re.compile(
            r"^(?:show|list|view|display|see|read)\b(?P<items>)|^what\b(?P<what>)|"
            r"^how (?:many|much)\b(?P<many>)|^(?:my )?(?:list|todos|cart)$(?P<bare>)"
        ),
    ),
    (
        "add",
        re.compile(
            r"^(?:add|put|buy|get|remember(?: to)?|i need(?: to)?|we need(?: to)?|need|"
            r"create|new|plus|append|todo:?)\s+(?P<items>.+)$"
        ),
    ),
)
_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*|\s*\+\s*")
_NUMBER = re.compile(r"^(?:#|no\.?\s*|number\s+|item\s+)?(\d+)$")
_LEADING_COUNT = re.compile(r"^(\d+)\s+(?:x\s+)?(.+)$")
_QUANTITY_NAMES = ("quantity", "qty", "count", "amount", "how_many")
_INDEX_NAMES = ("index", "id", "number", "position", "item_id", "todo_id", "n", "idx")
_LABEL_KEYS = ("text", "title", "name", "item", "label", "description", "task")
_LIST_ALIASES = {
    "list": ("todo", "task", "item"),
    "todo": ("task",),
    "task": ("todo",),
    "basket": ("cart",),
    "shopping": ("cart",),
}
_DONE_KEYS = ("done", "completed", "complete", "checked", "finished")


_PACKING: dict[str, tuple[str, ...]] = {
    "beach": ("swimsuit", "sunscreen", "sunglasses", "beach towel", "sun hat"),
    "ski": ("ski jacket", "gloves", "goggles", "thermal layers", "lip balm"),
    "camping": ("tent", "sleeping bag", "flashlight", "water bottle", "first aid kit"),
}
_PACKING_DEFAULT = ("clothes", "toiletries", "phone charger", "travel documents", "medicine")


def _trip(destination: str) -> tuple[str, ...]:
    place = destination.title() if destination else ""
    to, in_ = (f" to {place}", f" in {place}") if place else ("", "")
    return (f"book flights{to}", f"book a hotel{in_}", f"plan what to see{in_}",
            "check passport and documents", "pack a bag")


def _packing(kind: str) -> tuple[str, ...]:
    return _PACKING.get(kind, _PACKING_DEFAULT)


_PLANS: tuple[tuple[re.Pattern[str], Any], ...] = (
    (re.compile(r"^plan (?:a |my |our |the )?(?:trip|vacation|holiday|journey)"
                r"(?:\s+(?:to|in)\s+(?P<place>[\w\s'-]+?))?$"), lambda m: _trip(m["place"] or "")),
    (re.compile(r"^plan (?:my|our|the|this|next) week$"),
     lambda m: ("plan the week's priorities", "grocery shopping", "exercise three times",
                "call a friend", "review how the week went")),
    (re.compile(r"^(?:pack|packing list)(?: for)? (?:a |my |our |the )?(?P<kind>\w+)?\s*"
                r"(?:holiday|vacation|trip|weekend)$"), lambda m: _packing(m["kind"] or "")),
    (re.compile(r"^plan (?:a |my |our |the )?(?:birthday |dinner )?party$"),
     lambda m: ("send the invitations", "order a cake", "buy drinks and snacks",
                "decorate the room", "make a playlist")),
)
"""Requests for several items at once: a pattern, and the items of its plan (one add each)."""


_PLAN_LISTS = ("todo", "todos", "task", "tasks", "list", "plan", "plans")
"""A plan's items go to a tool of one of these lists when there is one (not to a cart)."""


@dataclass(frozen=True, slots=True)
class _Intent:
    kind: str
    items: tuple[str, ...]
    lists: tuple[str, ...] = ()
    """Words of the list the items belong to: a tool whose name has one is preferred."""


Rules = Callable[[Sequence[Message], Sequence[ToolSpec]], Reply]
"""How a `DemoModel` decides its reply to the messages, given the tools (`decide`)."""


class DemoModel:
    """A deterministic offline model for list demos: rules, not an LLM.

    It calls the tools it is given (by name and JSON schema) for phrases such as "add milk and
    eggs", "done with milk", "remove eggs" and "what's on my list?", then sums up the tool
    results in a sentence. The module docstring lists every phrase. Replies stream word by
    word, like `ScriptedModel`.

    `rules` decides each reply from the messages and the tools: `decide` (these rules) unless
    an app teaches the model its own phrases with a function layered on `decide` (the demo
    agent's `shop_reply`).
    """

    def __init__(self, rules: Rules | None = None) -> None:
        self._rules: Rules = rules or decide

    @property
    def name(self) -> str:
        """Always "demo"."""
        return "demo"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Decide the reply by rules and stream it."""
        reply = self._rules(request.messages, request.tools)
        async for chunk in stream_reply(reply, request):
            yield chunk


def decide(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply:
    """What the demo model replies to `messages`, given `tools`."""
    if messages and messages[-1].role == "tool":
        return Reply(text=_summary(messages, tools))
    text = _last_user_text(messages)
    intent = _intent(text)
    if intent is None:
        return Reply(text=_help(tools, greeting=_is_greeting(text)))
    spec = _tool_for(intent.kind, tools, intent.lists)
    if spec is None and intent.kind == "read":
        seen = _state_summary(messages, text)
        if seen is not None:
            return Reply(text=seen)
    if spec is None:
        return Reply(
            text=f"I can't {_VERBS[intent.kind]} items here: none of my tools does that. "
            + _help(tools, greeting=False)
        )
    if intent.kind in ("read", "clear"):
        return Reply(tool_calls=(ToolCall(spec.name, {}),))
    if not intent.items:
        return Reply(
            text=f"What should I {_VERBS[intent.kind]}? Name the items, e.g. "
            f'"{intent.kind} milk and eggs".'
        )
    main = _main_argument(spec)
    if main is not None and "array" in _types(_properties(spec).get(main, {})):
        return Reply(tool_calls=(ToolCall(spec.name, {main: list(intent.items)}),))
    filled = [_fill(spec, item) for item in intent.items]
    if any(arguments is None for arguments in filled):
        return Reply(
            text=f"To {_VERBS[intent.kind]} an item, {spec.name} needs its number: say, for "
            f'example, "{intent.kind} 2".'
        )
    return Reply(tool_calls=tuple(ToolCall(spec.name, a) for a in filled if a is not None))


# -- reading the user ------------------------------------------------------------------------


def _last_user_text(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user" and not message.content.startswith(NOTICE_PREFIX):
            return message.content
    return ""


def _is_greeting(text: str) -> bool:
    return bool(re.match(r"^\s*(hi|hello|hey|help|good (morning|afternoon|evening))\b", text, re.I))


def _intent(text: str) -> _Intent | None:
    clean = " ".join(text.lower().replace("\u2019", "'").split())
    clean = _TRAILING.sub("", _POLITE.sub("", clean, count=1))
    for plan, items_of in _PLANS:
        planned = plan.match(clean)
        if planned is not None:
            return _Intent("add", tuple(items_of(planned)), _PLAN_LISTS)
    for kind, pattern in _INTENTS:
        match = pattern.match(clean)
        if match is None:
            continue
        rest = _PLACE.sub("", match.group("items") or "") if kind not in ("read", "clear") else ""
        items = tuple(item for item in (_clean_item(i) for i in _SPLIT.split(rest)) if item)
        return _Intent(kind, items)
    return None


def _clean_item(item: str) -> str:
    item = item.strip(" .!?\"'")
    item = re.sub(r"^(?:some|the item|item)\s+(?=\D)", "", item)
    return item


# -- choosing and filling a tool ------------------------------------------------------------


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


def _kind_of(spec: ToolSpec) -> str | None:
    scores = {kind: _score(kind, spec) for kind in _KIND_WORDS}
    best = max(scores, key=lambda kind: scores[kind])
    return best if scores[best] > 0 else None


def _tool_for(kind: str, tools: Sequence[ToolSpec], lists: Sequence[str] = ()
              ) -> ToolSpec | None:
    """The best tool for `kind`; of those, one whose name names one of `lists` if any does."""
    candidates = [spec for spec in tools if _kind_of(spec) == kind]
    preferred = [spec for spec in candidates if set(_words(spec)[0]) & set(lists)]
    if not candidates:
        return None
    return max(preferred or candidates, key=lambda spec: _score(kind, spec))


def _properties(spec: ToolSpec) -> Mapping[str, Any]:
    properties = spec.parameters.get("properties", {})
    return properties if isinstance(properties, Mapping) else {}


def _types(schema: Any) -> set[str]:
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
            found |= _types(option)
    return found


def _main_argument(spec: ToolSpec) -> str | None:
    """The argument an item's text goes to: the first required string, else the first string."""
    properties = _properties(spec)
    required = [str(r) for r in spec.parameters.get("required", ()) or ()]
    strings = [n for n in properties if _types(properties[n]) & {"string", "array"}]
    for name in required:
        if name in strings:
            return name
    if strings:
        return strings[0]
    return next(iter(properties), None)


def _integer_argument(spec: ToolSpec, names: tuple[str, ...]) -> str | None:
    properties = _properties(spec)
    integers = [n for n in properties if _types(properties[n]) & {"integer", "number"}]
    for name in integers:
        if name.lower() in names or any(name.lower().endswith("_" + n) for n in names):
            return name
    return None


def _fill(spec: ToolSpec, item: str | None) -> dict[str, Any] | None:
    """The arguments for one item, or None when the tool takes only a number and got text."""
    if item is None:
        return {}
    number = _NUMBER.match(item)
    if number is not None:
        index = _integer_argument(spec, _INDEX_NAMES)
        main = _main_argument(spec)
        if index is not None:
            return {index: int(number.group(1))}
        if main is not None and _types(_properties(spec).get(main, {})) & {"integer", "number"}:
            return {main: int(number.group(1))}
    arguments: dict[str, Any] = {}
    counted = _LEADING_COUNT.match(item)
    quantity = _integer_argument(spec, _QUANTITY_NAMES)
    if counted is not None and quantity is not None:
        arguments[quantity] = int(counted.group(1))
        item = counted.group(2)
    main = _main_argument(spec)
    if main is not None:
        if not _types(_properties(spec).get(main, {})) & {"string", "array"} and _types(
            _properties(spec).get(main, {})
        ) & {"integer", "number"}:
            return None
        arguments[main] = item
    return arguments


# -- after the tools answered ----------------------------------------------------------------


def _summary(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> str:
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
        kind = _kind_of(spec) if spec is not None else None
        thing = _thing(call, spec)
        if result.is_error:
            verb = _VERBS.get(kind or "", f"run {result.name}")
            failed.append(f"I couldn't {verb}{' ' + thing if thing else ''}: {result.content}")
        elif kind == "read" or (kind is None and result.content):
            shown.append(_render(result.content))
        else:
            done.setdefault(kind or "", []).append(thing)
    sentences = [_did(kind, things) for kind, things in done.items()]
    sentences += shown + failed
    text = " ".join(s if s.endswith((".", "!", "?")) else s + "." for s in sentences)
    return text or "Done."


def _thing(call: ToolCall | None, spec: ToolSpec | None) -> str:
    if call is None or not call.arguments:
        return ""
    main = _main_argument(spec) if spec is not None else None
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
            return "Here's what I see. " + ". ".join(
                f"{key}: {_numbered(items) or 'empty'}" for key, items in lists.items()
            )
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
    quantity = next((item[k] for k in _QUANTITY_NAMES if isinstance(item.get(k), int)), None)
    if quantity is not None and quantity != 1:
        label = f"{quantity} × {label}"
    if any(item.get(k) is True for k in _DONE_KEYS):
        label += " (done)"
    return label


def _state_summary(messages: Sequence[Message], asked: str) -> str | None:
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
    wanted = {
        k: v for k, v in lists.items() if k.lower() in words or k.lower().rstrip("s") in words
    }
    parts = [f"{key}: {_numbered(items) or 'empty'}" for key, items in (wanted or lists).items()]
    return "Here's what I see. " + ". ".join(parts) + "."


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _help(tools: Sequence[ToolSpec], *, greeting: bool) -> str:
    examples = {
        "add": '"add milk and eggs"',
        "complete": '"done with milk"',
        "remove": '"remove eggs"',
        "clear": '"clear the list"',
        "read": '"what\'s on my list?"',
    }
    kinds = {_kind_of(spec) for spec in tools}
    can = [examples[kind] for kind in examples if kind in kinds]
    opener = "Hi! " if greeting else ""
    if not can:
        return (
            f"{opener}I'm the offline demo model: I follow simple list commands, but this "
            "agent gives me no tools to use."
        )
    return f"{opener}I'm the offline demo model. Try {_join(can)}."
