"""A live run's AG-UI frames reach the client through the response, each frame once, in order,
written one at a time by the response's own task: a write the transport makes wait holds back
every later one until it is done, and a write that fails ends the response, not the run. The
ASGI `send` here is the server's side of the response, the one part a test has to play: it
takes each chunk at once, after a few turns of the loop (a paused transport), or fails. The
same for the AI SDK's frames."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from ag_ui.core import RunAgentInput
from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents import Agent
from pyox_agents.adapters import ai_sdk
from pyox_agents.adapters.ag_ui import frame_batches
from pyox_agents.adapters.ai_sdk import Chat
from pyox_agents.adapters.ai_sdk._encode import Frames
from pyox_agents.events import RunFinished, RunStarted, RuntimeEvent
from pyox_agents.models.base import TextChunk
from pyox_agents.server.sse import EventStreamResponse
from pyox_agents.service import RunRequest, RunService
from pyox_agents.state.messages import Message


class _PacedModel:
    """Streams `tokens` text deltas, with `pauses[i]` turns of the loop before token i."""

    name = "paced"

    def __init__(self, pauses: list[int]) -> None:
        self.pauses = pauses

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        for index, pause in enumerate(self.pauses):
            for _ in range(pause):
                await asyncio.sleep(0)
            yield TextChunk(f"t{index} ")


def _input(thread: str) -> RunAgentInput:
    return RunAgentInput.model_validate({
        "threadId": thread, "runId": "r1", "protocolVersion": "1.0", "state": {},
        "messages": [{"id": "u1", "role": "user", "content": "go"}], "tools": [],
        "context": [], "forwardedProps": {}})


class _Client:
    """The server's side of one response: its ASGI `send` and `receive`, which record what the
    client got and from which task, and make the writes `slow` names wait (a paused transport:
    `slow[i]` turns of the loop for body write i) or fail (`fail_at`)."""

    def __init__(self, slow: dict[int, int] | None = None, fail_at: int | None = None) -> None:
        self.slow = slow or {}
        self.fail_at = fail_at
        self.body: list[bytes] = []
        self.tasks: list[asyncio.Task[Any] | None] = []
        self.ended = False
        self.writing = 0
        """Writes in progress now: never above 1."""
        self.overlapped = False
        self._gone = asyncio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] != "http.response.body":
            return
        index = len(self.body)
        if index == self.fail_at:
            raise OSError("the connection broke")
        self.writing += 1
        self.overlapped |= self.writing > 1
        try:
            for _ in range(self.slow.get(index, 0)):
                await asyncio.sleep(0)
        finally:
            self.writing -= 1
        self.body.append(message["body"])
        self.tasks.append(asyncio.current_task())
        self.ended = not message.get("more_body", False)

    async def receive(self) -> dict[str, Any]:
        await self._gone.wait()
        return {"type": "http.disconnect"}

    def events(self) -> list[dict[str, Any]]:
        text = b"".join(self.body)
        return [json.loads(frame[len(b"data: "):]) for frame in text.split(b"\n\n") if frame]


async def _serve(thread: str, pauses: list[int], client: _Client) -> tuple[asyncio.Task[Any], Any]:
    """Start a paced run and stream its AG-UI frames to `client`; the response's task and the
    live run."""
    service = RunService()
    request = RunRequest(thread, messages=(Message(role="user", content="go"),), state={})
    live = await service.start(Agent(_PacedModel(pauses)), request)
    response = EventStreamResponse(frame_batches(_input(thread), live.follow_batches()))
    scope = {"type": "http", "method": "POST"}
    writer = asyncio.create_task(response(scope, client.receive, client.send))  # type: ignore[arg-type]
    return writer, live


def _check_stream(client: _Client, tokens: int) -> None:
    """The client got the whole stream: every delta once and in order, one terminal event last."""
    events = client.events()
    assert client.ended and not client.overlapped
    deltas = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert "".join(deltas) == "".join(f"t{i} " for i in range(tokens))
    assert [e["type"] for e in events if e["type"] in ("RUN_FINISHED", "RUN_ERROR")] \
        == ["RUN_FINISHED"]
    assert events[-1]["type"] == "RUN_FINISHED"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=30),
       st.dictionaries(st.integers(0, 40), st.integers(1, 4), max_size=8))
def test_frames_reach_the_client_once_and_in_order_from_the_responses_task(
        pauses: list[int], slow: dict[int, int]) -> None:
    async def main() -> None:
        client = _Client(slow)
        writer, _ = await _serve("t1", pauses, client)
        await asyncio.wait_for(writer, 10)
        _check_stream(client, len(pauses))
        assert set(client.tasks) == {writer}

    asyncio.run(main())


def test_a_write_the_transport_holds_keeps_back_the_frames_after_it() -> None:
    async def main() -> None:
        client = _Client(slow={index: 6 for index in range(3, 40, 4)})
        writer, _ = await _serve("t1", [1] * 40, client)
        await asyncio.wait_for(writer, 10)
        _check_stream(client, 40)

    asyncio.run(main())


@pytest.mark.parametrize("fail_at", [2, 10, 25])
def test_a_write_that_fails_fails_the_response_not_the_run(
        fail_at: int) -> None:
    async def main() -> None:
        client = _Client(fail_at=fail_at)
        writer, live = await _serve("t1", [2] * 30, client)
        with pytest.raises(OSError, match="the connection broke"):
            await asyncio.wait_for(writer, 10)
        assert live.task is not None
        await asyncio.wait_for(asyncio.shield(live.task), 10)  # the run goes on to its end
        assert isinstance(live.events[-1], RunFinished)
        assert live.events[-1].outcome != "cancelled"

    asyncio.run(main())


def _ai_sdk_chunks(client: _Client) -> list[Any]:
    text = b"".join(client.body)
    return [frame[len(b"data: "):].decode() for frame in text.split(b"\n\n") if frame]


@pytest.mark.parametrize("held", [False, True])
def test_ai_sdk_frames_reach_the_client_once_and_in_order(held: bool) -> None:
    async def main() -> None:
        service = RunService()
        request = RunRequest("c1", messages=(Message(role="user", content="go"),), state={})
        live = await service.start(Agent(_PacedModel([2] * 40)), request)
        client = _Client(slow={index: 5 for index in range(5, 40, 7)} if held else None)
        response = EventStreamResponse(ai_sdk.frame_batches(Chat(id="c1"),
                                                            live.follow_batches()))
        writer = asyncio.create_task(response({"type": "http", "method": "POST"},  # type: ignore[arg-type]
                                              client.receive, client.send))
        await asyncio.wait_for(writer, 10)
        frames = _ai_sdk_chunks(client)
        assert frames[-1] == "[DONE]" and client.ended and not client.overlapped
        chunks = [json.loads(frame) for frame in frames[:-1]]
        assert chunks[-1]["type"] == "finish"
        deltas = [c["delta"] for c in chunks if c["type"] == "text-delta"]
        assert "".join(deltas) == "".join(f"t{i} " for i in range(40))
        assert set(client.tasks) == {writer}

    asyncio.run(main())


def test_an_ai_sdk_stream_whose_events_cannot_be_read_ends_as_a_failed_run() -> None:
    async def broken() -> AsyncIterator[list[RuntimeEvent]]:
        yield [RunStarted("r1", "c1", {})]
        raise RuntimeError("the store went away")

    async def main() -> None:
        client = _Client()
        response = EventStreamResponse(ai_sdk.frame_batches(Chat(id="c1"), broken()))
        await response({"type": "http", "method": "POST"},  # type: ignore[arg-type]
                       client.receive, client.send)
        frames = _ai_sdk_chunks(client)
        assert frames[-1] == "[DONE]"
        ends = [json.loads(frame)["type"] for frame in frames[-3:-1]]
        assert ends == ["error", "finish"]

    asyncio.run(main())


_HOSTILE = ["He", "llo ", '"quoted" ', "back\\slash ", "line\nbreak ", "\ud83d", "\ude00",
            " lone\udfff ", "\u2028", "nul\x00 ", "</script>", "é" * 300, " end."]
"""A reply's tokens as a model may stream them: JSON's specials, a surrogate pair split over
two tokens, a lone surrogate, U+2028, NUL, a long one."""


class _Tokens:
    """Streams `_HOSTILE`, a turn of the loop before each (so each comes on its own)."""

    name = "tokens"

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        for token in _HOSTILE:
            await asyncio.sleep(0)
            yield TextChunk(token)


@pytest.mark.parametrize("held", [False, True])
def test_ai_sdk_tokens_of_a_hostile_reply_reach_the_client_once_and_in_order(held: bool) -> None:
    """Rule: every token of a reply with JSON's specials, split surrogate pairs, a lone
    surrogate (as U+FFFD), U+2028 and NUL reaches the client once and in order, as the run
    keeps it, whether the transport holds some writes or not."""
    from pyox_agents.adapters.ai_sdk._chunks import ChunkWriter
    from pyox_agents.runtime._replies import valid_text

    async def stream() -> list[Any]:
        service = RunService()
        request = RunRequest("c1", messages=(Message(role="user", content="go"),), state={})
        live = await service.start(Agent(_Tokens()), request)
        chat = Chat(id="c1", message_id="msg-1")
        frames = Frames(ChunkWriter(chat, 7), chat.id, live.follow_batches())
        client = _Client(slow={5: 3, 9: 2} if held else None)
        writer = asyncio.create_task(EventStreamResponse(frames)(  # type: ignore[arg-type]
            {"type": "http", "method": "POST"}, client.receive, client.send))
        await asyncio.wait_for(writer, 10)
        assert client.ended and not client.overlapped
        frames_text = _ai_sdk_chunks(client)
        assert frames_text[-1] == "[DONE]"
        return [json.loads(frame) for frame in frames_text[:-1]]

    chunks = asyncio.run(stream())
    assert chunks[-1]["type"] == "finish"
    deltas = [c["delta"] for c in chunks if c["type"] == "text-delta"]
    assert deltas == [valid_text(token) for token in _HOSTILE]
