"""The per-thread leases of `RedisStore`, with their fencing tokens: what keeps two server
processes from running one thread at once.

`lease:{thread_id}` (a hash that expires) holds the holder's owner and token; tokens come from
the `lease-tokens` counter, so each acquisition's is greater than any given before. Taking or
giving up a lease also tells the store's `tails` (`redis_tails.py`).
"""

from __future__ import annotations

from pyox_agents.stores._encoding import milliseconds
from pyox_agents.stores.redis_connection import Call, RedisConnection

__all__ = ["ThreadLeases"]


class ThreadLeases(RedisConnection):
    """The thread leases of a RedisStore (which is one of these)."""

    async def aacquire_lease(self, thread_id: str, owner: str, ttl: float) -> int | None:
        """Take the lease of `thread_id` for `ttl` seconds; its fencing token, or None if
        another owner holds it.

        Every acquisition gets a token greater than any given before, also when `owner`
        already held the lease (its older token is then stale). A holder that dies loses the
        lease `ttl` seconds after it last took or renewed it.
        """
        reply = await self.arun_script(Call(
            "acquire_lease", [self.key("lease", thread_id), self.key("lease-tokens")],
            [owner, milliseconds(ttl, "ttl")]))
        if reply is None:
            return None
        self.tails.acquired(thread_id, int(reply))
        return int(reply)

    async def arenew_lease(self, thread_id: str, owner: str, token: int, ttl: float) -> bool:
        """Keep the lease `ttl` more seconds; False if `owner` with `token` no longer holds it."""
        renewed = bool(await self.arun_script(Call(
            "renew_lease", [self.key("lease", thread_id)],
            [owner, str(token), milliseconds(ttl, "ttl")])))
        if not renewed:
            self.tails.released(thread_id, token)
        return renewed

    async def arelease_lease(self, thread_id: str, owner: str, token: int) -> bool:
        """Give the lease up; False (and nothing changes) if `owner` with `token` does not hold
        it any more."""
        self.tails.released(thread_id, token)
        return bool(await self.arun_script(Call("release_lease", [self.key("lease", thread_id)],
                                                [owner, str(token)])))

    def lease_holder(self, thread_id: str) -> tuple[str, int] | None:
        """The owner and token of the lease of `thread_id`, or None if nobody holds it."""
        owner, token = self.client.hmget(self.key("lease", thread_id), ["owner", "token"])
        return (str(owner), int(token)) if owner is not None and token is not None else None
