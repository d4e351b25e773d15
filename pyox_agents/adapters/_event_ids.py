"""The SSE `id:` of every frame of a run's stream, and where a reader that comes back resumes.

A run's events are numbered by their place in its log, from 0 (`RunStarted`), the same on every
server process (a shared run's own process keeps the events as it logs them in the store). One
event may give several frames (AG-UI `RUN_STARTED` and `STATE_SNAPSHOT`; AI SDK `start`,
`start-step`, `data-state`), so a frame's id says its event and how many frames of that event
come after it: `12` is the last (often the only) frame of event 12, `12.2` a frame with two more
of event 12 after it. A reader that got `12` has all of event 12; one that got `12.2` lacks the
last two frames of it (counted from the end, they are the same in a stream that restores a
thread, whose first event gives a messages snapshot more). Each id starts with the run's tag
(`run_tag`: `3f2a9c1b:12`), so an id kept from a run that has ended is never read as an index
into the run going on now. `Last-Event-ID: <id>` resumes right after that frame; `?startIndex=N`
resumes at event N of the run going on (after event N - 1: 0 is the whole run).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pyox_agents._run_request import run_tag

__all__ = ["Cursor", "FrameIds", "parse_cursor"]

_ID = re.compile(r"(?:([0-9a-f]{8}):)?(0|[1-9][0-9]{0,17})(?:\.([0-9]{1,9}))?")


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a reader resumes: after event `index` of run `run` (its tag; None: the run going
    on), but for the last `left` frames of it, which it lacks (0: it has all of them). `index`
    -1: before the run's first event."""

    index: int
    left: int = 0
    run: str | None = None


def parse_cursor(last_event_id: str | None, start_index: str | None) -> Cursor | None:
    """The cursor of a request that resumes: its `Last-Event-ID` (the id of the last frame it
    got), else its `startIndex` (the index of the first event it wants); None without either
    (the stream is then the whole run). `Last-Event-ID` wins: a browser's `EventSource` sends it
    on its own reconnects, to the URL it was opened with.

    Raises:
        ValueError: a value that is not such an id or index (the message says which and why).
    """
    if last_event_id is not None and last_event_id.strip():
        found = _ID.fullmatch(last_event_id.strip())
        if found is None:
            raise ValueError(f"Last-Event-ID {last_event_id[:40]!r} is not the id of a frame of "
                             "this server's streams: send the `id:` of the last frame you got "
                             "(such as 3f2a9c1b:12, or 3f2a9c1b:12.2), or leave it out to get "
                             "the whole run")
        return Cursor(int(found[2]), int(found[3] or 0), found[1])
    if start_index is None:
        return None
    if not start_index.strip().isdigit() or len(start_index.strip()) > 18:
        raise ValueError(f"startIndex {start_index[:40]!r} must be a whole number from 0: the "
                         "index of the first event you want (the id of the last frame you got, "
                         "plus 1), or 0 for the whole run")
    return Cursor(int(start_index) - 1)


class FrameIds:
    """Writes the frames of a run's events with their ids, leaving out those the reader has
    (those up to `after`, when it resumes). `tag` starts each id once the run's start is seen
    (`begin`)."""

    __slots__ = ("after", "tag")

    def __init__(self, after: Cursor | None = None) -> None:
        self.after = after
        self.tag = ""

    def begin(self, run_id: str | None) -> None:
        """The run's first event is its start: its id tags every frame's id."""
        self.tag = f"{run_tag(run_id)}:" if run_id else ""

    def skipped(self, index: int, count: int) -> int:
        """How many of the `count` frames of event `index` the reader has already."""
        after = self.after
        if after is None or index > after.index:
            return 0
        if index < after.index:
            return count
        return max(0, count - after.left)

    def caught_up(self, index: int) -> bool:
        """Whether, once event `index` is written, the reader lacks every frame that follows
        (nothing after it is left out)."""
        return self.after is None or index >= self.after.index

    def written(self, index: int, texts: Sequence[str], skip: int = 0) -> str:
        """The SSE frames of event `index` (the `data:` texts of its frames, in order) but the
        first `skip`, each with its id."""
        last, tag = len(texts) - 1, self.tag
        return "".join(f"id: {tag}{index}\ndata: {text}\n\n" if at == last
                       else f"id: {tag}{index}.{last - at}\ndata: {text}\n\n"
                       for at, text in enumerate(texts) if at >= skip)
