"""A run the service ends itself (stopped, or over the server's time limit) closes the texts it
left open, with all their text, before its end, as every run closes what it opened: an AG-UI
client's `MESSAGES_SNAPSHOT` of a stopped run still holds what it streamed (the translation
takes a message's whole text from its `TextEnded`; it keeps no copy of the deltas)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from ag_ui.core import RunAgentInput

from pyox_agents import Agent
from pyox_agents.adapters.ag_ui import frame_batches
from pyox_agents.events import RunFailed, RunFinished, RuntimeEvent, TextDelta, TextEnded
from pyox_agents.models.base import TextChunk
from pyox_agents.service import RunRequest, RunService, ServerLimits
from pyox_agents.state.messages import Message

PIECES = ["Hello", ", wor", "ld \U0001f600", " and"]


class _StallingModel:
    """Streams `PIECES`, then waits for ever (a model that stalls mid-reply)."""

    name = "stalling"

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        for piece in PIECES:
            yield TextChunk(piece)
        await asyncio.Event().wait()


def _input(thread: str) -> RunAgentInput:
    return RunAgentInput.model_validate({
        "threadId": thread, "runId": "r1", "protocolVersion": "1.0", "state": {},
        "messages": [{"id": "u1", "role": "user", "content": "go"}], "tools": [],
        "context": [], "forwardedProps": {}})


async def _ended_by_the_service(thread: str, limits: ServerLimits | None, stop: bool
                                ) -> tuple[list[RuntimeEvent], list[dict[str, Any]]]:
    """The runtime events and AG-UI events of a run that streams `PIECES` and then stalls,
    until the service stops it (`stop`) or its time limit does."""
    service = RunService(limits=limits)
    request = RunRequest(thread, messages=(Message(role="user", content="go"),), state={})
    live = await service.start(Agent(_StallingModel()), request)
    frames = frame_batches(_input(thread), live.follow_batches())
    body = b""
    async for chunk in frames:
        body += chunk
        deltas = [e for e in live.events if isinstance(e, TextDelta)]
        if stop and "".join(d.delta for d in deltas) == "".join(PIECES):
            await service.stop(thread)
    events = [json.loads(frame[len(b"data: "):]) for frame in body.split(b"\n\n") if frame]
    return live.events, events


def _closes_texts_before_the_end(runtime: list[RuntimeEvent], ag_ui: list[dict[str, Any]]
                                 ) -> None:
    ended = [e for e in runtime if isinstance(e, TextEnded)]
    assert [e.text for e in ended] == ["".join(PIECES)]
    assert isinstance(runtime[-1], RunFinished | RunFailed)
    assert runtime.index(ended[0]) < len(runtime) - 1
    kinds = [e["type"] for e in ag_ui]
    assert kinds.count("TEXT_MESSAGE_END") == 1
    assert kinds.index("TEXT_MESSAGE_END") < kinds.index(kinds[-1])


def test_a_stopped_run_closes_its_text_and_its_snapshot_holds_what_it_streamed() -> None:
    runtime, ag_ui = asyncio.run(_ended_by_the_service("t-stop", None, stop=True))
    assert isinstance(runtime[-1], RunFinished) and runtime[-1].outcome == "cancelled"
    _closes_texts_before_the_end(runtime, ag_ui)
    snapshot = next(e for e in ag_ui if e["type"] == "MESSAGES_SNAPSHOT")
    assistant = [m for m in snapshot["messages"] if m["role"] == "assistant"]
    assert [m.get("content") for m in assistant] == ["".join(PIECES)]
    assert ag_ui[-1]["type"] == "RUN_FINISHED"


def test_a_run_over_the_time_limit_closes_its_text_before_run_timeout() -> None:
    runtime, ag_ui = asyncio.run(_ended_by_the_service(
        "t-late", ServerLimits(run_seconds=0.3), stop=False))
    assert isinstance(runtime[-1], RunFailed) and runtime[-1].error.code == "run_timeout"
    _closes_texts_before_the_end(runtime, ag_ui)
    assert ag_ui[-1]["type"] == "RUN_ERROR"
