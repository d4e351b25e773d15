"""Every store keeps what a State may hold, lone surrogates included (written escaped)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message

if TYPE_CHECKING:
    from pyox_agents.stores.redis import RedisStore

pytestmark = pytest.mark.anyio

SURROGATE = "report-\udcff.txt"  # os.fsdecode(b"report-\xff.txt")


async def test_redis_store_round_trips_a_state_with_a_lone_surrogate(
        redis_store: RedisStore) -> None:
    """Seed 000: "State(history=snapshot.history) rebuilds the same value, and so does a
    store": the Redis store too loads back a State whose messages quote such a file name."""
    state = State(messages=[Message.user(f"open {SURROGATE}")], extra_data={"é": "ü"})
    state.add_message(Message.user(f"and {SURROGATE}"))
    await redis_store.asave(state)
    loaded = await redis_store.aload(state.id)
    assert loaded.history == state.history
    assert loaded.messages[-1].content == f"and {SURROGATE}"
