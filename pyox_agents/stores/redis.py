"""`RedisStore`: threads, runs and audit records in Redis, shared by several server processes.

Each `write` is one Lua script that checks the thread's entry count, the run's audit count and
(for `write_fenced`) the thread's lease token, then appends: all of the step or none of it.
Beyond what every store keeps, it holds what several processes serving one set of threads need:
a per-thread lease with a fencing token, so two processes never run one thread at once, and each
run's event log in a Redis Stream, so any process can replay and follow a run another executes.

Key layout, under `prefix` (default `"pyox:"`):

- `threads` (sorted set): thread ids, scored by first-save order (`threads-order`, a counter)
- `thread:{id}` (hash): entries (count), parent_id, owner, created_at, updated_at,
  shared_state, shared_version, title, archived, run_status
- `entries:{id}` (list): the thread's history entries, JSON text, oldest first
- `run:{run_id}` (hash): body (the run's JSON), thread_id
- `audit:{run_id}` (list): the run's audit records, JSON text, in order of seq
- `lease:{thread_id}` (hash, expires): owner, token; tokens come from `lease-tokens` (a counter)
- `events:{run_key}` (stream, expires): `event` fields, then one `done` field when the run ended
- `active:{thread_id}` (string, expires): the run key of the run active on the thread
- `kept:{thread_id}` (string), `kept-changes:{thread_id}` (list), `kept-meta:{thread_id}`
  (hash): a server's kept shared state of the thread and the versions appended to it since
  (`write_kept_state`, `append_kept_changes`; see `redis_kept.py`)
- an owner's threads, and each thread's checkpoints: see `redis_threads.py`

Needs redis-py (`pip install 'pyox-agents[redis]'`) and Redis 7 or later. The scripts touch
several keys, so on Redis Cluster give a prefix with a hash tag (`"{pyox}:"`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from pyox_agents.stores._encoding import (
    EncodedRecord,
    encode,
    missing_run,
    missing_thread,
    run_record,
    step_refusal,
)
from pyox_agents.stores._kept_changes import fold_texts
from pyox_agents.stores._outages import reports_outages
from pyox_agents.stores._owned import score
from pyox_agents.stores._records import bound_state, record_after
from pyox_agents.stores.base import LoadedThread, StepRecord, Store, ThreadInfo
from pyox_agents.stores.redis_connection import Call, outage
from pyox_agents.stores.redis_events import RunEventLog
from pyox_agents.stores.redis_kept import KeptStates
from pyox_agents.stores.redis_leases import ThreadLeases
from pyox_agents.stores.redis_tails import Tail
from pyox_agents.stores.redis_threads import ThreadRecords

if TYPE_CHECKING:
    from pyox_agents.state.conversation import State

__all__ = ["RedisStore"]


@reports_outages(outage)
class RedisStore(ThreadRecords, RunEventLog, ThreadLeases, KeptStates, Store):
    """A store in Redis at `url` (`redis://host:port/db`), keys under `prefix`.

    Sync methods use one `redis.Redis` client (thread-safe, pooled); `awrite`, `awrite_fenced`,
    `arecord_for`, `aload`, `aload_thread`, `aload_run_record`, the kept-state methods and the
    lease, event and active-run methods have real asyncio twins on a `redis.asyncio` client of
    the running event loop (the other async twins run the sync method in a worker thread), so
    a served run's store calls need no worker thread. While this process holds a thread's
    lease, what it wrote there is not read back (`tails`).

    An event stream expires `events_ttl` seconds after its latest append, and `done_ttl`
    seconds after `amark_done`. A connection not made within `connect_timeout` seconds, or a
    command not answered within `command_timeout`, raises
    `StoreUnavailable` (not retried: see `RedisConnection`).
    """

    async def __aenter__(self) -> RedisStore:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.aclose()

    # -- writes ---------------------------------------------------------------------------------

    def write(self, record: StepRecord) -> None:
        """Apply `record` in one Lua script, or raise and change nothing."""
        encoded = encode(record)  # fails before Redis is touched if the record is not JSON
        self.tails.forget(record.thread_id)
        self._check(encoded, None, self.run_script(self._step_call(encoded, None)))

    async def awrite(self, record: StepRecord) -> None:
        """Same as `write`, on the asyncio client."""
        encoded = encode(record)
        self.tails.forget(record.thread_id)
        self._check(encoded, None, await self.arun_script(self._step_call(encoded, None)))

    def write_fenced(self, record: StepRecord, thread_id: str, token: int) -> None:
        """Same as `write`, if `token` is the current lease token of `thread_id`.

        `thread_id` is the thread whose lease the writer holds: `record.thread_id`, or the
        thread of the run a subagent's thread belongs to.

        Raises:
            StoreConflict: the lease expired or another owner took it since (and everything
                `write` refuses); nothing was written.
        """
        encoded = encode(record)
        fence = (thread_id, token)
        try:
            self._check(encoded, fence, self.run_script(self._step_call(encoded, fence)))
        except BaseException:  # refused, or not known whether it landed: ask Redis next time
            self.tails.forget(record.thread_id)
            raise
        self.tails.wrote(encoded, thread_id, token)

    async def awrite_fenced(self, record: StepRecord, thread_id: str, token: int) -> None:
        """Same as `write_fenced`, on the asyncio client."""
        encoded = encode(record)
        fence = (thread_id, token)
        try:
            self._check(encoded, fence, await self.arun_script(self._step_call(encoded, fence)))
        except BaseException:  # refused, or not known whether it landed: ask Redis next time
            self.tails.forget(record.thread_id)
            raise
        self.tails.wrote(encoded, thread_id, token)

    def _step_call(self, encoded: EncodedRecord, fence: tuple[str, int] | None) -> Call:
        record = encoded.record
        header: dict[str, Any] = {
            "thread_id": record.thread_id,
            "first_seq": record.first_seq,
            "entries": len(encoded.entries),
            "audit": len(encoded.audit),
            "first_audit": encoded.audit[0][0] if encoded.audit else None,
            "run_id": encoded.run_id,
            "parent_id": record.parent_id,
            "owner": record.owner,
            "created_at": encoded.created_at,
            "updated_at": encoded.updated_at,
            "shared_version": (str(record.shared_version)
                               if record.shared_version is not None else None),
            "fence": str(fence[1]) if fence else None,
            "prefix": self.prefix,  # an owner's list of threads is keyed by the owner
            "score": score(encoded.updated_at),
        }
        run_id = encoded.run_id or ""
        return Call(
            "write_step",
            [self.key("thread", record.thread_id), self.key("entries", record.thread_id),
             self.key("threads"), self.key("threads-order"), self.key("run", run_id),
             self.key("audit", run_id), self.key("lease", fence[0] if fence else "")],
            [json.dumps({k: v for k, v in header.items() if v is not None}),
             encoded.shared_state or "", encoded.run or "",
             *encoded.entries, *(text for _, text in encoded.audit)],
        )

    @staticmethod
    def _check(encoded: EncodedRecord, fence: tuple[str, int] | None, reply: Any) -> None:
        """Raise the StoreConflict the script's refusal stands for (it changed nothing)."""
        conflict = step_refusal(encoded, fence, str(reply[0]), str(reply[1]))
        if conflict is not None:
            raise conflict

    # -- reads ----------------------------------------------------------------------------------

    def _thread_reads(self, pipe: Any, thread_id: str) -> None:
        pipe.hmget(self.key("thread", thread_id),
                   ["entries", "shared_state", "shared_version", "owner"])
        pipe.lrange(self.key("entries", thread_id), 0, -1)

    def load_thread(self, thread_id: str) -> LoadedThread:
        """The saved entries of `thread_id` and its shared state; LookupError if there is none."""
        token = self.tails.token(thread_id)  # a load under this process's lease: its tail
        known = self._known(thread_id)  # loaded under it, not written since
        if known is not None:
            return known
        with self.client.pipeline(transaction=True) as pipe:  # one read: head and entries agree
            self._thread_reads(pipe, thread_id)
            return self._learnt(thread_id, pipe.execute(), token)

    async def aload_thread(self, thread_id: str) -> LoadedThread:
        """Same as `load_thread`, on the asyncio client."""
        token = self.tails.token(thread_id)
        known = self._known(thread_id)
        if known is not None:
            return known
        client = await self.async_client()
        async with client.pipeline(transaction=True) as pipe:
            self._thread_reads(pipe, thread_id)
            return self._learnt(thread_id, await pipe.execute(), token)

    def _known(self, thread_id: str) -> LoadedThread | None:
        """The thread as loaded under the lease this process holds, if not written since."""
        known = self.tails.get(thread_id)
        if known is not None and known.missing:
            raise missing_thread(thread_id, self._where())
        return known.thread if known is not None else None

    def _learnt(self, thread_id: str, replies: list[Any], token: int | None) -> LoadedThread:
        """The thread `_thread_reads` read (`replies`), told to `tails` as loaded under
        `token`; LookupError if there is none."""
        (count, shared, version, owner), rows = replies
        if count is None:
            self.tails.loaded(thread_id, None, token)
            raise missing_thread(thread_id, self._where())
        loaded = LoadedThread.from_texts(thread_id, rows, shared, version, owner)
        self.tails.loaded(thread_id, loaded, token)
        return loaded

    def record_for(self, state: State) -> StepRecord:
        """The entries of `state` Redis lacks, as `Store.record_for`; without asking Redis
        when this process wrote (or loaded) the thread last under the lease it holds."""
        tail = self.tails.get(state.id)
        if tail is None:
            with self.client.pipeline(transaction=True) as pipe:
                pipe.hget(self.key("thread", state.id), "entries")
                pipe.lindex(self.key("entries", state.id), -1)
                tail = _tail(pipe.execute())
        return record_after(state, tail.count, tail.last)

    async def arecord_for(self, state: State) -> StepRecord:
        """Same as `record_for`, on the asyncio client."""
        tail = self.tails.get(state.id)
        if tail is None:
            client = await self.async_client()
            async with client.pipeline(transaction=True) as pipe:
                pipe.hget(self.key("thread", state.id), "entries")
                pipe.lindex(self.key("entries", state.id), -1)
                tail = _tail(await pipe.execute())
        return record_after(state, tail.count, tail.last)

    def entry_count(self, thread_id: str) -> int:
        """How many entries `thread_id` has saved."""
        count = self.client.hget(self.key("thread", thread_id), "entries")
        return int(count) if count is not None else 0

    async def aentry_count(self, thread_id: str) -> int:
        """Same as `entry_count`, on the asyncio client; not asked while this process holds
        the thread's lease and knows what it wrote there."""
        tail = self.tails.get(thread_id)
        if tail is not None:
            return tail.count
        client = await self.async_client()
        count = await client.hget(self.key("thread", thread_id), "entries")
        return int(count) if count is not None else 0

    async def athread_owner(self, thread_id: str) -> str | None:
        """Same as `thread_owner`, on the asyncio client: one HMGET."""
        client = await self.async_client()
        count, owner = await client.hmget(self.key("thread", thread_id), ["entries", "owner"])
        if count is None:
            raise missing_thread(thread_id, self._where())
        return str(owner) if owner is not None else None

    def last_entry(self, thread_id: str) -> Mapping[str, Any] | None:
        """The last saved entry of `thread_id`, or None."""
        text = self.client.lindex(self.key("entries", thread_id), -1)
        return json.loads(text) if text is not None else None

    async def aload_kept_state(self, thread_id: str) -> Mapping[str, Any] | None:
        """Same as `load_kept_state`, on the asyncio client. Under this process's lease of
        the thread, the thread is read in the same round trip (a server reads it next), and
        `aload_thread` then answers from what was read, until this process writes it."""
        token = self.tails.token(thread_id)
        async with (await self.async_client()).pipeline(transaction=True) as pipe:
            self.kept_reads(pipe, thread_id)
            learn = token is not None and self.tails.get(thread_id) is None
            if learn:
                self._thread_reads(pipe, thread_id)
            base, changes, *replies = await pipe.execute()
        if learn:
            with contextlib.suppress(LookupError):
                self._learnt(thread_id, replies, token)
        return None if base is None else fold_texts(base, changes)

    async def aload(self, thread_id: str) -> State:
        """Same as `load`, on the asyncio client."""
        return bound_state(await self.aload_thread(thread_id), self)

    def list_threads(self) -> list[ThreadInfo]:
        """Every thread, in the order they were first saved."""
        ids = [str(id) for id in self.client.zrange(self.key("threads"), 0, -1)]
        return self._thread_infos(ids, transaction=False)  # (those not deleted since)

    def run_thread(self, run_id: str) -> str:
        """The thread run `run_id` belongs to; LookupError if there is no such run."""
        thread_id = self.client.hget(self.key("run", run_id), "thread_id")
        if thread_id is None:
            raise missing_run(run_id, self._where())
        return str(thread_id)

    def load_run_record(self, run_id: str) -> Mapping[str, Any]:
        """The saved record of `run_id` (JSON); LookupError if there is none."""
        return run_record(run_id, self.client.hget(self.key("run", run_id), "body"),
                          self._where())

    async def aload_run_record(self, run_id: str) -> Mapping[str, Any]:
        """Same as `load_run_record`, on the asyncio client."""
        client = await self.async_client()
        body = await client.hget(self.key("run", run_id), "body")
        return run_record(run_id, body, self._where())

    def load_audit(self, run_id: str) -> list[Mapping[str, Any]]:
        """The audit records of `run_id`, in order of seq."""
        return [json.loads(text) for text in self.client.lrange(self.key("audit", run_id), 0, -1)]


def _tail(replies: list[Any]) -> Tail:
    """The tail of a thread from the replies of HGET entries and LINDEX -1."""
    count, last = replies
    return Tail(int(count) if count is not None else 0,
                json.loads(last) if last is not None else None)
