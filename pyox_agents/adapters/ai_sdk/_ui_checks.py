"""What no `ai` client sends as a request's messages and trigger, refused with the field named
(422): the rest of a `UIMessage` is read leniently (see `_request`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from pyox_agents._run_request import RequestError
from pyox_agents.adapters.ai_sdk._user_parts import user_message

__all__ = ["Trigger", "read_trigger", "read_ui_messages"]

Trigger = Literal["submit-message", "regenerate-message"]


def read_ui_messages(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The body's `messages`, or its `message` alone (the newest: the persistence guide's
    recipe), each checked to be a `UIMessage` as every `ai` client sends one; the last one, a
    user's, with something for the model to read."""
    raw, name = data.get("messages"), "messages"
    if not raw and "message" in data:
        raw, name = [data["message"]], "message"
    if raw is not None and not isinstance(raw, list):
        raise RequestError(422, f"messages is a {type(raw).__name__}: send a list of "
                                "UIMessages", "messages")
    if not raw:
        raise RequestError(422, f"messages is {'empty' if raw == [] else 'missing'}: send the "
                                "chat's messages (or the newest alone as message)", "messages")
    for index, item in enumerate(raw):
        _check_ui_message(item, name if name == "message" else f"messages[{index}]")
    where = name if name == "message" else f"messages[{len(raw) - 1}]"
    if raw[-1]["role"] == "user" and user_message(raw[-1], where)[0] is None:
        raise RequestError(422, f"{where}, the user's new message, has no text and no file: "
                                "send its text as a part {type: \"text\", text}", where)
    return raw


def _check_ui_message(item: Any, where: str) -> None:
    """Refuse what no `ai` client sends as a `UIMessage`: a message that is not an object, a
    role other than user, assistant and system, an id that is not a string, parts that are
    not a list (a pre-v5 `{role, content}` has none), a text part whose text is not a string.
    Parts of types this module does not know are left alone (newer clients add some)."""
    if not isinstance(item, dict):
        raise RequestError(422, f"{where} is a {type(item).__name__}: each message is an "
                                "object {id, role, parts}", where)
    if item.get("role") not in ("user", "assistant", "system"):
        raise RequestError(422, f"{where}.role is {item.get('role')!r}: send user, assistant "
                                "or system", f"{where}.role")
    if "id" in item and not isinstance(item["id"], str):
        raise RequestError(422, f"{where}.id is {item['id']!r}: send the message id as a "
                                "string", f"{where}.id")
    parts = item.get("parts")
    if not isinstance(parts, list):
        if parts is None and isinstance(item.get("content"), str):
            return
        raise RequestError(422, f"{where}.parts is {type(parts).__name__}: send the message's "
                                "parts as a list", f"{where}.parts")
    for number, part in enumerate(parts):
        if (isinstance(part, Mapping) and part.get("type") == "text"
                and not isinstance(part.get("text"), str)):
            raise RequestError(422, f"{where}.parts[{number}].text is "
                                    f"{type(part.get('text')).__name__}: a text part's text is a "
                                    "string", f"{where}.parts[{number}].text")


def read_trigger(trigger: Any) -> Trigger:
    """The body's `trigger`: submit-message (the default) or regenerate-message."""
    if trigger not in ("submit-message", "regenerate-message"):
        raise RequestError(422, f"trigger is {trigger!r}: send submit-message or "
                                "regenerate-message", "trigger")
    return cast("Trigger", trigger)
