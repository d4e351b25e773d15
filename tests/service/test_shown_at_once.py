"""A run's events shown at once as the run emits them (while its reader waits, nothing queued)
or through the reader's task: the same events, each once, in the order the run emitted them;
so too the text deltas of its reply handed over as text (`put_text`), taken or refused."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents.events import RuntimeEvent, StateChanged, TextDelta
from pyox_agents.runtime._handle import Outbox


async def _shown(steps: list[tuple[int, bool, int]], *,
                 as_text: bool = False) -> tuple[list[str], int, int]:
    """Emit batches (some the direct path refuses, as a state change), yielding to the loop
    between them as `steps` say, and a slow reader; what was shown, in order, how many
    batches went the direct way, and how many of those as text. `as_text`: a batch of one
    delta is put as its text, which the direct way refuses one time in three (it then comes
    as a `TextDelta`)."""
    outbox = Outbox()
    shown: list[str] = []
    direct = 0
    offered = 0
    as_texts = 0

    def show_text(message_id: str, delta: str) -> bool:
        nonlocal direct, offered, as_texts
        offered += 1
        if offered % 3 == 0:
            return False
        direct += 1
        as_texts += 1
        shown.append(delta)
        return True

    if as_text:
        outbox.direct_text = show_text

    def show(batch: Sequence[RuntimeEvent]) -> bool:
        nonlocal direct
        if any(isinstance(event, StateChanged) for event in batch):
            return False
        direct += 1
        shown.extend(event.delta for event in batch if isinstance(event, TextDelta))
        return True

    outbox.direct = show

    async def reader() -> None:
        while True:
            try:
                batch = await outbox.next()
            except StopAsyncIteration:
                return
            await asyncio.sleep(0)  # the reader is slow: batches queue up meanwhile
            shown.extend(event.delta for event in batch if isinstance(event, TextDelta))

    task = asyncio.create_task(reader())
    await asyncio.sleep(0)
    for index, (size, refused, pause) in enumerate(steps):
        batch: list[RuntimeEvent] = [TextDelta("m", f"{index}.{i}") for i in range(size)]
        if refused:
            batch.append(StateChanged((), {}, "call", 1))
        if as_text and len(batch) == 1:
            outbox.put_text("m", f"{index}.0")
        else:
            outbox.put(batch)
        for _ in range(pause):
            await asyncio.sleep(0)
    outbox.close()
    await task
    return shown, direct, as_texts


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.booleans(), st.integers(0, 3)), max_size=25),
       st.booleans())
def test_events_shown_at_once_keep_the_order_the_run_emitted_them_in(
        steps: list[tuple[int, bool, int]], as_text: bool) -> None:
    shown, _, _ = asyncio.run(_shown(steps, as_text=as_text))
    assert shown == [f"{index}.{i}" for index, (size, _, _) in enumerate(steps)
                     for i in range(size)]


def test_a_run_that_emits_while_its_reader_waits_is_shown_without_the_readers_task() -> None:
    steps = [(1, False, 3)] * 20  # paced tokens: the reader waits for each
    shown, direct, _ = asyncio.run(_shown(steps))
    assert len(shown) == 20 and direct == 20


def test_a_token_put_as_text_is_shown_at_once_or_else_comes_as_its_event() -> None:
    """Paced tokens put as their text while the reader waits: two in three are taken by the
    text lane, the third (refused) comes through `show` as a `TextDelta`; none is lost."""
    steps = [(1, False, 3)] * 30
    shown, direct, as_texts = asyncio.run(_shown(steps, as_text=True))
    assert shown == [f"{index}.0" for index in range(30)]
    assert (direct, as_texts) == (30, 20)  # the 10 refused as text: shown at once as events
