"""Stores: where conversations, runs and audit records are kept."""

from pyox_agents.stores.base import LoadedThread, StepRecord, Store, StoreConflict, ThreadInfo
from pyox_agents.stores.memory import MemoryStore
from pyox_agents.stores.sqlite import SQLiteStore

__all__ = [
    "LoadedThread",
    "MemoryStore",
    "SQLiteStore",
    "StepRecord",
    "Store",
    "StoreConflict",
    "ThreadInfo",
]
