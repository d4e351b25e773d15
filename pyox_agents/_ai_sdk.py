"""How `pyox_agents.ai_sdk` serves one request without the server: the adapter, the service
and the agent composed (see that module for the whole story)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from pyox_agents._run_request import RunRequest
from pyox_agents.adapters import ai_sdk as _adapter
from pyox_agents.adapters.ai_sdk import Chat, Chunk, translate
from pyox_agents.agent import Agent
from pyox_agents.service import RunService
from pyox_agents.stores.base import Store

__all__ = ["parse_request", "stream"]


def parse_request(body: bytes, agent: Agent, *, sdk_version: int = 7) -> tuple[Chat, RunRequest]:
    """The `Chat` and the `RunRequest` a `DefaultChatTransport` body asks `agent` for (results
    and declarations of tools `agent` has are its own, not the client's).

    Validation of the state against the agent's `state_type`, and of approval ids against the
    approvals the server issued, happens when the run starts (`RunService.start`, 422).

    Raises:
        RequestError: 400 when the body is not a JSON object, 422 when a field no `ai` client
            would send that way is wrong (the message names it).
        ValueError: `sdk_version` is not 5, 6 or 7.
    """
    return _adapter.parse_request(body, agent.tools, sdk_version=sdk_version)


async def stream(agent: Agent, body: bytes | str | Mapping[str, Any], *, store: Store | None = None,
                 sdk_version: int = 7, service: RunService | None = None) -> AsyncIterator[Chunk]:
    """Run `agent` for one `DefaultChatTransport` request body and yield the stream's chunks.

    For your own web framework: answer with `encode(stream(agent, body))` and `HEADERS`. The
    agent saves to `store` when it has none of its own. The run starts from the client's state
    (its `state`, else its last `data-state` part, else `{}`): nothing keeps the shared state
    between runs here (the server does, `create_app(keep_state=True)`). Pass one `service` to
    every call to allow only one active run per chat. The run goes on if the consumer stops
    reading; what it commits stays.

    Raises:
        RequestError: the body is refused (`status` 400 or 422, before anything runs).
        ValueError: `sdk_version` is not 5, 6 or 7.
    """
    if isinstance(body, Mapping):
        body = json.dumps(body)
    raw = body.encode() if isinstance(body, str) else body
    chat, request = parse_request(raw, agent, sdk_version=sdk_version)
    if store is not None and agent.store is None:
        agent = agent.with_store(store)
    runs = service if service is not None else RunService(agent.store)
    live = await runs.start(agent, request, name=agent.name or "")
    async for chunk in translate(chat, live.follow(), sdk_version=sdk_version,
                                 state_snapshots=agent.state_snapshots):
        yield chunk
