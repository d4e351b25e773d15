"""The AI SDK frame stream's lane for a token of the run's own reply (`AtOnceText`): a token
taken as its text is written as the `text-delta` frame the event path writes of its `TextDelta`,
one the lane refuses comes as that event, and nothing the lane is handed raises into the run's
task that hands it. The source here plays a live run's follower as a server's response reads it:
each batch handed at once, each token offered to the lane first."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents.adapters import ai_sdk
from pyox_agents.adapters.ai_sdk import Chat
from pyox_agents.events import (
    ReasoningDelta,
    ReasoningStarted,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
)
from tests.frame_streams import EVENTS, IDS, TEXTS, WaitingFollower

Token = tuple[str, str]
Step = list[RuntimeEvent] | Token

_STEPS = st.lists(st.one_of(st.lists(EVENTS, min_size=1, max_size=4),
                            st.tuples(IDS, TEXTS), st.tuples(IDS, TEXTS)), max_size=24)


async def _through_the_lane(steps: list[Step], refuse: Callable[[int], bool]
                            ) -> tuple[bytes, int]:
    """The bytes written, and how many tokens the lane took (a token `refuse(i)` names is
    not offered to it: it comes as its event, as from a follower that could not take it)."""
    source = WaitingFollower()
    frames = ai_sdk.frame_batches(Chat(id="c1"), source)
    written: list[bytes] = []
    frames.at_once = written.append
    assert source.at_once is not None and source.at_once_text is not None
    taken = 0
    for index, step in enumerate(steps):
        if isinstance(step, tuple):
            if not refuse(index) and source.at_once_text(*step):
                taken += 1
                continue
            step = [TextDelta(*step)]
        source.at_once(step)
    written += [chunk async for chunk in frames]
    return b"".join(written), taken


async def _as_events(steps: list[Step]) -> bytes:
    async def events() -> AsyncIterator[RuntimeEvent]:
        for step in steps:
            for event in [TextDelta(*step)] if isinstance(step, tuple) else step:
                yield event

    return b"".join([frame async for frame in ai_sdk.encode(
        ai_sdk.translate(Chat(id="c1"), events()))])


@settings(max_examples=300, deadline=None)
@given(_STEPS, st.booleans(), st.integers(0, 3))
def test_tokens_taken_as_text_write_the_frames_their_events_write(
        steps: list[Step], started: bool, refused: int) -> None:
    """Rule: the lane changes nothing a client reads. Whatever came before (a message not yet
    open, one already ended, a subagent's, the run's end), each token the lane takes is the
    frame its event would have been; the lane refuses every token it cannot write so."""
    if started:
        steps = [[RunStarted("r", "t", {"items": []})], [TextStarted("m1")], *steps]
    lane, _ = asyncio.run(_through_the_lane(steps, lambda index: index % 4 < refused))
    assert lane == asyncio.run(_as_events(steps))


def test_a_paced_reply_goes_through_the_lane_token_by_token() -> None:
    """Rule: with its text open, every token of the run's own reply is taken as its text."""
    steps: list[Step] = [[RunStarted("r", "t", {})], [TextStarted("m1")]]
    steps += [("m1", f"t{i} ") for i in range(50)]
    steps += [[TextEnded("m1", "".join(f"t{i} " for i in range(50))),
               RunFinished(answer=None, state={})]]
    written, taken = asyncio.run(_through_the_lane(steps, lambda index: False))
    assert taken == 50
    assert written == asyncio.run(_as_events(steps))
    assert b'data: {"type":"text-delta","id":"m1","delta":"t49 "}\n\n' in written


def test_a_token_that_cannot_be_written_ends_the_stream_as_failed_not_the_run() -> None:
    """Rule: nothing raises into the run's task. A lone surrogate (which no UTF-8 stream can
    carry) is refused by the lane; as an event, it ends the stream as a failed run's."""
    steps: list[Step] = [[RunStarted("r", "t", {})], [TextStarted("m1")], ("m1", "ok "),
                         ("m1", "bad \udc00"), ("m1", "after")]
    written, taken = asyncio.run(_through_the_lane(steps, lambda index: False))
    assert taken == 1
    types = [frame.split('"type":"', 1)[1].split('"', 1)[0] if frame != "data: [DONE]" else "DONE"
             for frame in written.decode().split("\n\n") if frame]
    assert types == ["start", "data-state", "text-start", "text-delta", "text-end",
                     "data-run-error", "error", "finish", "DONE"]
    assert b'"delta":"ok "' in written and b"after" not in written


def test_a_subagents_delta_into_a_message_id_the_run_has_open_writes_nothing() -> None:
    """Rule: a delta written directly is the run's own. A subagent's text or reasoning delta
    whose message id the run's own open part has too gives no chunk (its answer is the tool's
    output), as its event gives none."""
    for started, delta in [(TextStarted, TextDelta), (ReasoningStarted, ReasoningDelta)]:
        steps: list[Step] = [[RunStarted("r", "t", {})], [started("m1")],
                             [started("m1", run_id="sub-1")],
                             [delta("m1", "the subagent's", run_id="sub-1")],
                             [delta("m1", "the run's")]]
        written, _ = asyncio.run(_through_the_lane(steps, lambda index: False))
        assert written == asyncio.run(_as_events(steps))
        assert b"the subagent's" not in written and b"the run's" in written


def test_a_calls_arguments_written_piece_by_piece_are_kept_for_its_end() -> None:
    """Rule: a piece of a call's arguments written directly is kept as its event's would be:
    the call's end checks the whole text (a call whose text is no JSON object ends with
    `tool-input-error`, its text in it)."""
    steps: list[Step] = [[RunStarted("r", "t", {})], [ToolCallStarted("c1", "look", "m1")],
                         [ToolCallArgsDelta("c1", '{"q": ')], [ToolCallArgsDelta("c1", '"x"}')],
                         [ToolCallEnded("c1", "look", {"q": "x"})],
                         [ToolCallStarted("c2", "look", "m1")], [ToolCallArgsDelta("c2", "no ")],
                         [ToolCallArgsDelta("c2", "json")], [ToolCallEnded("c2", "look", {})],
                         [RunFinished(answer=None, state={})]]
    written, _ = asyncio.run(_through_the_lane(steps, lambda index: False))
    assert written == asyncio.run(_as_events(steps))
    assert b'"type":"tool-input-available","toolCallId":"c1"' in written
    assert b'"type":"tool-input-error","toolCallId":"c2","toolName":"look","input":"no json"' \
        in written
