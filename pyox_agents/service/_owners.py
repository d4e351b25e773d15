"""Who owns each thread: the principal its first run was started for. Another principal's
thread is not there, as far as that principal can tell (404, not 409)."""

from __future__ import annotations

import collections
from collections.abc import Mapping
from typing import Any

from pyox_agents._run_request import RequestError
from pyox_agents.service._live import LiveRun
from pyox_agents.stores.base import Store

__all__ = ["Owners"]

_KEPT = 10_000
"""How many owners of the latest threads started are remembered (a cache: the store holds them
all); one per thread for ever was a leak of a long-lived server."""

_NOBODY = object()
"""The owner of a thread nobody has yet."""


class Owners:
    """The owners of the threads a service started runs on, the latest `_KEPT` remembered; the
    rest are asked of `store`, or of the runs active now (`active`, the service's)."""

    def __init__(self, store: Store | None, active: Mapping[str, LiveRun]) -> None:
        self._store = store
        self._active = active
        self._known: collections.OrderedDict[str, str | None] = collections.OrderedDict()

    def note(self, thread_id: str, principal: str | None) -> None:
        """A run starts on `thread_id` for `principal`: its owner, if it had none."""
        known = self._known
        known.setdefault(thread_id, principal)
        known.move_to_end(thread_id)
        if len(known) > _KEPT:  # the store knows the rest; without one, a thread keeps
            known.popitem(last=False)  # nothing an evicted owner guards

    async def check(self, thread_id: str, principal: str | None) -> None:
        """404 unless `thread_id` is new or belongs to `principal`."""
        owner = await self._owner(thread_id)
        if owner is not _NOBODY and owner != principal:
            raise RequestError(404, f"no thread {thread_id!r}")

    async def _owner(self, thread_id: str) -> Any:
        if thread_id in self._known:
            return self._known[thread_id]
        live = self._active.get(thread_id)
        if live is not None:
            return live.principal
        if self._store is not None:
            try:
                loaded = await self._store.aload_thread(thread_id)
            except LookupError:
                return _NOBODY
            return loaded.owner
        return _NOBODY
