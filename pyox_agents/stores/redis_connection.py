"""The connections of `RedisStore`: a sync client, an asyncio client per event loop, and the
Lua scripts registered on each; what its parts (`redis.py`, `redis_events.py`) build on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

try:
    import redis
    import redis.asyncio as aredis
    from redis.asyncio.retry import Retry as AsyncRetry
    from redis.backoff import NoBackoff
    from redis.retry import Retry
except ImportError as exc:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "pyox_agents.stores.redis needs redis-py, which is not installed: "
        "pip install 'pyox-agents[redis]'"
    ) from exc

from pyox_agents._redact import redact_text, redact_url
from pyox_agents.stores import redis_scripts
from pyox_agents.stores._outages import StoreUnavailable
from pyox_agents.stores._per_loop import Close, PerLoop
from pyox_agents.stores.redis_tails import ThreadTails

__all__ = ["SCRIPTS", "Call", "LoopClient", "RedisConnection", "outage"]

SCRIPTS = {name.lower(): getattr(redis_scripts, name) for name in redis_scripts.__all__}
"""The Lua scripts by the name a `Call` gives them: `WRITE_STEP` is "write_step"."""


@dataclass(frozen=True, slots=True)
class Call:
    """One call of a Lua script: its name in `SCRIPTS`, its keys and its arguments."""

    script: str
    keys: list[str]
    args: list[str | int]


@dataclass
class LoopClient:
    """The asyncio client of one event loop, with the scripts registered on it."""

    redis: aredis.Redis
    scripts: dict[str, Any]
    followers: aredis.Redis
    """The client of `follow_events`: each follower holds a connection while it waits in
    XREAD BLOCK, so they have their own, one each, and leave `redis`'s to the other calls."""


COMMAND_CONNECTIONS = 256
"""The connections of one loop's client for the other calls; more calls at once wait for one.
A connection is held until its caller reads the reply, which on a loop serving hundreds of
runs takes a while: a run's step writes and event logs all go through these."""

FOLLOWER_CONNECTIONS = 2**31 - 1
"""Followers are not limited here: one connection per run followed (Redis's maxclients)."""


def _identity() -> dict[str, Any]:
    """The CLIENT SETINFO name and version every connection sends, made once: redis-py reads
    its package's metadata again for each connection it opens otherwise (about 1 ms of CPU;
    a pool opens up to `COMMAND_CONNECTIONS` under a burst of runs). Empty on a redis-py
    without `DriverInfo` (before 7), which then does as it always did."""
    try:
        from redis.driver_info import DriverInfo
    except ImportError:  # pragma: no cover - depends on the redis-py installed
        return {}
    return {"driver_info": DriverInfo()}


class RedisConnection:
    """The clients of one RedisStore at `url`, with its keys under `prefix`.

    Sync methods use one `redis.Redis` client (thread-safe, pooled); async ones a
    `redis.asyncio` client of the running event loop, made on first use in that loop.

    Outages are bounded, not retried: a connection that is not made within `connect_timeout`
    seconds, or a command not answered within `command_timeout`, raises `StoreUnavailable`
    at once. redis-py would retry a command three times by default; a step's write that timed
    out may have been applied, so sending it again could apply it twice (or be refused as a
    conflict), and a retried read only makes the person wait longer. The run ends, the request
    gets 503, and the client tries again (docs/guides/deploying.md, "Faults").
    """

    def __init__(self, url: str = "redis://127.0.0.1:6379/0", *, prefix: str = "pyox:",
                 events_ttl: float = 86400.0, done_ttl: float = 3600.0,
                 connect_timeout: float = 2.0, command_timeout: float = 5.0) -> None:
        self.url = url
        self.prefix = prefix
        self.events_ttl = events_ttl
        self.done_ttl = done_ttl
        self.connect_timeout = connect_timeout
        self.command_timeout = command_timeout
        self._identity = _identity()
        self.client = redis.Redis.from_url(
            url, decode_responses=True, socket_connect_timeout=connect_timeout,
            socket_timeout=command_timeout, retry=Retry(NoBackoff(), 0), **self._identity)
        """The sync client (redis-py's `redis.Redis`, decoding replies to str)."""
        self._scripts = {name: self.client.register_script(text)
                         for name, text in SCRIPTS.items()}
        self._loops = PerLoop(self._loop_client,
                              "RedisStore's async methods need a running asyncio event loop "
                              "(redis.asyncio works only on asyncio); call the sync method "
                              "instead")
        self.tails = ThreadTails()
        """What this process knows of the ends of the threads whose leases it holds."""

    def _where(self) -> str:
        """This store, for an error message: its URL and prefix."""
        return f"the RedisStore at {self.url} ({self.prefix!r})"

    def key(self, kind: str, id: str | None = None) -> str:
        """The name of the key of `kind` for `id` (see the key layout in `redis.py`)."""
        return f"{self.prefix}{kind}" if id is None else f"{self.prefix}{kind}:{id}"

    def run_script(self, call: Call) -> Any:
        """Run one of the Lua scripts on the sync client; its raw reply."""
        return self._scripts[call.script](keys=call.keys, args=call.args)

    async def arun_script(self, call: Call) -> Any:
        """Same as `run_script`, on the asyncio client."""
        client = await self._loops.get()
        return await client.scripts[call.script](keys=call.keys, args=call.args)

    async def async_client(self) -> aredis.Redis:
        """The `redis.asyncio` client of the running event loop."""
        return (await self._loops.get()).redis

    async def follower_client(self) -> aredis.Redis:
        """The `redis.asyncio` client of the running event loop for XREAD BLOCK (one connection
        per follower, apart from the pool of the other calls)."""
        return (await self._loops.get()).followers

    async def _loop_client(self) -> tuple[LoopClient, list[Close]]:
        """A new asyncio client for the running loop, and how to close it."""
        # calls beyond the pool wait for a free connection (redis-py's default pool refuses
        # the 101st with "Too many connections"), within the command timeout; outages are
        # bounded and not retried (see the class docstring)
        bounds: dict[str, Any] = {"socket_connect_timeout": self.connect_timeout,
                                  "socket_timeout": self.command_timeout,
                                  "retry": AsyncRetry(NoBackoff(), 0), **self._identity}
        connection = aredis.Redis(
            connection_pool=aredis.BlockingConnectionPool.from_url(
                self.url, decode_responses=True, max_connections=COMMAND_CONNECTIONS,
                timeout=self.command_timeout, **bounds),
            retry=AsyncRetry(NoBackoff(), 0))
        # a follower's XREAD BLOCK waits at most half of command_timeout (redis_events.py),
        # on a connection of its own
        followers = aredis.Redis.from_url(self.url, decode_responses=True,
                                          max_connections=FOLLOWER_CONNECTIONS, **bounds)
        scripts = {name: connection.register_script(text) for name, text in SCRIPTS.items()}
        return (LoopClient(connection, scripts, followers),
                [connection.aclose, followers.aclose])

    def close(self) -> None:
        """Close the sync client and forget the asyncio ones.

        An asyncio client can be closed only on its own loop: each closes when its loop shuts
        down, or earlier with `aclose` (or `async with`) on that loop.
        """
        self.client.close()
        self._loops.forget()

    async def aclose(self) -> None:
        """Close the running loop's asyncio client and the sync client."""
        await self._loops.aclose()
        self.close()

def outage(store: RedisConnection, exc: BaseException) -> StoreUnavailable | None:
    """The `StoreUnavailable` a redis-py error stands for: no connection, no answer in time, a
    server loading its data or a read-only replica; None for any other error."""
    if not isinstance(exc, redis.ConnectionError | redis.TimeoutError | redis.ReadOnlyError
                      | redis.BusyLoadingError):
        return None
    return StoreUnavailable(
        f"Redis at {redact_url(store.url)} is unreachable ({type(exc).__name__}: "
        f"{redact_text(str(exc))}); what was "
        f"saved before stays as it was: try again in a few seconds, and check that "
        f"redis-server runs and answers there (redis-cli -u URL ping)")
