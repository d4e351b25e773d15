"""Threads as their owners' resource in Redis: an owner's threads page by page (newest change
first), a thread's title and archive flag, the checkpoints a server records of each run, and
erasing a thread with everything kept of it.

Keys, under the store's prefix: `owned:{owner}` and `archived:{owner}` (sorted sets; `owned-nobody`
and `archived-nobody` for threads saved for nobody): the owner's threads that no tool call
started, scored by their `updated_at` (seconds since the epoch), kept by `write_step`;
`checkpoints:{thread}` and `checkpoint-states:{thread}` (hashes: run id -> head, state) and
`checkpoint-runs:{thread}` (list: run ids in the order first recorded). A thread's `title`,
`archived` and `run_status` are fields of its `thread:{id}` hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyox_agents.stores._encoding import missing_thread, parse_time
from pyox_agents.stores._owned import (
    OPENING_ENTRIES,
    check_limit,
    check_title,
    decode_checkpoint,
    encode_checkpoint,
    score,
    titled,
)
from pyox_agents.stores._records import Checkpoint, ThreadInfo
from pyox_agents.stores.redis_connection import Call, RedisConnection

__all__ = ["ThreadRecords"]

_THREAD_FIELDS = ("parent_id", "entries", "created_at", "updated_at", "owner", "title",
                 "archived", "run_status")
"""The fields of a `thread:{id}` hash a `ThreadInfo` is made of (`_thread_info`)."""


def _thread_info(thread_id: str, fields: Sequence[Any]) -> ThreadInfo | None:
    """The `ThreadInfo` of the values of `_THREAD_FIELDS`; None for a thread that is gone."""
    parent, count, created, updated, owner, title, archived, status = fields
    if count is None:
        return None
    return ThreadInfo(thread_id, parent, int(count), parse_time(created), parse_time(updated),
                      owner, title, archived == "1", status)


class ThreadRecords(RedisConnection):
    """The owners' threads, titles, checkpoints and erasing of a RedisStore."""

    def owned_key(self, owner: str | None, archived: bool) -> str:
        """The sorted set of `owner`'s threads (archived or not)."""
        kind = "archived" if archived else "owned"
        return self.key(kind, owner) if owner is not None else self.key(f"{kind}-nobody")

    def list_owned(self, owner: str | None, *, archived: bool | None = False, limit: int = 50,
                   after: tuple[str, str] | None = None) -> list[ThreadInfo]:
        """`owner`'s threads, newest change first (see `Store.list_owned`)."""
        check_limit(limit)
        flags = (False, True) if archived is None else (archived,)
        ids = self._newest([self.owned_key(owner, flag) for flag in flags], limit, after)
        found = self._thread_infos(ids, transaction=True)
        untitled = [info for info in found if info.title is None]
        with self.client.pipeline(transaction=False) as pipe:
            for info in untitled:
                pipe.lrange(self.key("entries", info.id), 0, OPENING_ENTRIES - 1)
            opening = dict(zip((info.id for info in untitled), pipe.execute(), strict=True))
        return [titled(info, opening.get(info.id, ())) for info in found]

    def _thread_infos(self, ids: Sequence[str], *, transaction: bool) -> list[ThreadInfo]:
        """The `ThreadInfo` of each of the threads `ids` that is still there, read in one
        pipeline (a MULTI with `transaction`)."""
        with self.client.pipeline(transaction=transaction) as pipe:
            for thread_id in ids:
                pipe.hmget(self.key("thread", thread_id), list(_THREAD_FIELDS))
            heads = pipe.execute()
        return [info for thread_id, fields in zip(ids, heads, strict=True)
                if (info := _thread_info(thread_id, fields)) is not None]

    def _newest(self, keys: Sequence[str], limit: int, after: tuple[str, str] | None
                ) -> list[str]:
        """The ids of the `limit` highest members of the sorted sets `keys` taken together
        (score, then id, both descending), after `after` (the text of a score and an id), read
        in one MULTI: each set's members at the cursor's own score (only those of a lower id
        are after it) and its `limit` highest below that score, merged."""
        top = "+inf" if after is None else repr(score(after[0]))
        with self.client.pipeline(transaction=True) as pipe:
            for key in keys:
                if after is not None:
                    pipe.zrange(key, top, top, byscore=True, desc=True, withscores=True)
                below = top if after is None else f"({top}"
                pipe.zrange(key, below, "-inf", byscore=True, desc=True, offset=0, num=limit,
                            withscores=True)
            replies: list[Any] = pipe.execute()
        rows = [(float(at), str(id)) for reply in replies for id, at in reply]
        if after is not None:  # the cursor's own score: only the ids after it
            rows = [(at, id) for at, id in rows if at != float(top) or id < after[1]]
        rows.sort(reverse=True)
        return [id for _, id in rows[:limit]]

    def update_thread(self, thread_id: str, *, title: str | None = None,
                      archived: bool | None = None) -> None:
        """Give the thread a title and/or archive it; LookupError if there is none."""
        title = check_title(title) if title is not None else None
        flag = "" if archived is None else ("1" if archived else "0")
        call = Call("update_thread", [self.key("thread", thread_id)],
                    [self.prefix, thread_id, "0" if title is None else "1", title or "", flag])
        if not int(self.run_script(call)):
            raise missing_thread(thread_id, self._where())

    def _checkpoint(self, thread_id: str, checkpoint: Checkpoint) -> Call:
        encoded = encode_checkpoint(thread_id, checkpoint)
        return Call("write_checkpoint",
                    [self.key("checkpoints", thread_id), self.key("checkpoint-states", thread_id),
                     self.key("checkpoint-runs", thread_id), self.key("thread", thread_id)],
                    [encoded.run_id, encoded.head, encoded.state or "", encoded.status or ""])

    def write_checkpoint(self, thread_id: str, checkpoint: Checkpoint) -> None:
        """Keep what the server recorded of a run of the thread when it ended."""
        self.run_script(self._checkpoint(thread_id, checkpoint))

    async def awrite_checkpoint(self, thread_id: str, checkpoint: Checkpoint) -> None:
        """Same as `write_checkpoint`, on the asyncio client (a server writes it as a run
        ends)."""
        await self.arun_script(self._checkpoint(thread_id, checkpoint))

    def load_checkpoints(self, thread_id: str, run_ids: Sequence[str] | None = None, *,
                         states: bool = False) -> list[Checkpoint]:
        """The thread's checkpoints, in the order their runs were first recorded."""
        order = [str(id) for id in self.client.lrange(self.key("checkpoint-runs", thread_id),
                                                      0, -1)]
        wanted = [id for id in order if run_ids is None or id in run_ids]
        if not wanted:
            return []
        with self.client.pipeline(transaction=True) as pipe:
            pipe.hmget(self.key("checkpoints", thread_id), wanted)
            if states:
                pipe.hmget(self.key("checkpoint-states", thread_id), wanted)
            replies = pipe.execute()
        bodies = replies[1] if states else [None] * len(wanted)
        return [decode_checkpoint(id, head, state)
                for id, head, state in zip(wanted, replies[0], bodies, strict=True)
                if head is not None]

    def erase_records(self, thread_ids: Sequence[str], run_ids: Sequence[str],
                      event_logs: Sequence[str] = ()) -> None:
        """Remove the threads, runs and event logs (one MULTI, once the threads' owners are
        read: each is listed in its owner's sorted set)."""
        with self.client.pipeline(transaction=True) as pipe:
            for thread_id in thread_ids:
                pipe.hmget(self.key("thread", thread_id), ["owner", "archived", "parent_id"])
            heads = pipe.execute()
        with self.client.pipeline(transaction=True) as pipe:
            for thread_id, (owner, archived, parent) in zip(thread_ids, heads, strict=True):
                self.tails.forget(thread_id)
                pipe.delete(*(self.key(kind, thread_id) for kind in (
                    "thread", "entries", "kept", "kept-changes", "kept-meta", "checkpoints",
                    "checkpoint-states", "checkpoint-runs")))
                pipe.zrem(self.key("threads"), thread_id)
                if parent is None:
                    pipe.zrem(self.owned_key(owner, archived == "1"), thread_id)
            for run_id in run_ids:
                pipe.delete(self.key("run", run_id), self.key("audit", run_id))
            for log in event_logs:
                pipe.delete(self.key("events", log))
            pipe.execute()
