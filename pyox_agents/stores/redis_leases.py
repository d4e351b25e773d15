"""The per-thread leases of `RedisStore`, with their fencing tokens: what keeps two server
processes from running one thread at once.

`lease:{thread_id}` (a hash that expires) holds the holder's owner and token; tokens come from
the `lease-tokens` counter, so each acquisition's is greater than any given before. Taking or
giving up a lease also tells the store's `tails` (`redis_tails.py`).
"""

from __future__ import annotations

from typing import Any

from pyox_agents.stores.redis_connection import Call, RedisConnection, milliseconds

__all__ = ["ThreadLeases"]


class ThreadLeases(RedisConnection):
    """The thread leases of a RedisStore (which is one of these)."""

    # -- leases ---------------------------------------------------------------------------------

    def _acquire(self, thread_id: str, owner: str, ttl: float) -> Call:
        return Call("acquire_lease", [self.key("lease", thread_id), self.key("lease-tokens")],
                    [owner, milliseconds(ttl, "ttl")])

    def _renew(self, thread_id: str, owner: str, token: int, ttl: float) -> Call:
        return Call("renew_lease", [self.key("lease", thread_id)],
                    [owner, str(token), milliseconds(ttl, "ttl")])

    def _release(self, thread_id: str, owner: str, token: int) -> Call:
        return Call("release_lease", [self.key("lease", thread_id)], [owner, str(token)])

    async def aacquire_lease(self, thread_id: str, owner: str, ttl: float) -> int | None:
        """Take the lease of `thread_id` for `ttl` seconds; its fencing token, or None if
        another owner holds it.

        Every acquisition gets a token greater than any given before, also when `owner`
        already held the lease (its older token is then stale). A holder that dies loses the
        lease `ttl` seconds after it last took or renewed it.
        """
        return self._acquired(thread_id,
                              await self.arun_script(self._acquire(thread_id, owner, ttl)))

    def _acquired(self, thread_id: str, reply: Any) -> int | None:
        if reply is None:
            return None
        self.tails.acquired(thread_id, int(reply))
        return int(reply)

    async def arenew_lease(self, thread_id: str, owner: str, token: int, ttl: float) -> bool:
        """Keep the lease `ttl` more seconds; False if `owner` with `token` no longer holds it."""
        return self._renewed(thread_id, token,
                             await self.arun_script(self._renew(thread_id, owner, token, ttl)))

    def _renewed(self, thread_id: str, token: int, reply: Any) -> bool:
        if not reply:
            self.tails.released(thread_id, token)
        return bool(reply)

    async def arelease_lease(self, thread_id: str, owner: str, token: int) -> bool:
        """Give the lease up; False (and nothing changes) if `owner` with `token` does not hold
        it any more."""
        self.tails.released(thread_id, token)
        return bool(await self.arun_script(self._release(thread_id, owner, token)))

    def lease_holder(self, thread_id: str) -> tuple[str, int] | None:
        """The owner and token of the lease of `thread_id`, or None if nobody holds it."""
        owner, token = self.client.hmget(self.key("lease", thread_id), ["owner", "token"])
        return (str(owner), int(token)) if owner is not None and token is not None else None
