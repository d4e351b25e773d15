"""A live run's events are a log the run appends to and any number of readers pull from an index:
every reader, early or late, or going on after the last index it got, reads exactly the events
after that index, in the order the run appended them, each with its index; a reader that stops
stops only itself."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents.events import RuntimeEvent, StepStarted, TextDelta
from pyox_agents.service._live import LiveRun

BATCHES = st.lists(st.lists(st.integers(0, 999), min_size=1, max_size=4), max_size=12)
"""The run's batches: each number a text delta."""


@settings(max_examples=150, deadline=None)
@given(batches=BATCHES, joins=st.lists(st.tuples(st.integers(0, 12), st.integers(-1, 30),
                                                 st.integers(0, 12)), max_size=5))
def test_every_reader_gets_the_events_after_its_index_in_order(
        batches: list[list[int]], joins: list[tuple[int, int, int]]) -> None:
    """`joins`: a reader joins after batch `when`, after index `after`, and stops after
    reading `stop` batches (or at the end)."""
    async def scenario() -> None:
        live = LiveRun("t", "a")
        events: list[RuntimeEvent] = [TextDelta("m", str(n)) for batch in batches for n in batch]
        got: dict[int, list[tuple[int, RuntimeEvent]]] = {}

        async def reader(number: int, after: int, stop: int) -> None:
            seen = got.setdefault(number, [])
            reads = 0
            async for first, batch in live.read(after):
                seen.extend(enumerate(batch, start=first))
                reads += 1
                if reads == stop and stop:
                    break

        tasks: list[asyncio.Task[None]] = []
        for when, batch in enumerate([*batches, None]):
            for number, (join, after, stop) in enumerate(joins):
                if join == when:
                    tasks.append(asyncio.create_task(reader(number, after, stop)))
            await asyncio.sleep(0)
            if batch is not None:
                live.add([TextDelta("m", str(n)) for n in batch])
            await asyncio.sleep(0)
        live.end()
        await asyncio.gather(*tasks)
        for number, (_, after, stop) in enumerate(joins):
            if number not in got:
                continue
            expected = list(enumerate(events))[max(after + 1, 0):]
            seen = got[number]
            assert seen == expected[:len(seen)]
            if not stop:
                assert seen == expected  # read to the end: every event after its index
        assert live.followers == 0

    asyncio.run(scenario())


def test_a_reader_waits_for_the_next_event_and_ends_with_the_run() -> None:
    async def scenario() -> list[list[RuntimeEvent]]:
        live = LiveRun("t", "a")
        read: list[list[RuntimeEvent]] = []

        async def reader() -> None:
            async for batch in live.follow_batches():
                read.append(batch)

        task = asyncio.create_task(reader())
        await asyncio.sleep(0)
        assert live.followers == 1
        live.add([StepStarted(0)])
        await asyncio.sleep(0)
        live.add([TextDelta("m", "a"), TextDelta("m", "b")])
        live.end()
        await task
        await live.ended()  # (ended already: at once)
        return read

    assert asyncio.run(scenario()) == [[StepStarted(0)],
                                       [TextDelta("m", "a"), TextDelta("m", "b")]]


KINDS = st.lists(st.one_of(
    st.tuples(st.just("text"), st.sampled_from(["m1", "m2"]), st.text(max_size=4)),
    st.tuples(st.just("sub"), st.just("m9"), st.text(max_size=3)),
    st.tuples(st.just("step"), st.just(""), st.just("")),
), min_size=1, max_size=300)


@settings(max_examples=120, deadline=None)
@given(kinds=KINDS, afters=st.lists(st.integers(-1, 310), min_size=1, max_size=4),
       batch=st.integers(1, 7))
def test_deltas_kept_as_pieces_of_the_reply_read_as_they_were(
        kinds: list[tuple[str, str, str]], afters: list[int], batch: int) -> None:
    """The run's text deltas older than the log's tail are kept as pieces of its reply's text,
    which the run keeps (`LiveRun.texts`): a reader from any index still reads each event as the
    run appended it, a subagent's deltas and the others in their places."""
    texts: dict[str, list[str]] = {}
    events: list[RuntimeEvent] = []
    for kind, message, delta in kinds:
        if kind == "text":
            events.append(TextDelta(message, delta))
        elif kind == "sub":
            events.append(TextDelta(message, delta, "sub-run"))
        else:
            events.append(StepStarted(len(events)))
    live = LiveRun("t", "a", texts=lambda message: (
        None if message == "m9" else lambda: "".join(texts.get(message, []))))
    for start in range(0, len(events), batch):
        added = events[start:start + batch]
        for event in added:  # the run keeps its reply's text as it streams it
            if isinstance(event, TextDelta) and event.run_id is None:
                texts.setdefault(event.message_id, []).append(event.delta)
        live.add(added)
    live.end()

    async def read(after: int) -> list[tuple[int, RuntimeEvent]]:
        return [(first + n, event) async for first, batch in live.read(after)
                for n, event in enumerate(batch)]

    for after in afters:
        assert asyncio.run(read(after)) == list(enumerate(events))[max(after + 1, 0):]
    assert live.events == events
