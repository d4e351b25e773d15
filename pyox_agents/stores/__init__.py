"""Stores: where conversations, runs and audit records are kept.

`RedisStore` and `PostgresStore` are imported on first use, so `redis` and `psycopg` stay
optional extras: without them, `from pyox_agents.stores import RedisStore` (or `PostgresStore`)
raises an ImportError naming the extra to install.
"""

from typing import TYPE_CHECKING, Any

from pyox_agents.stores._outages import StoreUnavailable
from pyox_agents.stores._owned import page_key
from pyox_agents.stores.base import (
    Checkpoint,
    LoadedThread,
    SharedRuns,
    StepRecord,
    Store,
    StoreConflict,
    ThreadInfo,
)
from pyox_agents.stores.memory import MemoryStore
from pyox_agents.stores.sqlite import SQLiteStore

if TYPE_CHECKING:
    from pyox_agents.stores.postgres import PostgresStore
    from pyox_agents.stores.redis import RedisStore

__all__ = [
    "Checkpoint",
    "LoadedThread",
    "MemoryStore",
    "PostgresStore",
    "RedisStore",
    "SQLiteStore",
    "SharedRuns",
    "StepRecord",
    "Store",
    "StoreConflict",
    "StoreUnavailable",
    "ThreadInfo",
    "page_key",
]


def __getattr__(name: str) -> Any:
    """`RedisStore` or `PostgresStore`, imported when first asked for (each needs its extra)."""
    if name == "RedisStore":
        from pyox_agents.stores.redis import RedisStore

        return RedisStore
    if name == "PostgresStore":
        from pyox_agents.stores.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
