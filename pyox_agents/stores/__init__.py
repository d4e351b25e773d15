"""Stores: where conversations, runs and audit records are kept.

`RedisStore` is imported on first use, so `redis` stays an optional extra: without it,
`from pyox_agents.stores import RedisStore` raises an ImportError naming the extra to install.
"""

from typing import TYPE_CHECKING, Any

from pyox_agents.stores.base import (
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
    from pyox_agents.stores.redis import RedisStore

__all__ = [
    "LoadedThread",
    "MemoryStore",
    "RedisStore",
    "SQLiteStore",
    "SharedRuns",
    "StepRecord",
    "Store",
    "StoreConflict",
    "ThreadInfo",
]


def __getattr__(name: str) -> Any:
    """`RedisStore`, imported when first asked for (it needs the `redis` extra)."""
    if name == "RedisStore":
        from pyox_agents.stores.redis import RedisStore

        return RedisStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
