"""The store every process of a multiprocess test shares, from its URL."""

from __future__ import annotations

from pyox_agents.stores import Store


def shared_store(url: str, prefix: str) -> Store:
    """The store at `url`: a RedisStore with keys under `prefix`, or a PostgresStore whose tables
    are in schema `prefix`."""
    if url.startswith("postgresql://"):
        from pyox_agents.stores.postgres import PostgresStore

        return PostgresStore(url, schema=prefix)
    from pyox_agents.stores.redis import RedisStore

    return RedisStore(url, prefix=prefix)

