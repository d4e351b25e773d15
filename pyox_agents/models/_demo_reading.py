"""How `DemoModel` reads the user: the phrases it understands, and the built-in plans that
add several items at once."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyox_agents.state.messages import NOTICE_PREFIX, Message

_POLITE = re.compile(
    r"^(?:(?:hey|hi|hello|ok|okay|so|and|also|now)[,!]?\s+)*"
    r"(?:please\s+|can you\s+|could you\s+|would you\s+|will you\s+|pls\s+)?"
)


_TRAILING = re.compile(r"(?:[\s,]*(?:please|thanks|thank you))?[\s.!?]*$")


_PLACE = re.compile(r"\s+(?:to|on|onto|in|into|from|off|off of)\s+(?:my|the|our|your)\s+[\w\s-]*$")


_INTENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("complete", re.compile(r"^(?P<items>.+?)\s+(?:is|are)\s+(?:done|finished|completed?)$")),
    ("complete", re.compile(r"^(?:i'?m\s+|i\s+am\s+|i'?ve\s+|i\s+have\s+|i\s+)?"
                            r"(?:done with|finished with|finished|finish|completed?|"
                            r"check(?:ed)? off|tick(?:ed)? off|mark(?:ed)?|got|bought)\s+"
                            r"(?P<items>.+?)(?:\s+(?:as\s+)?(?:done|complete|completed|finished))?$")),
    ("remove", re.compile(r"^(?:remove|delete|drop|take|get rid of|cancel|forget|scratch)\s+"
                          r"(?P<items>.+?)(?:\s+(?:off|out))?$")),
    ("clear", re.compile(r"^(?:clear|empty|reset)\b(?P<items>)")),
    ("read", re.compile(r"^(?:show|list|view|display|see|read)\b(?P<items>)|^what\b(?P<what>)|"
                        r"^how (?:many|much)\b(?P<many>)|^(?:my )?(?:list|todos|cart)$(?P<bare>)")),
    ("add", re.compile(r"^(?:add|put|buy|get|remember(?: to)?|i need(?: to)?|we need(?: to)?|need|"
                       r"create|new|plus|append|todo:?)\s+(?P<items>.+)$")),
)


_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*|\s*\+\s*")


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


_PLANS: tuple[tuple[re.Pattern[str], Any], ...] = (
    (re.compile(r"^plan (?:a |my |our |the )?(?:trip|vacation|holiday|journey)"
                r"(?:\s+(?:to|in)\s+(?P<place>[\w\s'-]+?))?$"), lambda m: _trip(m["place"] or "")),
    (re.compile(r"^plan (?:my|our|the|this|next) week$"),
     lambda m: ("plan the week's priorities", "grocery shopping", "exercise three times",
                "call a friend", "review how the week went")),
    (re.compile(r"^(?:pack|packing list)(?: for)? (?:a |my |our |the )?(?P<kind>\w+)?\s*"
                r"(?:holiday|vacation|trip|weekend)$"),
     lambda m: _PACKING.get(m["kind"] or "", _PACKING_DEFAULT)),
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


def without_notes(messages: Sequence[Message]) -> Sequence[Message]:
    """`messages` without the system notes at their end: what the runtime tells the model at a
    turn (a person's edits of the shared state since its last one, `Agent(state_note=...)`).
    The rules answer the conversation: tool results followed by a note still get their summary,
    not the user's request carried out again."""
    end = len(messages)
    while end > 0 and messages[end - 1].role == "system":
        end -= 1
    return messages[:end]


def last_user_text(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.role == "user" and not message.content.startswith(NOTICE_PREFIX):
            return message.content
    return ""


def is_greeting(text: str) -> bool:
    return bool(re.match(r"^\s*(hi|hello|hey|help|good (morning|afternoon|evening))\b", text, re.I))


def read_intent(text: str) -> _Intent | None:
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
    return re.sub(r"^(?:some|the item|item)\s+(?=\D)", "", item.strip(" .!?\"'"))
