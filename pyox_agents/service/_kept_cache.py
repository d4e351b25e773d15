"""The kept states of the latest threads, in memory, for a process that alone writes its store.

Loading a thread's kept state from the store (and checking it against its run's record) costs
what the whole state costs: for a person's edit of one item of a 100,000-item list, nearly all
of the edit. A process whose store no other process writes (not `SharedRuns`) has every write
go through it, so it keeps what it wrote and reads the store once per thread.

A read of the store takes a while (a large state, a busy machine), and a run may write the
thread meanwhile: what the read found is kept only when nothing was written since it began,
else the next reader would be handed the version before that write.
"""

from __future__ import annotations

import collections
from collections.abc import Awaitable, Callable

from pyox_agents.service._thread_state import ThreadState

__all__ = ["KEPT_THREADS", "KeptStates"]

KEPT_THREADS = 256
"""How many threads' kept states a process holds in memory (the latest used)."""


class KeptStates:
    """The latest `KEPT_THREADS` threads' kept states (none when `shared`)."""

    def __init__(self, shared: bool) -> None:
        self.shared = shared
        self._states: collections.OrderedDict[str, ThreadState] = collections.OrderedDict()
        self._reads: dict[str, object] = {}

    def get(self, thread_id: str) -> ThreadState | None:
        """A copy of the thread's kept state as last written here, or None."""
        found = self._states.get(thread_id)
        if found is None:
            return None
        self._states.move_to_end(thread_id)
        return found.copy()

    def remember(self, thread_id: str, kept: ThreadState | None) -> None:
        """`kept` is what the store now keeps of the thread's state (None: not known)."""
        if self.shared:
            return  # other processes write it too
        self._reads.pop(thread_id, None)  # a read of the store begun before is stale now
        if kept is None:
            self._states.pop(thread_id, None)
            return
        self._states[thread_id] = kept.copy()
        self._states.move_to_end(thread_id)
        while len(self._states) > KEPT_THREADS:
            self._states.popitem(last=False)

    async def read(self, thread_id: str, load: Callable[[], Awaitable[ThreadState]]
                   ) -> ThreadState:
        """The thread's kept state: as last written here, else `load()`ed from the store and
        remembered, unless it was written (or read again) while it loaded."""
        if self.shared:
            return await load()
        found = self.get(thread_id)
        if found is not None:
            return found
        mark = self._reads[thread_id] = object()
        try:
            kept = await load()
        finally:
            fresh = self._reads.get(thread_id) is mark
            if fresh:
                del self._reads[thread_id]
        if fresh:
            self.remember(thread_id, kept)
        return kept
