"""A run's log as AG-UI frames, each with its SSE `id:` (`frame_log`), from where a reader that
comes back resumes (`pyox_agents.adapters._event_ids`).

A resumed AG-UI stream cannot begin in the middle: `@ag-ui/client` checks each stream on its own
(its first event must be `RUN_STARTED`, and a `TEXT_MESSAGE_CONTENT` needs its message open in
that stream). So a reader that resumes gets, before the frames after its cursor, `RUN_STARTED`
and the start of everything the frames it already has left open (a text message, a tool call,
reasoning, a step, a subagent), as they were sent. The client finds each of those already in
its messages and adds nothing. These frames carry no id: they are not the log's.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Sequence

from ag_ui.core import BaseEvent, EventType, RunAgentInput

from pyox_agents.adapters._event_ids import Cursor, FrameIds
from pyox_agents.adapters._translating import sse_frames
from pyox_agents.adapters.ag_ui._encode import encode_event
from pyox_agents.adapters.ag_ui._events import StreamInput
from pyox_agents.adapters.ag_ui._translated import Translated, stamped
from pyox_agents.events import RunStarted, RuntimeEvent, TextDelta

__all__ = ["NumberedFrames", "Reopened", "frame_log"]

Reads = AsyncIterable[tuple[int, Sequence[RuntimeEvent]]]
"""A run's log read from its first event: each batch with the index of its first event."""

_OPENS = {EventType.TEXT_MESSAGE_START: "text", EventType.TOOL_CALL_START: "call",
          EventType.REASONING_START: "reasoning",
          EventType.REASONING_MESSAGE_START: "reasoning message",
          EventType.STEP_STARTED: "step", EventType.SUBAGENT_STARTED: "subagent"}
_CLOSES = {EventType.TEXT_MESSAGE_END: "text", EventType.TOOL_CALL_END: "call",
           EventType.REASONING_END: "reasoning",
           EventType.REASONING_MESSAGE_END: "reasoning message",
           EventType.STEP_FINISHED: "step", EventType.SUBAGENT_FINISHED: "subagent",
           EventType.SUBAGENT_ERROR: "subagent"}


def frame_log(run_input: RunAgentInput | StreamInput, reads: Reads, *,
              after: Cursor | None = None, restore: bool = False) -> NumberedFrames:
    """`frame_batches` of a run's log (`reads`, from its first event), each frame with its id;
    `after`: a reader that resumes gets `RUN_STARTED`, what it has open started again (see the
    module), then only the frames after it. `restore`: a connect that restores the thread
    (`MESSAGES_SNAPSHOT` of `run_input.messages` after `RUN_STARTED`)."""
    return NumberedFrames(run_input, reads, after, restore=restore)


class Reopened:
    """What the AG-UI events a reader got left open, in the order they were opened: what a
    stream that resumes must start again (with the `RUN_STARTED` before them)."""

    __slots__ = ("_open", "_started")

    def __init__(self) -> None:
        self._started: BaseEvent | None = None
        self._open: dict[tuple[str, object, object], BaseEvent] = {}

    def saw(self, event: BaseEvent) -> None:
        """Note one event the reader got."""
        kind = event.type
        if kind == EventType.RUN_STARTED:
            self._started = event
        elif kind in _OPENS:
            self._open[_OPENS[kind], _subject(event), _owner(event)] = event
        elif kind in _CLOSES:
            self._open.pop((_CLOSES[kind], _subject(event), _owner(event)), None)

    def events(self) -> list[BaseEvent]:
        """`RUN_STARTED`, then the start of each part still open; none when it saw none."""
        if self._started is None:
            return []
        return [self._started, *self._open.values()]


def _subject(event: BaseEvent) -> object:
    for name in ("tool_call_id", "message_id", "step_name"):
        value = getattr(event, name, None)
        if value is not None:
            return value
    return getattr(event, "subagent_run_id", None)  # (a subagent's start and end)


def _owner(event: BaseEvent) -> object:
    kind = event.type
    if kind in (EventType.SUBAGENT_STARTED, EventType.SUBAGENT_FINISHED,
                EventType.SUBAGENT_ERROR):
        return None
    return getattr(event, "subagent_run_id", None)


class NumberedFrames(Translated[str, bytes]):
    """The stream `frame_log` gives: a run's log translated as `frame_batches` does, its frames
    with ids. It ends after the run's terminal event (`RUN_ERROR` if the log ends before it, or
    if reading or translating it raises)."""

    def __init__(self, run_input: RunAgentInput | StreamInput, reads: Reads,
                 after: Cursor | None, *, restore: bool = False) -> None:
        super().__init__(run_input, reads, encode_event, sse_frames, restore=restore)
        self._ids = FrameIds(after)
        self._had = Reopened()
        self._resumed = after is None  # the frames that start a resumed stream are written

    def _translated(self, batch: tuple[int, Sequence[RuntimeEvent]]) -> bytes | None:
        first, events = batch
        translation, ids = self._translation, self._ids
        wanted = -1 if ids.after is None else ids.after.index  # events after it: all frames
        out: list[str] = []
        for index, event in enumerate(events, first):
            texts: list[str] | None = None
            made: list[BaseEvent] = []
            if index == 0 and type(event) is RunStarted:
                ids.begin(event.run_id)
            if type(event) is TextDelta and event.run_id is None \
                    and (text := translation.text_json(event.message_id, event.delta)):
                if index > wanted and self._resumed:  # (most of a stream: one frame, written)
                    out.append(f"id: {ids.tag}{index}\ndata: {text}\n\n")
                    continue
                texts = [text]  # (a delta into an open message: its JSON straight from it)
            else:
                made = [stamped(e) for e in translation.on(event)]
            count = len(made) if texts is None else 1
            skip = ids.skipped(index, count)
            for had in made[:skip]:
                self._had.saw(had)
            if skip < count:
                self._resume(out)
                if texts is None:
                    texts = [encode_event(e) for e in made]
                out.append(ids.written(index, texts, skip))
            if not self._resumed and ids.caught_up(index) and not translation.ended:
                self._resume(out)  # (a reader that has the run's end gets nothing more)
        self._over = translation.ended
        return "".join(out).encode() if out else None

    def _resume(self, out: list[str]) -> None:
        """Write what starts a resumed stream, once (see the module)."""
        if not self._resumed:
            self._resumed = True
            out.extend(f"data: {encode_event(e)}\n\n" for e in self._had.events())
