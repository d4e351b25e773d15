"""A run's runtime events as a stream of AG-UI events, a batch at a time (`Translation` makes
each batch's events): `translate`, `translate_batches`, and `translated`, which a server writes
(`frame_batches`), `AtOnce` when what it reads is.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence
from typing import Generic, TypeVar, cast

from ag_ui.core import BaseEvent, RunAgentInput

from pyox_agents.adapters._at_once import AtOnce
from pyox_agents.adapters._batches import flattened, one_each
from pyox_agents.adapters.ag_ui._events import Translation
from pyox_agents.adapters.ag_ui._open import now_ms
from pyox_agents.events import RuntimeEvent

__all__ = ["Translated", "translate", "translate_batches", "translated"]

_log = logging.getLogger(__name__)

T = TypeVar("T")
U = TypeVar("U")


async def translate(
    run_input: RunAgentInput, events: AsyncIterable[RuntimeEvent]
) -> AsyncIterator[BaseEvent]:
    """The AG-UI events of one run, from its runtime events.

    The stream opens with `RUN_STARTED{threadId, runId (the client's), parentRunId (the
    client's, if it sent one), protocolVersion "1.0"}`
    and a `STATE_SNAPSHOT` of the state the run starts from, and ends with exactly one of
    `RUN_FINISHED` (after a `MESSAGES_SNAPSHOT`) and `RUN_ERROR`, with everything it opened
    closed before. Every event carries a `timestamp` in milliseconds. The 1.0-only fields
    (`protocolVersion`, `pendingToolCallIds`, the cancelled outcome) go only to a client whose
    `run_input` declares `protocolVersion` 1.0 or later (`declares_1_0`).
    """
    async for event in flattened(translate_batches(run_input, one_each(events))):
        yield event


async def translate_batches(
    run_input: RunAgentInput, batches: AsyncIterable[Sequence[RuntimeEvent]], *,
    restore: bool = False,
) -> AsyncIterator[list[BaseEvent]]:
    """`translate`, a batch at a time: the AG-UI events of each batch of runtime events.

    A server writes each batch in one go; the events and their order are `translate`'s.
    `restore` (a connect): a `MESSAGES_SNAPSHOT` of `run_input.messages` follows `RUN_STARTED`;
    so it does for a resume, whose results answer calls an earlier run of the thread made.
    """
    async for out in translated(run_input, batches, _stamped, _as_list, restore=restore):
        yield out


def translated(
    run_input: RunAgentInput, batches: AsyncIterable[Sequence[RuntimeEvent]],
    write: Callable[[BaseEvent], T], whole: Callable[[list[T]], U], *, restore: bool = False,
    delta: Callable[[str], T] | None = None,
) -> Translated[T, U]:
    """`translate_batches`, each AG-UI event stamped and passed to `write`, each batch's
    written events to `whole`: what the batch is yielded as (a list, SSE bytes...).

    `delta`, when given, writes the JSON of a text delta of the stream's own run into a
    message already open (most of a stream) straight from the runtime event, without an event
    object: `write` of the same `TEXT_MESSAGE_CONTENT` must give what `delta` gives of its JSON.
    """
    return Translated(run_input, batches, write, whole, restore=restore, delta=delta)


class Translated(Generic[T, U]):
    """The stream `translated` gives: an async iterator of each batch's translation, ending
    after the run's terminal event. It is `AtOnce` when `batches` is: a reader that sets
    `at_once` is handed each batch's translation in the task that adds the batch (the run's),
    while it waits with all before read."""

    def __init__(
        self, run_input: RunAgentInput, batches: AsyncIterable[Sequence[RuntimeEvent]],
        write: Callable[[BaseEvent], T], whole: Callable[[list[T]], U], *, restore: bool,
        delta: Callable[[str], T] | None,
    ) -> None:
        self._translation = Translation(run_input, restore=restore)
        self._source = cast(AtOnce[Sequence[RuntimeEvent]], batches) if hasattr(
            batches, "at_once") else None  # `AtOnce` (isinstance of a runtime protocol is slow)
        self._read = batches.__aiter__()
        self._write = write
        self._whole = whole
        self._delta = delta
        self._over = False
        """The stream has ended (its terminal event, or a failure's end, translated)."""
        self._at_once: Callable[[U], None] | None = None

    @property
    def at_once(self) -> Callable[[U], None] | None:
        """Takes each batch's translation at once (see `AtOnce`); None: read it."""
        return self._at_once

    @at_once.setter
    def at_once(self, take: Callable[[U], None] | None) -> None:
        self._at_once = take
        if self._source is not None:
            self._source.at_once = None if take is None else self._take

    def __aiter__(self) -> Translated[T, U]:
        return self

    async def __anext__(self) -> U:
        while not self._over:
            try:
                batch = await anext(self._read)
            except StopAsyncIteration:
                if self._over:  # its end was written at once meanwhile
                    break
                self._over = True
                rest = [self._write(_stamped(e)) for e in self._translation.incomplete()]
                if rest:
                    return self._whole(rest)
                break
            except Exception:
                if self._over:
                    break
                return self._broken()
            out = self._translated(batch)
            if out is not None:
                return out
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """End the stream here (what it reads is left as it is)."""
        self._over = True
        self.at_once = None

    def _take(self, batch: Sequence[RuntimeEvent]) -> None:
        out = self._translated(batch)
        take = self._at_once
        if out is not None and take is not None:
            take(out)

    def _translated(self, batch: Sequence[RuntimeEvent]) -> U | None:
        """`batch` translated; None when it gives no event."""
        if self._over:
            return None
        translation, write, delta = self._translation, self._write, self._delta
        out: list[T] = []
        try:
            for event in batch:
                if delta is not None and (text := translation.delta_json(event)) is not None:
                    out.append(delta(text))
                    continue
                out.extend(write(_stamped(e)) for e in translation.on(event))
            self._over = translation.ended
            return self._whole(out) if out else None
        except Exception:
            return self._broken()

    def _broken(self) -> U:
        """Reading or translating a batch raised: the stream ends with a public error."""
        _log.exception("reading the events of run %s (thread %s) failed",
                       self._translation.input.run_id, self._translation.input.thread_id)
        self._over = True
        return self._whole([self._write(_stamped(e)) for e in self._translation.broken()])


def _as_list(events: list[BaseEvent]) -> list[BaseEvent]:
    return events


def _stamped(event: BaseEvent) -> BaseEvent:
    if event.timestamp is None:
        event.timestamp = now_ms()
    return event
