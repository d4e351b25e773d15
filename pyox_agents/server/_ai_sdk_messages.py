"""`GET /agents/{name}/ai-sdk/{chat_id}/messages`: a chat's thread as the `UIMessage[]` a
reloaded `useChat` page starts from (`useChat({messages})`), scoped to the caller like
`GET /threads/{id}`."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pyox_agents.adapters import ai_sdk
from pyox_agents.service import RequestError, thread_store, thread_view

__all__ = ["ai_sdk_messages", "sdk_version"]


async def ai_sdk_messages(server: Any, request: Request) -> Response:
    """The chat's messages: 404 without a store, for an unknown chat or another's; 400 for
    an `ai` major other than 5, 6 or 7."""
    _, agent, chat_id = await server.owned(request, "chat_id")
    store = thread_store(server.store)
    try:
        view = await thread_view(server.runs, chat_id)
        conversation = await store.aload(chat_id)
    except LookupError:
        raise RequestError(404, f"no chat {chat_id!r}") from None
    paused = await server.runs.paused(agent, chat_id)
    return JSONResponse(ai_sdk.history_to_ui_messages(
        conversation.history, view["state"], pending=paused.pending if paused else None,
        sdk_version=sdk_version(request), thread_id=chat_id, version=view["version"]))


def sdk_version(request: Request) -> int:
    """The client's `ai` major: header `x-ai-sdk-version` or `?v=` (5, 6 or 7; 7 by default).

    The header reaches the resume GET too (DefaultChatTransport sends its `headers` there).
    """
    raw = request.headers.get("x-ai-sdk-version") or request.query_params.get("v", "7")
    if raw not in ("5", "6", "7"):
        raise RequestError(400, f"the `ai` major (header x-ai-sdk-version or ?v=) must be 5, 6 "
                                f"or 7, got {raw!r}")
    return int(raw)
