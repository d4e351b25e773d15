"""A run's runtime events as a stream of AG-UI events, a batch at a time (`Translation` makes
each batch's events): `translate`, `translate_batches`, and `Translated`, which a server writes
(`frame_batches`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence
from typing import Any, Generic, TypeVar

from ag_ui.core import BaseEvent, RunAgentInput

from pyox_agents.adapters._translating import Translating
from pyox_agents.adapters.ag_ui._events import StreamInput, Translation
from pyox_agents.adapters.ag_ui._open import now_ms
from pyox_agents.events import RuntimeEvent, TextDelta

__all__ = ["Translated", "stamped", "translate", "translate_batches"]

_log = logging.getLogger(__name__)

T = TypeVar("T")
U = TypeVar("U")


async def translate(run_input: RunAgentInput | StreamInput,
                    events: AsyncIterable[RuntimeEvent]
                    ) -> AsyncIterator[BaseEvent]:
    """The AG-UI events of one run, from its runtime events.

    The stream opens with `RUN_STARTED{threadId, runId (the client's), parentRunId (the
    client's, if it sent one), protocolVersion "1.0"}`
    and a `STATE_SNAPSHOT` of the state the run starts from (its frozen version: read-only,
    `thaw` gives an editable copy), and ends with exactly one of
    `RUN_FINISHED` (after a `MESSAGES_SNAPSHOT`) and `RUN_ERROR`, with everything it opened
    closed before. Every event carries a `timestamp` in milliseconds. The 1.0-only fields
    (`protocolVersion`, `pendingToolCallIds`, the cancelled outcome) go only to a client whose
    `run_input` declares `protocolVersion` 1.0 or later (`declares_1_0`).
    """
    async for batch in translate_batches(run_input, ((event,) async for event in events)):
        for out in batch:
            yield out


async def translate_batches(run_input: RunAgentInput | StreamInput,
                            batches: AsyncIterable[Sequence[RuntimeEvent]], *, restore: bool = False
                            ) -> AsyncIterator[list[BaseEvent]]:
    """`translate`, a batch at a time: the AG-UI events of each batch of runtime events.

    A server writes each batch in one go; the events and their order are `translate`'s.
    `restore` (a connect): a `MESSAGES_SNAPSHOT` of `run_input.messages` follows `RUN_STARTED`;
    so it does for a resume, whose results answer calls an earlier run of the thread made.
    """
    async for out in Translated(run_input, batches, stamped, list, restore=restore):
        yield out


class Translated(Translating[Any, U], Generic[T, U]):
    """`translate_batches`, each AG-UI event stamped and passed to `write`, each batch's
    written events to `whole`: what the batch is yielded as (a list, SSE bytes...). It ends
    after the run's terminal event (`RUN_ERROR` if the runtime's stream ends before it, or if
    reading or translating it raises). A subclass may read other batches (`NumberedFrames`: a
    run's log, each batch with the index of its first event) and end the same way.

    `delta`, when given, writes the JSON of a text delta of the stream's own run into a
    message already open (most of a stream) straight from the runtime event
    (`Translation.text_json`), without an event object: `write` of the same
    `TEXT_MESSAGE_CONTENT` must give what `delta` gives of its JSON.
    """

    def __init__(self, run_input: RunAgentInput | StreamInput,
                 batches: AsyncIterable[Any], write: Callable[[BaseEvent], T],
                 whole: Callable[[list[T]], U], *, restore: bool = False,
                 delta: Callable[[str], T] | None = None) -> None:
        super().__init__(batches)
        self._translation = Translation(run_input, restore=restore)
        self._write = write
        self._whole = whole
        self._delta = delta

    def _translated(self, batch: Any) -> U | None:
        translation, write, delta = self._translation, self._write, self._delta
        out: list[T] = []
        events: Sequence[RuntimeEvent] = batch
        for event in events:
            if delta is not None and type(event) is TextDelta and event.run_id is None \
                    and (text := translation.text_json(event.message_id, event.delta)):
                out.append(delta(text))
                continue
            out.extend(write(stamped(e)) for e in translation.on(event))
        self._over = translation.ended
        return self._whole(out) if out else None

    def _last(self) -> U | None:
        rest = [self._write(stamped(e)) for e in self._translation.incomplete()]
        return self._whole(rest) if rest else None

    def _failed(self, exc: Exception) -> U:
        _log.error("reading the events of run %s (thread %s) failed",
                   self._translation.run_id, self._translation.thread_id,
                   exc_info=exc)
        return self._whole([self._write(stamped(e)) for e in self._translation.broken()])


def stamped(event: BaseEvent) -> BaseEvent:
    """`event` with the time it is sent, in milliseconds, unless it has one."""
    if event.timestamp is None:
        event.timestamp = now_ms()
    return event
