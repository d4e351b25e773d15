"""The public AG-UI module: its names, pinned, and `stream` used without our server."""

from __future__ import annotations

import pytest

from pyox_agents import Agent, ag_ui, ai_sdk
from pyox_agents.models import ScriptedModel
from pyox_agents.service import RunService, thread_history
from pyox_agents.stores import MemoryStore
from tests.ag_ui.servers import frames
from tests.ag_ui.verify import check_stream

pytestmark = pytest.mark.anyio


def test_the_public_names_are_exactly_these() -> None:
    assert set(ag_ui.__all__) == {"APPROVAL_SCHEMA", "MEDIA_TYPE", "RequestError", "connect",
                                  "encode", "encode_event", "parse_request", "stream",
                                  "translate"}


def body(run_id: str, *texts: str, **fields: object) -> dict[str, object]:
    messages = [{"id": f"u{i}", "role": "user", "content": t} for i, t in enumerate(texts)]
    return {"threadId": "t1", "runId": run_id, "protocolVersion": "1.0", "messages": messages,
            **fields}


async def test_stream_and_encode_give_sse_frames_of_a_valid_stream() -> None:
    agent = Agent(ScriptedModel(["Hi!"]))
    raw = b"".join([chunk async for chunk in ag_ui.encode(ag_ui.stream(agent, body("r1", "hi")))])
    assert raw.startswith(b"data: {") and raw.endswith(b"}\n\n") and b"\r" not in raw
    replayed = check_stream(frames(raw.decode()), thread_id="t1", run_id="r1")
    assert replayed.terminal["type"] == "RUN_FINISHED"


async def test_stream_refuses_an_invalid_input_before_the_first_event() -> None:
    events = ag_ui.stream(Agent(ScriptedModel(["Hi!"])), {"threadId": "t1", "messages": []})
    with pytest.raises(ag_ui.RequestError) as caught:
        await anext(events)
    assert (caught.value.status, caught.value.field) == (422, "runId")


async def test_stream_with_a_store_continues_the_conversation_but_keeps_no_state() -> None:
    """Seed 004: "Nothing is stored: your app keeps the state between runs and gives it again."
    `ag_ui.stream` is the library: it starts a run with the client's state, or `{}`."""
    store = MemoryStore()
    agent = Agent(ScriptedModel(["one", "two"]))
    first = [e async for e in ag_ui.stream(agent, body("r1", "a", state={"n": 1}), store=store)]
    assert first[-1].type == "RUN_FINISHED"
    second = [e async for e in ag_ui.stream(agent, body("r2", "a", "b"), store=store)]
    assert second[1].type == "STATE_SNAPSHOT" and second[1].snapshot == {}
    assert len(store.load("t1").messages) == 4  # the conversation is kept


async def test_stream_with_a_service_that_keeps_state_continues_the_threads_state() -> None:
    store = MemoryStore()
    service = RunService(store, keep_state=True)
    agent = Agent(ScriptedModel(["one", "two"]), store=store)
    first = [e async for e in ag_ui.stream(agent, body("r1", "a", state={"n": 1}),
                                           service=service)]
    assert first[-1].type == "RUN_FINISHED"
    second = [e async for e in ag_ui.stream(agent, body("r2", "a", "b"), service=service)]
    assert second[1].type == "STATE_SNAPSHOT" and second[1].snapshot == {"n": 1}


async def test_connect_without_the_server_gives_back_a_threads_messages_and_state() -> None:
    """`ag_ui.connect` with the service the runs share: the thread's messages under the ids
    they were streamed with, and its kept state."""
    store = MemoryStore()
    agent = Agent(ScriptedModel(["Hi!"]), store=store)
    service = RunService(store, keep_state=True)
    run = [e async for e in ag_ui.stream(agent, body("r1", "hi", state={"n": 1}),
                                         service=service)]
    streamed = next(e.message_id for e in run if e.type.value == "TEXT_MESSAGE_START")
    back = [e async for e in ag_ui.connect(agent, body("r2"), service=service)]
    assert [e.type.value for e in back] == ["RUN_STARTED", "MESSAGES_SNAPSHOT",
                                            "STATE_SNAPSHOT", "RUN_FINISHED"]
    assert [m.id for m in back[1].messages][1:] == [streamed]  # type: ignore[attr-defined]
    assert back[2].snapshot == {"n": 1}  # type: ignore[attr-defined]


@pytest.mark.parametrize("protocol", ["ag-ui", "ai-sdk"])
async def test_a_run_on_an_agent_with_its_own_store_is_in_the_threads_history(
        protocol: str) -> None:
    """Rule: `ag_ui.stream` and `ai_sdk.stream` serve an agent that has a store of its own with
    that store (no `store=` given): each run's end is recorded in the thread's history (its
    status; the threads API lists it and can fork or rewind at it). `ag_ui.stream` served it
    with no store, so the run was listed with no status."""
    store = MemoryStore()
    agent = Agent(ScriptedModel(["hi"]), store=store)
    if protocol == "ag-ui":
        body = {"threadId": "t", "runId": "r1", "state": {}, "tools": [], "context": [],
                "forwardedProps": {}, "messages": [{"id": "u1", "role": "user",
                                                    "content": "hello"}]}
        [event async for event in ag_ui.stream(agent, body)]
    else:
        chat = {"id": "t", "messages": [{"id": "u1", "role": "user",
                                         "parts": [{"type": "text", "text": "hello"}]}]}
        [chunk async for chunk in ai_sdk.stream(agent, chat)]
    (run,) = (await thread_history(RunService(store), "t"))["runs"]
    assert run["status"] == "completed"
