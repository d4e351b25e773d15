"""A live run merges the deltas its followers have read, so an open run's memory does not grow
with each token it streams; every follower, early or late, still reads the same text in the
same order as the run emitted it, with every other event exactly once and in its place."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents.events import (
    ReasoningDelta,
    RuntimeEvent,
    StepStarted,
    TextDelta,
    ToolCallArgsDelta,
)
from pyox_agents.service._live import LiveRun
from pyox_agents.service._merge import MERGED_CHARS, merge_deltas
from pyox_agents.state._pieces import Pieces


def _normalized(events: list[RuntimeEvent]) -> list[tuple[Any, ...]]:
    """The events as a reader sees them: consecutive deltas of one part (type, message or
    call, run) read as one text; every other event as it is."""
    out: list[tuple[Any, ...]] = []
    for event in events:
        if isinstance(event, TextDelta | ReasoningDelta | ToolCallArgsDelta):
            key = (type(event).__name__, getattr(event, "message_id", None),
                   getattr(event, "call_id", None), event.run_id)
            if out and out[-1][0] == "delta" and out[-1][1] == key:
                out[-1] = ("delta", key, out[-1][2] + event.delta)
            else:
                out.append(("delta", key, event.delta))
        else:
            out.append(("event", event))
    return out


_deltas = st.one_of(
    st.builds(TextDelta, st.sampled_from(["m1", "m2"]), st.text(max_size=40),
              st.sampled_from([None, "sub"])),
    st.builds(ReasoningDelta, st.just("m1"), st.text(max_size=40)),
    st.builds(ToolCallArgsDelta, st.sampled_from(["c1", "c2"]), st.text(max_size=40)),
)
_events = st.one_of(_deltas, _deltas, _deltas, st.builds(StepStarted, st.integers(0, 3)))


class _Replies:
    """What the runtime keeps of a run's own replies (`RunHandle.text_of`): each reply's text
    as it streams, given for the reply that streams now (the latest own delta's), None for
    others; a text once given keeps giving all of it."""

    def __init__(self) -> None:
        self.texts: dict[str, Pieces] = {}
        self.streaming: str | None = None

    def stream(self, batch: list[RuntimeEvent]) -> None:
        for event in batch:
            if isinstance(event, TextDelta) and event.run_id is None:
                self.texts.setdefault(event.message_id, Pieces()).add(event.delta)
                self.streaming = event.message_id

    def text_of(self, message_id: str) -> Any:
        return self.texts[message_id].text if message_id == self.streaming else None


def _followed(batches: list[list[RuntimeEvent]], followers: list[tuple[int, int, bool, bool]],
              spans: bool, as_text: str) -> tuple[list[list[RuntimeEvent]], list[RuntimeEvent]]:
    """Run `batches` through a live run read by `followers` (joins after batch, lag, leaves,
    takes batches at once); what each follower that stayed read, and what the run kept.
    `as_text` ("takes", "refuses some"): a batch of one token of the run's own reply is
    offered as its text first (`add_text`, as the run's outbox does), to followers whose
    text lane takes it or refuses some (it then comes to `add` as its event)."""

    def take_text(seen: list[RuntimeEvent], message_id: str, delta: str) -> bool:
        if as_text == "refuses some" and len(delta) % 3 == 0:
            return False  # having taken nothing
        seen.append(TextDelta(message_id, delta))
        return True

    async def main() -> tuple[list[list[RuntimeEvent]], list[RuntimeEvent]]:
        live = LiveRun("t", "a")
        replies = _Replies()
        if spans:
            live.texts = replies.text_of
        seen: list[list[RuntimeEvent]] = [[] for _ in followers]
        tasks: dict[int, asyncio.Task[None]] = {}

        async def follow(index: int, lag: int, at_once: bool) -> None:
            following = live.follow_batches()
            if at_once:
                following.at_once = seen[index].extend
                if as_text != "no":
                    following.at_once_text = lambda message_id, delta: take_text(
                        seen[index], message_id, delta)
            async for batch in following:
                seen[index].extend(batch)
                for _ in range(lag):
                    await asyncio.sleep(0)

        for number, batch in enumerate(batches):
            for index, (joins, lag, leaves, at_once) in enumerate(followers):
                if joins == number:
                    tasks[index] = asyncio.create_task(follow(index, lag, at_once))
                if leaves and joins + 7 == number and index in tasks:
                    tasks[index].cancel()
            replies.stream(batch)
            if not (as_text != "no" and len(batch) == 1 and type(batch[0]) is TextDelta
                    and batch[0].run_id is None
                    and live.add_text(batch[0].message_id, batch[0].delta)):
                live.add(batch)
            await asyncio.sleep(0)
        for index, (_, lag, _, at_once) in enumerate(followers):
            if index not in tasks:  # joins after the run's last batch
                tasks[index] = asyncio.create_task(follow(index, lag, at_once))
        live.end()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        left = [index for index, (joins, _, leaves, _) in enumerate(followers)
                if leaves and joins + 7 < len(batches)]
        return [events for index, events in enumerate(seen) if index not in left], live.events

    return asyncio.run(asyncio.wait_for(main(), 30))  # a follower left waiting: fails


_followers = st.lists(st.tuples(st.integers(0, 120), st.integers(0, 3), st.booleans(),
                                st.booleans()), max_size=4)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_events, max_size=4), max_size=120),  # empty batches too
       _followers, st.booleans(), st.sampled_from(["no", "takes", "refuses some"]))
def test_every_follower_reads_the_text_the_run_emitted(
        batches: list[list[RuntimeEvent]], followers: list[tuple[int, int, bool, bool]],
        spans: bool, as_text: str) -> None:
    """Followers join after any batch, read at their own pace (some fall behind, one may go
    away, some take batches at once while they wait): each reads the run's events from the
    first, with the same text, in order; so too when the run's own replies are kept as spans
    of the text the runtime keeps (`spans`), and when each token of its own reply is offered
    as its text first (`as_text`)."""
    emitted = [event for batch in batches for event in batch]
    seen, kept = _followed(batches, followers, spans, as_text)
    for events in seen:
        assert _normalized(events) == _normalized(emitted)
    assert _normalized(kept) == _normalized(emitted)


def _streamed(steps: list[str]) -> list[list[RuntimeEvent]]:
    """A reply streamed token by token (each in a batch of its own, as a model streams),
    with now and then another event, two tokens together, or the next reply."""
    message, batches = "m1", []
    for number, step in enumerate(steps):
        token = TextDelta(message, f"{number}.")
        if step == "other":
            batches.append([StepStarted(number % 4)])
        elif step == "two":
            batches.append([token, TextDelta(message, f"{number}b.")])
        elif step == "next":
            message = f"m{number}"
            batches.append([TextDelta(message, f"{number}.")])
        else:
            batches.append([token])
    return batches


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["token"] * 12 + ["other", "two", "next"]), min_size=20,
                max_size=200),
       _followers, st.sampled_from(["takes", "refuses some"]))
def test_tokens_offered_as_text_reach_every_follower_once_in_order(
        steps: list[str], followers: list[tuple[int, int, bool, bool]], as_text: str) -> None:
    """A reply's tokens offered as their text (the lane of a slow stream): the span at the
    end takes those its one follower took at once (or every one, with none); every follower,
    early, late or gone, reads each token once and in order, and the run keeps them all."""
    batches = _streamed(steps)
    emitted = [event for batch in batches for event in batch]
    seen, kept = _followed(batches, followers, True, as_text)
    for events in seen:
        assert _normalized(events) == _normalized(emitted)
    assert _normalized(kept) == _normalized(emitted)


def test_a_long_streamed_message_is_kept_in_few_events() -> None:
    """2,000 tokens read as they come are kept as a few pieces of up to MERGED_CHARS
    characters (plus the last few tokens not merged yet), not 2,000 events."""

    async def main() -> LiveRun:
        live = LiveRun("t", "a")
        read: list[str] = []

        async def follow() -> None:
            async for event in live.follow():
                assert isinstance(event, TextDelta)
                read.append(event.delta)

        task = asyncio.create_task(follow())
        await asyncio.sleep(0)
        for i in range(2000):
            live.add([TextDelta("m", f"token{i:04d} ")])
            await asyncio.sleep(0)
        live.end()
        await task
        assert "".join(read) == "".join(f"token{i:04d} " for i in range(2000))
        return live

    live = asyncio.run(main())
    text = "".join(f"token{i:04d} " for i in range(2000))
    assert len(live.events) <= len(text) // MERGED_CHARS + 1 + 16
    assert "".join(e.delta for e in live.events if isinstance(e, TextDelta)) == text
    assert all(len(e.delta) < MERGED_CHARS + 20 for e in live.events
               if isinstance(e, TextDelta))


def test_a_reply_of_the_run_is_kept_once_as_a_span_of_its_text() -> None:
    """The deltas of the run's own reply that every follower read are kept as one span of the
    text the runtime keeps anyway (no copy of it); a follower that joins late reads them as
    one delta, and the run's events give the same text."""

    async def main() -> tuple[LiveRun, _Replies, list[RuntimeEvent]]:
        live = LiveRun("t", "a")
        replies = _Replies()
        live.texts = replies.text_of

        async def follow() -> None:
            async for _ in live.follow():
                pass

        task = asyncio.create_task(follow())
        await asyncio.sleep(0)
        for i in range(2000):
            batch: list[RuntimeEvent] = [TextDelta("m", f"token{i:04d} ")]
            replies.stream(batch)
            live.add(batch)
            await asyncio.sleep(0)
        late = [batch async for batch in _first_batch(live)]
        live.end()
        await task
        return live, replies, late[0]

    live, replies, late = asyncio.run(main())
    text = "".join(f"token{i:04d} " for i in range(2000))
    spans = [event for event in live._kept if type(event).__name__ == "_Span"]
    assert len(spans) == 1 and len(live._kept) <= 1 + 16
    assert spans[0].text() is replies.texts["m"].text()  # the runtime's copy, not one of its own
    assert isinstance(late[0], TextDelta) and len(late) == len(live._kept)
    assert "".join(e.delta for e in late if isinstance(e, TextDelta)) == text
    assert "".join(e.delta for e in live.events if isinstance(e, TextDelta)) == text


def test_a_token_every_follower_took_at_once_is_not_kept() -> None:
    """While the run's reply streams to followers that take each batch at once (a server's
    responses), the reply's span takes each token as it comes, from the first: the run keeps
    no event per token, not even until the next merge."""

    async def main() -> tuple[list[int], str, str]:
        live = LiveRun("t", "a")
        replies = _Replies()
        live.texts = replies.text_of
        taken: list[RuntimeEvent] = []
        following = live.follow_batches()
        following.at_once = taken.extend

        async def follow() -> None:
            async for batch in following:
                taken.extend(batch)

        task = asyncio.create_task(follow())
        await asyncio.sleep(0)
        sizes = []
        for i in range(500):
            batch: list[RuntimeEvent] = [TextDelta("m", f"token{i:04d} ")]
            replies.stream(batch)
            live.add(batch)
            sizes.append(len(live._kept))
        late = await anext(_first_batch(live))
        live.end()
        await task
        read = "".join(e.delta for e in taken if isinstance(e, TextDelta))
        return sizes, read, "".join(e.delta for e in late if isinstance(e, TextDelta))

    sizes, read, late = asyncio.run(main())
    text = "".join(f"token{i:04d} " for i in range(500))
    assert read == late == text
    assert set(sizes) == {1}  # the span alone, from the reply's first token on


async def _first_batch(live: LiveRun) -> Any:
    """A follower that joins now: the first batch it reads."""
    following = live.follow_batches()
    yield await anext(following)
    following.close()


def test_a_shared_run_merges_only_what_the_store_has_logged() -> None:
    """Events another process has not been sent yet (past `shared`) stay as they are: the log
    must get each exactly as emitted, and `shared` keeps counting the same events."""
    live = LiveRun("t", "a", run_key="k")
    for i in range(40):
        live.add([TextDelta("m", f"{i} ")])
    assert len(live.events) == 40  # nothing logged: nothing merged
    live.shared = len(live.events)
    live.add([TextDelta("m", "last")])
    assert live.shared == len(live.events) - 1  # the logged ones merged, the new one not
    assert [e.delta for e in live.events[live.shared:]] == ["last"]  # type: ignore[attr-defined]
    assert "".join(e.delta for e in live.events) == (  # type: ignore[attr-defined]
        "".join(f"{i} " for i in range(40)) + "last")


def test_deltas_of_other_parts_or_runs_are_not_merged_together() -> None:
    events: list[RuntimeEvent] = [TextDelta("m", "a"), TextDelta("m", "b", run_id="sub"),
                                  TextDelta("m", "c"), ReasoningDelta("m", "d"),
                                  ToolCallArgsDelta("c", "e"), ToolCallArgsDelta("c", "f"),
                                  StepStarted(1), TextDelta("m", "g"), TextDelta("m", "h")]
    assert merge_deltas(events) == [TextDelta("m", "a"), TextDelta("m", "b", run_id="sub"),
                                    TextDelta("m", "c"), ReasoningDelta("m", "d"),
                                    ToolCallArgsDelta("c", "ef"), StepStarted(1),
                                    TextDelta("m", "gh")]


def _greedy_pieces(events: list[RuntimeEvent]) -> list[RuntimeEvent]:
    """The merge rule, written plainly: a piece takes the next delta of its part (type,
    message or call, run) while it holds fewer than MERGED_CHARS characters."""

    def part(event: Any) -> tuple[type, str, str | None] | None:
        if not isinstance(event, TextDelta | ReasoningDelta | ToolCallArgsDelta):
            return None
        ident = event.call_id if isinstance(event, ToolCallArgsDelta) else event.message_id
        return type(event), ident, event.run_id

    out: list[Any] = []
    for event in events:
        key = part(event)
        if key is not None and out and part(out[-1]) == key \
                and len(out[-1].delta) < MERGED_CHARS:
            out[-1] = key[0](key[1], out[-1].delta + event.delta, key[2])  # type: ignore[attr-defined]
        else:
            out.append(event)
    return out


_long_runs = st.lists(st.one_of(
    st.lists(st.builds(TextDelta, st.just("m"), st.text(min_size=1, max_size=400)),
             max_size=20),  # one message's tokens: most merges, some past MERGED_CHARS
    st.lists(_events, max_size=4)), max_size=6)


@settings(max_examples=300, deadline=None)
@given(_long_runs)
def test_merges_cut_pieces_by_the_rule(groups: list[list[RuntimeEvent]]) -> None:
    """Each piece takes the next delta of its part while it holds fewer than MERGED_CHARS
    characters: the same pieces whether the events are one message's tokens (merged by a
    few passes in C) or mixed."""
    events = [event for group in groups for event in group]
    assert merge_deltas(events) == _greedy_pieces(events)


@given(st.lists(st.text(max_size=30), max_size=200))
def test_pieces_give_back_the_text_added(pieces: list[str]) -> None:
    text = Pieces()
    for piece in pieces:
        text.add(piece)
    assert text.text() == "".join(pieces)
    assert bool(text) == bool(pieces)


@given(st.lists(st.text(max_size=30), max_size=100), st.lists(st.text(max_size=30), max_size=40))
def test_pieces_asked_twice_give_one_string_and_go_on(first: list[str], more: list[str]) -> None:
    """`text()` keeps what it joined: asked again, the same string (one copy held, not two);
    pieces added after it come after it."""
    text = Pieces()
    for piece in first:
        text.add(piece)
    whole = text.text()
    assert text.text() is whole and whole == "".join(first)
    for piece in more:
        text.add(piece)
    assert text.text() == "".join(first + more)
    text.adopt("".join(first + more))
    assert text.text() == "".join(first + more)


@given(st.lists(st.text(st.characters(codec=None, categories=["Cs", "Lu", "So"]), max_size=8),
                max_size=40))
def test_pieces_keep_any_text_as_it_was_added(pieces: list[str]) -> None:
    """Lone surrogates and every other code point come back as they were added (the text is
    kept as UTF-8 while it grows)."""
    text = Pieces()
    for piece in pieces:
        text.add(piece)
    assert text.text() == "".join(pieces)
