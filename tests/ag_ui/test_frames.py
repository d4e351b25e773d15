"""What a server writes of an AG-UI run (`frame_batches`): the same bytes as encoding each event
`translate_batches` gives, whatever the runtime events; text and reasoning deltas take a shorter
path there."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

from ag_ui.core import StateSnapshotEvent
from ag_ui.encoder import EventEncoder
from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents.adapters.ag_ui import encode_event, frame_batches, translate_batches
from pyox_agents.events import (
    ReasoningDelta,
    ReasoningStarted,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    SubagentStarted,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
)
from pyox_agents.state.frozen import freeze
from tests.ag_ui.helpers import run_input
from tests.frame_streams import EVENTS


async def _each(batches: Sequence[Sequence[RuntimeEvent]]) -> AsyncIterator[list[RuntimeEvent]]:
    for batch in batches:
        yield list(batch)


def _stamps_out(data: bytes) -> bytes:
    return re.sub(rb'"timestamp":\d+', b'"timestamp":0', data)


async def _both(batches: list[list[RuntimeEvent]], **fields: Any) -> tuple[bytes, bytes]:
    given_input = run_input(**fields)
    fast = b"".join([chunk async for chunk in frame_batches(given_input, _each(batches))])
    slow = b"".join([
        "".join(f"data: {encode_event(e)}\n\n" for e in batch).encode()
        async for batch in translate_batches(given_input, _each(batches))])
    return _stamps_out(fast), _stamps_out(slow)


_INPUTS = st.sampled_from([{}, {"protocolVersion": None}, {"parentRunId": 'p"1'},
                           {"threadId": "t\u2028é", "runId": "r,1"}])
"""The client: AG-UI 1.0, a 0.0.x one (no 1.0-only fields), one that names a parent run, ids
with characters JSON escapes or leaves as they are."""
_STARTS = st.builds(RunStarted, st.just("r"), st.just("t"),
                    st.sampled_from([{"items": []}, {"n": 2**70}, {"s": "é\u2028"}, None]))
"""The run's start, its state any JSON (an integer past 64 bits: only pydantic writes it)."""


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(EVENTS, min_size=1, max_size=6), max_size=8), st.booleans(), _INPUTS,
       _STARTS)
def test_frames_are_the_encoded_events_of_translate_batches(
        batches: list[list[RuntimeEvent]], started: bool, fields: dict[str, Any],
        start: RunStarted) -> None:
    """Every event, in order, as `encode_event` writes it, one chunk per batch: the text and
    reasoning deltas written directly included (any text: quotes, newlines, non-ASCII, U+2028),
    and the run's start and end written directly, for every kind of client."""
    if started:
        batches = [[start], *batches]
    fast, slow = asyncio.run(_both(batches, **fields))
    assert fast == slow


def test_a_subagents_delta_into_a_message_id_the_run_has_open_is_the_subagents() -> None:
    """Rule: a delta written directly is the run's own. A subagent's text, reasoning or
    arguments delta whose message (call) id the run's own open one has too keeps its
    `subagentRunId`, and its arguments are not the run's call's."""
    for started, delta in [(TextStarted, TextDelta), (ReasoningStarted, ReasoningDelta)]:
        batches: list[list[RuntimeEvent]] = [
            [RunStarted("r", "t", {})], [started("m1")],
            [SubagentStarted("sub-1", "c1", "helper", "t")], [started("m1", run_id="sub-1")],
            [delta("m1", "the subagent's", run_id="sub-1")], [delta("m1", "the run's")]]
        fast, slow = asyncio.run(_both(batches))
        assert fast == slow
        frames = [f for f in fast.split(b"\n\n") if b'_MESSAGE_CONTENT"' in f]
        (theirs,) = [f for f in frames if b"the subagent's" in f]
        (ours,) = [f for f in frames if b"the run's" in f]
        assert b'"subagentRunId":"sub-1"' in theirs and b"subagentRunId" not in ours
    calls: list[list[RuntimeEvent]] = [
        [RunStarted("r", "t", {})], [ToolCallStarted("c1", "look", "m1")],
        [SubagentStarted("sub-1", "c1", "helper", "t")],
        [ToolCallStarted("c1", "look", "m2", run_id="sub-1")],
        [ToolCallArgsDelta("c1", '"theirs"', run_id="sub-1")], [ToolCallArgsDelta("c1", "{}")],
        [RunFinished(answer=None, state={})]]
    fast, slow = asyncio.run(_both(calls))
    assert fast == slow
    (theirs,) = [f for f in fast.split(b"\n\n") if b'"TOOL_CALL_ARGS"' in f and b"theirs" in f]
    assert b'"subagentRunId":"sub-1"' in theirs


def test_a_tool_result_or_state_change_orjson_refuses_is_written_as_pydantic_writes_it(
        ) -> None:
    """Rule: a tool's result or state change goes out as the same bytes either way, also one
    the direct write refuses (an integer past 64 bits): pydantic writes it."""
    batches: list[list[RuntimeEvent]] = [
        [RunStarted("r", "t", {}), ToolCallStarted("c1", "look", "m1"),
         ToolCallArgsDelta("c1", "{}"), ToolCallEnded("c1", "look", {})],
        [ToolResult("c1", "look", result={"n": 2**70}),
         StateChanged([{"op": "add", "path": "/n", "value": 2**70}], {}, "c1", 1),
         StateChanged([{"op": "add", "path": "/s", "value": -(2**65)}], {}, "c1", 2)],
        [ToolResult("c2", "look", error="no such call"), RunFinished(answer=None, state={})]]
    fast, slow = asyncio.run(_both(batches))
    assert fast == slow
    assert b'"TOOL_CALL_RESULT"' in fast and b"1180591620717411303424" in fast


def test_a_run_of_text_deltas_is_written_in_order_one_chunk_per_batch() -> None:
    batches: list[list[RuntimeEvent]] = [[RunStarted("r", "t", {}), TextStarted("m")]]
    batches += [[TextDelta("m", f"t{i} ")] for i in range(20)]
    batches += [[TextEnded("m", "".join(f"t{i} " for i in range(20))),
                 RunFinished(answer=None, state={})]]

    async def chunks() -> list[bytes]:
        return [chunk async for chunk in frame_batches(run_input(), _each(batches))]

    written = asyncio.run(chunks())
    assert len(written) == len(batches)
    deltas = re.findall(
        rb'"TEXT_MESSAGE_CONTENT","timestamp":\d+,"messageId":"m","delta":"(t\d+ )"',
        b"".join(written))
    assert deltas == [f"t{i} ".encode() for i in range(20)]
    assert b'"MESSAGES_SNAPSHOT"' in written[-1] and b't19 ' in written[-1]


def test_a_token_that_cannot_be_written_fails_the_stream_not_the_run() -> None:
    """Rule: a delta with a lone surrogate (a remote agent's JSON may hold one; no UTF-8 stream
    can carry it) ends the stream with RUN_ERROR, after what was written before it."""

    async def batches() -> AsyncIterator[list[RuntimeEvent]]:
        yield [RunStarted("r", "t", {}), TextStarted("m1")]
        yield [TextDelta("m1", "ok ")]
        yield [TextDelta("m1", "bad \udc00")]
        yield [TextDelta("m1", "after")]

    async def written() -> list[bytes]:
        return [chunk async for chunk in frame_batches(run_input(), batches())]

    frames = b"".join(asyncio.run(written()))
    types = re.findall(rb'^data: \{"type":"(\w+)"', frames, re.MULTILINE)
    assert types == [b"RUN_STARTED", b"STATE_SNAPSHOT", b"TEXT_MESSAGE_START",
                     b"TEXT_MESSAGE_CONTENT", b"TEXT_MESSAGE_END", b"RUN_ERROR"]
    assert b"after" not in frames


_TEXT = st.text(st.characters(exclude_categories=("Cs",)) | st.sampled_from(  # (surrogates:
    "\u2028\u2029\x7f\x1f\"\\/\ufeff"), max_size=6)  # refused by freeze)
_SCALARS = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
            | st.floats(allow_nan=False, allow_infinity=False) | _TEXT)
_STATES = st.dictionaries(_TEXT, st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner,
                                                                         max_size=4),
    max_leaves=16), max_size=5)


@given(_STATES, st.none() | st.integers(0, 2**40), st.none() | st.integers(1, 9),
       st.none() | _TEXT, st.none() | _STATES)
@settings(max_examples=400, deadline=None)
def test_a_snapshot_is_written_as_the_library_writes_it(
        state: dict[str, Any], timestamp: int | None, version: int | None,
        subagent: str | None, raw: dict[str, Any] | None) -> None:
    """Rule: a `STATE_SNAPSHOT` (its state written apart, by orjson: a large state's intake)
    is byte for byte what `ag_ui`'s `EventEncoder` writes of the same event with the state
    as plain JSON: any value, any string (U+2028, DEL, control characters), integers past 64
    bits, metadata, a subagent's run id, a raw event."""
    fields: dict[str, Any] = {"timestamp": timestamp, "subagent_run_id": subagent,
                              "raw_event": raw}
    if version is not None:
        fields["metadata"] = {"stateVersion": version}
    ours = encode_event(StateSnapshotEvent(snapshot=freeze(state), **fields))
    library = EventEncoder().encode(StateSnapshotEvent(snapshot=state, **fields))
    assert f"data: {ours}\n\n" == library


def test_a_snapshot_with_a_lone_surrogate_beside_its_state_is_written_escaped() -> None:
    """Rule: as for every event, a lone surrogate in a snapshot's other fields (its metadata,
    its subagent's run id) is written as its JSON escape, not an error."""
    for fields in ({"metadata": {"note": "\ud800"}}, {"subagent_run_id": "s\udfff"}):
        text = encode_event(StateSnapshotEvent(snapshot=freeze({"a": [1]}), **fields))
        assert json.loads(text)["snapshot"] == {"a": [1]}
        assert "\\ud800" in text or "\\udfff" in text
