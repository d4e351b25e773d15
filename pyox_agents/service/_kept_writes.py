"""Writing a thread's kept state: only the new versions' changes when the store holds the
version they extend, the whole state otherwise.

A person's edit of one item of a 100,000-item state, written whole, cost the store a walk and
the JSON text of all of it: nearly all of the edit. `ThreadState` knows the version the store
holds (the one it was loaded or last written at) and the changes of the versions added since,
so those are appended (`Store.append_kept_changes`). The store refuses an append that does not
extend the version it holds (an earlier write did not land, or another writer kept one): the
state is then written whole, as it always was, fenced by the same lease token.
"""

from __future__ import annotations

from pyox_agents.service._thread_state import ThreadState
from pyox_agents.stores import Store, StoreConflict

__all__ = ["write_kept"]


async def write_kept(store: Store, thread_id: str, kept: ThreadState,
                     token: int | None = None) -> None:
    """Keep `kept` as `thread_id`'s state in `store`: appended as its new versions' changes,
    or written whole; then `kept` knows the store holds its version.

    Raises:
        StoreConflict: `token` is not the current holder's of the thread's lease (nothing was
            written).
        StoreUnavailable: the store cannot be written.
    """
    unstored = kept.unstored()
    if unstored is not None and _appends(store):
        since, changes = unstored
        try:
            await store.aappend_kept_changes(thread_id, since, changes, token)
        except StoreConflict:  # not at `since`; or fenced, which the whole write says again
            pass
        else:
            kept.stored()
            return
    await store.awrite_kept_state(thread_id, kept.to_json(), token)
    kept.stored()


def _appends(store: Store) -> bool:
    """Whether `store` has its own append (a user's Store without one is written whole from
    what is in memory, rather than read back to apply the changes)."""
    kind = type(store)
    return (kind.append_kept_changes is not Store.append_kept_changes
            or kind.aappend_kept_changes is not Store.aappend_kept_changes)
