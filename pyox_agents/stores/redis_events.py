"""Each run's event log in a Redis Stream, and each thread's active run: what lets any server
process replay, then follow, a run that another process executes.

The log of run `run_key` is the stream `events:{run_key}`: one `event` field (JSON text) per
entry, then one `done` entry when the run ended. It expires `events_ttl` seconds after its
latest append, and `done_ttl` seconds after `amark_done`. `active:{thread_id}` holds the run key
of the thread's active run, with a TTL its process keeps extending.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from pyox_agents.stores._encoding import milliseconds
from pyox_agents.stores._shared import check_events, check_keep, log_done
from pyox_agents.stores.redis_connection import Call, RedisConnection

__all__ = ["RunEventLog"]


class RunEventLog(RedisConnection):
    """The run event logs and active-run records of a RedisStore (which is one of these)."""

    async def aappend_events(self, run_key: str, events_json: Sequence[str],
                             keep: int | None = None) -> list[str]:
        """Add events (JSON texts, in order) to the log of run `run_key`; their stream ids.
        With `keep`, the log keeps only its latest `keep` events.

        Raises:
            ValueError: the run was marked done, or `keep` is not a positive int.
        """
        check_events(events_json, "aappend_events")
        check_keep(keep)
        ids = await self.arun_script(Call(
            "append_events", [self.key("events", run_key)],
            [milliseconds(self.events_ttl, "events_ttl"), keep or 0, *events_json]))
        if ids is None:
            raise log_done(run_key)
        return [str(id) for id in ids]

    async def aread_events(self, run_key: str, after_id: str = "0") -> list[tuple[str, str]]:
        """The events of run `run_key` after stream id `after_id` ("0": all), as (id, JSON)."""
        client = await self.async_client()
        rows = await client.xrange(self.key("events", run_key), _after(after_id), "+")
        return _events(rows)[0]

    async def alast_event_id(self, run_key: str) -> str:
        """The stream id of the latest entry of run `run_key`'s log ("0" when it has none):
        follow from it to get only the events appended from now on."""
        client = await self.async_client()
        rows = await client.xrevrange(self.key("events", run_key), "+", "-", count=1)
        return str(rows[0][0]) if rows else "0"

    async def follow_events(self, run_key: str, after_id: str = "0",
                            block_ms: int = 5000) -> AsyncIterator[tuple[str, str]]:
        """The events of run `run_key` after `after_id`, those logged then those to come, until
        the run is marked done.

        Waits for new events with `XREAD BLOCK block_ms`, again and again: a run whose process
        died before `amark_done` is followed until its log expires, so bound the wait (or check
        `aget_active`) where that matters.
        """
        key = self.key("events", run_key)
        client = await self.follower_client()
        last = after_id
        # each wait ends within the client's command timeout, so a stuck server is noticed
        block = max(1, min(block_ms, milliseconds(self.command_timeout / 2, "command_timeout")))
        while True:
            reply = await client.xread({key: last}, count=512, block=block)
            rows = _xread_rows(reply)
            events, done = _events(rows)
            for event in events:
                yield event
            if done:
                return
            if rows:
                last = str(rows[-1][0])

    async def amark_done(self, run_key: str, ttl: float | None = None) -> None:
        """End the event log of run `run_key`: followers stop, and it expires `ttl` seconds
        later (`done_ttl` by default). Marking it again only sets its expiry again."""
        await self.arun_script(Call("mark_done", [self.key("events", run_key)], [
            milliseconds(self.done_ttl if ttl is None else ttl, "ttl")]))

    async def ais_done(self, run_key: str) -> bool:
        """Whether run `run_key` was marked done (False once its log expired)."""
        client = await self.async_client()
        rows = await client.xrevrange(self.key("events", run_key), "+", "-", count=1)
        return _events(rows)[1]

    async def aend_run(self, thread_id: str, run_key: str, owner: str, token: int,
                       events_json: Sequence[str] = ()) -> bool:
        """End run `run_key` of `thread_id` in one step: log `events_json` (its last events),
        `amark_done`, `aclear_active` and `arelease_lease` (`owner`, `token`) at once, so whoever
        hears the run's end finds its thread free. Events for a log already marked done are
        dropped. Whether the lease was still this owner's (and so was released).
        """
        check_events(events_json, "aend_run")
        self.tails.released(thread_id, token)
        call = Call("end_run", [self.key("events", run_key), self.key("active", thread_id),
                                self.key("lease", thread_id)],
                    [milliseconds(self.done_ttl, "done_ttl"), run_key, owner, str(token),
                     *events_json])
        reply = await self.arun_script(call)
        return bool(int(reply[1]))

    # -- the active run of a thread -------------------------------------------------------------

    async def aset_active(self, thread_id: str, run_key: str, ttl: float) -> None:
        """Record `run_key` as the run active on `thread_id`, for `ttl` seconds (set it again
        to extend it)."""
        client = await self.async_client()
        await client.set(self.key("active", thread_id), run_key, px=milliseconds(ttl, "ttl"))

    async def aget_active(self, thread_id: str) -> str | None:
        """The run key of the run active on `thread_id`, or None."""
        client = await self.async_client()
        run_key = await client.get(self.key("active", thread_id))
        return str(run_key) if run_key is not None else None

    async def aclear_active(self, thread_id: str, run_key: str) -> bool:
        """Forget the active run of `thread_id` if it is still `run_key` (a later run's record
        stays); whether it was."""
        call = Call("clear_active", [self.key("active", thread_id)], [run_key])
        return bool(await self.arun_script(call))


def _after(after_id: str) -> str:
    """The XRANGE start just after stream id `after_id`."""
    return "-" if after_id in ("0", "0-0", "-") else f"({after_id}"


def _xread_rows(reply: Any) -> list[Any]:
    """The rows of the one stream an XREAD asked for: `[[key, rows]]` in RESP2, and
    `{key: [rows]}` in RESP3; None or empty when the wait timed out."""
    if not reply:
        return []
    if isinstance(reply, dict):
        (rows,) = reply.values()
        nested = rows and isinstance(rows[0], list) and (
            not rows[0] or isinstance(rows[0][0], list | tuple))
        return list(rows[0]) if nested else list(rows)
    return list(reply[0][1])


def _events(rows: Any) -> tuple[list[tuple[str, str]], bool]:
    """The (id, JSON) events among stream `rows`, and whether the done mark was among them."""
    events: list[tuple[str, str]] = []
    for id, fields in rows or ():
        if "done" in fields:
            return events, True
        events.append((str(id), str(fields["event"])))
    return events, False

