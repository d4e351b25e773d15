"""What `State(...)` checks in its arguments: the id, the messages, and the keywords of 0.4
that are gone."""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping

from pyox_agents.state._ids import ID_RULE, is_id
from pyox_agents.state.jsonvalue import frozen_message
from pyox_agents.state.messages import Message

NO_MESSAGES: tuple[Message, ...] = ()
REMOVED = {
    "task": "State(task=...) is a 0.4 keyword: pass the task as the first message, "
            "State(messages=[Message.user(task)])",
    "context": "State(context=...) is a 0.4 keyword: pass the conversation as "
               "State(messages=[...]), a list of Message",
    "data": "State(data=...) is a 0.4 keyword: use State(extra_data={...})",
}


def new_id() -> str:
    return secrets.token_hex(16)


def check_id(id: object) -> str:
    if id is None:
        return new_id()
    if not isinstance(id, str):
        raise TypeError(f"id must be a str, got {type(id).__name__}")
    if not is_id(id):
        raise ValueError(f"id {id[:140]!r} is not a State id: use {ID_RULE} (or leave it out "
                         f"for a random one)")
    return id


def check_messages(messages: object) -> tuple[Message, ...]:
    if isinstance(messages, str | bytes | Message | Mapping) or not isinstance(messages, Iterable):
        raise TypeError(f"messages must be a list of Message, got a {type(messages).__name__}; "
                        f"write messages=[Message.user(text)]")
    out = []
    for index, message in enumerate(messages):
        if not isinstance(message, Message):
            raise TypeError(f"messages[{index}] is a {type(message).__name__}, not a Message; "
                            f"write Message.user(text) (or Message.assistant, Message.tool)")
        out.append(frozen_message(message, f"messages[{index}]"))
    return tuple(out)
