"""A thread's kept state in Redis: the whole document at `kept:{id}`, the versions appended
since at `kept-changes:{id}` (a list), and `kept-meta:{id}` (a hash: the version the kept
state is at, the base's size, the changes' size, and a generation that each whole write and
compaction moves on); see `_kept_changes.py`.

A whole write (`KEEP_KEPT`) and an append (`APPEND_KEPT`) are each one Lua script that checks
the lease token (when given) and, for an append, the version it extends, before it writes.
When an append leaves many changes, the store reads the state in one MULTI, folds the changes
into the base in Python (the state's patch code), and writes it back with `COMPACT_KEPT` only
if the generation it read still holds, so a compaction never loses a change; a compaction that
fails is logged and left to the next append (the changes are kept).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import anyio.to_thread

from pyox_agents.stores._encoding import dumps
from pyox_agents.stores._kept_changes import (
    COMPACT_SHARE,
    MAX_CHANGES,
    NOT_FOLDED,
    EncodedChanges,
    compacted,
    encode_changes,
    fold_texts,
    kept_refusal,
    kept_version,
)
from pyox_agents.stores.redis_connection import Call, RedisConnection

__all__ = ["KeptStates"]

_log = logging.getLogger(__name__)


class KeptStates(RedisConnection):
    """The kept-state methods of a RedisStore (see `Store.write_kept_state`); its
    `aload_kept_state` is the store's own (it reads the thread in the same round trip)."""

    def write_kept_state(self, thread_id: str, kept: Mapping[str, Any],
                         token: int | None = None) -> None:
        """Keep a server's record of the thread's shared state (JSON), replacing the last;
        with `token`, only while it is the thread's lease token (checked and written at once).

        Raises:
            StoreConflict: `token` is not the current holder's; nothing was written.
        """
        _answered(self.run_script(self._whole(thread_id, kept, token)), thread_id, None, token)

    async def awrite_kept_state(self, thread_id: str, kept: Mapping[str, Any],
                                token: int | None = None) -> None:
        """Same as `write_kept_state`, on the asyncio client."""
        reply = await self.arun_script(self._whole(thread_id, kept, token))
        _answered(reply, thread_id, None, token)

    def load_kept_state(self, thread_id: str) -> Mapping[str, Any] | None:
        """What `write_kept_state` kept last for `thread_id`, with the changes appended since
        applied, or None."""
        with self.client.pipeline(transaction=True) as pipe:
            self.kept_reads(pipe, thread_id)
            base, changes = pipe.execute()
        return None if base is None else fold_texts(base, changes)

    def append_kept_changes(self, thread_id: str, since: int,
                            changes: Sequence[Mapping[str, Any]],
                            token: int | None = None) -> None:
        """Append versions' changes to the kept state at version `since`, in one script (see
        `Store.append_kept_changes`); fold them into the base once they are many."""
        encoded = encode_changes(thread_id, since, changes)
        reply = self.run_script(self._appending(thread_id, encoded, token))
        if not _answered(reply, thread_id, encoded, token):
            return
        try:  # many changes: fold them into the base
            with self.client.pipeline(transaction=True) as pipe:
                self.kept_reads(pipe, thread_id)
                pipe.hget(self.key("kept-meta", thread_id), "generation")
                read = pipe.execute()
            compaction = self._compaction(thread_id, *read)
            if compaction is not None:
                self.run_script(compaction)
        except Exception:  # the changes are kept: the next append folds them
            _log.warning(NOT_FOLDED, thread_id, exc_info=True)

    async def aappend_kept_changes(self, thread_id: str, since: int,
                                   changes: Sequence[Mapping[str, Any]],
                                   token: int | None = None) -> None:
        """Same as `append_kept_changes`, on the asyncio client."""
        encoded = encode_changes(thread_id, since, changes)
        reply = await self.arun_script(self._appending(thread_id, encoded, token))
        if not _answered(reply, thread_id, encoded, token):
            return
        try:
            async with (await self.async_client()).pipeline(transaction=True) as pipe:
                self.kept_reads(pipe, thread_id)
                pipe.hget(self.key("kept-meta", thread_id), "generation")
                read = await pipe.execute()
            # the whole state to text: off the event loop
            compaction = await anyio.to_thread.run_sync(self._compaction, thread_id, *read)
            if compaction is not None:
                await self.arun_script(compaction)
        except Exception:
            _log.warning(NOT_FOLDED, thread_id, exc_info=True)

    def kept_reads(self, pipe: Any, thread_id: str) -> None:
        """Queue the reads of the kept state on `pipe`: its base, then its changes."""
        pipe.get(self.key("kept", thread_id))
        pipe.lrange(self.key("kept-changes", thread_id), 0, -1)

    def _keys(self, thread_id: str) -> list[str]:
        return [self.key(kind, thread_id)
                for kind in ("kept", "kept-changes", "kept-meta", "lease")]

    def _whole(self, thread_id: str, kept: Mapping[str, Any], token: int | None) -> Call:
        text = dumps(kept, f"the kept state of thread {thread_id!r}")
        version = kept_version(kept)
        return Call("keep_kept", self._keys(thread_id),
                    ["" if token is None else str(token), text,
                     "" if version is None else str(version)])

    def _appending(self, thread_id: str, encoded: EncodedChanges, token: int | None) -> Call:
        return Call("append_kept", self._keys(thread_id),
                    ["" if token is None else str(token), str(encoded.since),
                     str(encoded.version), encoded.size, MAX_CHANGES, repr(COMPACT_SHARE),
                     *encoded.texts])

    def _compaction(self, thread_id: str, base: str | None, changes: list[str],
                    generation: str | None) -> Call | None:
        """The whole state folded from what was read, written if its generation still holds
        (the changes appended meanwhile stay); None: nothing to fold."""
        if base is None or not changes or generation is None:
            return None
        return Call("compact_kept", self._keys(thread_id)[:3],
                    [generation, len(changes), compacted(thread_id, base, changes)])


def _answered(reply: Any, thread_id: str, encoded: EncodedChanges | None,
              token: int | None) -> bool:
    """Whether a kept-state script's `reply` asks for a compaction; its refusal raised.

    Raises:
        StoreConflict: the token is not the holder's, or the kept state is not at the version
            the changes extend.
    """
    outcome, detail = str(reply[0]), str(reply[1])
    if outcome != "ok":
        raise kept_refusal(thread_id, encoded, token, outcome, detail)
    return detail == "1"
