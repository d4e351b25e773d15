"""Message ids are stable: whatever a thread's runs did, the ids their streams gave each message
are the ids the thread gives back (`GET /threads/{id}`, a connect's `MESSAGES_SNAPSHOT`), each
message once."""

from __future__ import annotations

from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents import Agent, RunContext, ToolCall, tool
from pyox_agents.events import TextStarted, ToolCallStarted, ToolResult
from pyox_agents.models import ScriptedModel
from pyox_agents.service._transcript import result_message_id, transcript
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message
from pyox_agents.stores import MemoryStore


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo."""
    ctx.state.setdefault("todos", []).append(text)
    return "added"


REPLY = st.one_of(
    st.text(alphabet="abc ", min_size=1, max_size=5),
    st.lists(st.sampled_from(["x", "y"]), min_size=1, max_size=3).map(
        lambda texts: [ToolCall("add_todo", {"text": t}) for t in texts]),
)
RUN = st.lists(REPLY, max_size=3).map(lambda replies: [*replies, "done"])
NUMBERED = st.one_of(  # a model that numbers each reply's calls from call_0
    st.text(alphabet="abc ", min_size=1, max_size=5),
    st.lists(st.sampled_from(["x", "y"]), min_size=1, max_size=3).map(
        lambda texts: [ToolCall("add_todo", {"text": t}, id=f"call_{n % 2}")
                       for n, t in enumerate(texts)]),
)
NUMBERED_RUN = st.lists(NUMBERED, max_size=3).map(lambda replies: [*replies, "done"])


async def _runs(runs: list[list[Any]]) -> tuple[set[str], list[dict[str, Any]]]:
    store = MemoryStore()
    streamed: set[str] = set()
    for n, script in enumerate(runs):
        agent = Agent(ScriptedModel(script), tools=[add_todo], store=store)
        try:
            conversation = await store.aload("t1")
        except LookupError:
            conversation = State(id="t1")
        conversation.add_message(Message.user(f"run {n}"))
        async for event in agent.stream(conversation, state={}):
            if isinstance(event, TextStarted | ToolCallStarted):
                streamed.add(event.message_id)
            elif isinstance(event, ToolResult):
                streamed.add(result_message_id(event.call_id))
    return streamed, transcript(await store.aload("t1"))


@settings(max_examples=40, deadline=None)
@given(st.lists(RUN, min_size=1, max_size=3))
def test_every_streamed_id_is_a_message_of_the_thread_once(runs: list[list[Any]]) -> None:
    streamed, messages = anyio.run(_runs, runs)
    ids = [m["id"] for m in messages]
    assert len(ids) == len(set(ids))
    assert streamed == {m["id"] for m in messages if m["role"] != "user"}


@settings(max_examples=40, deadline=None)
@given(st.lists(NUMBERED_RUN, min_size=1, max_size=3))
def test_calls_a_model_gave_one_id_are_messages_of_their_own(runs: list[list[Any]]) -> None:
    """Rule: a call's id is its own in its thread, whatever id the model gave it (`call_0` in
    every reply, or twice in one): its call and its result are each a message of the thread
    once, with the id they were streamed with."""
    streamed, messages = anyio.run(_runs, runs)
    ids = [m["id"] for m in messages]
    assert len(ids) == len(set(ids))
    assert streamed == {m["id"] for m in messages if m["role"] != "user"}
    calls = [call["id"] for m in messages for call in m["tool_calls"]]
    results = [m["call_id"] for m in messages if m["role"] == "tool"]
    assert len(calls) == len(set(calls)) and sorted(calls) == sorted(results)
