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
