"""The id a kept user message is shown under: the id its client gave it (`Message.id`), else one
made of its place in the thread's history. Every reader of a thread (`GET /threads`, an AG-UI
connect, the AI SDK's `/messages`) shows it under this id, and a client's next request that
names it is matched to it by this id."""

from __future__ import annotations

import hashlib
from typing import Literal

from pyox_agents.state.messages import Message

__all__ = ["user_message_id"]


def user_message_id(thread_id: str, message: Message, index: int, n: int,
                    kind: Literal["import", "user"]) -> str:
    """The id of user message `message`, the `n`th of history entry `index` (an `import`
    entry's, or a `user` message entry's) of thread `thread_id`."""
    if message.id is not None:
        return message.id
    digest = hashlib.sha256(f"{thread_id}\n{index}\n{n}".encode()).hexdigest()
    return f"{kind}_{digest[:16]}"
