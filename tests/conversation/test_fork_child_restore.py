"""fork, child / achild (subagent States) and restore."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pyox_agents.state.conversation import State, StateSnapshot, StoppedByLimit
from pyox_agents.state.messages import Message, Reply, ToolCall, Usage


def think(state: State, *calls: ToolCall, text: str = "", usage: Usage | None = None) -> None:
    state._begin_think(len(state.messages), [c.name for c in calls])
    state._end_think(Reply(text, calls, usage=usage or Usage()))


class DictStore:
    """A store as the State sees one: `load(id)` / `aload(id)` of saved histories."""

    def __init__(self) -> None:
        self.saved: dict[str, Any] = {}

    def save(self, state: State) -> None:
        self.saved[state.id] = [e.to_json() for e in state.history]

    def load(self, state_id: str) -> State:
        from pyox_agents.state.history import entry_from_json

        return State(id=state_id, history=[entry_from_json(r) for r in self.saved[state_id]])

    async def aload(self, state_id: str) -> State:
        return self.load(state_id)


class AsyncOnlyStore(DictStore):
    async_only = True


def with_subagent(child_id: str = "sub-1") -> tuple[State, State]:
    """A parent whose `research` call ran a subagent State `child_id` (registered in memory)."""
    parent = State(id="parent", messages=[Message.user("research it")])
    call = ToolCall("research", {}, id="call_r")
    think(parent, call)
    child = State(id=child_id, messages=[Message.user("sub task")])
    child._start_run(parent_id=parent.id, parent_call_id=call.id)
    think(child, text="sub answer", usage=Usage(5, 5, 1, 1.0))
    parent._register_child(child)
    parent._add_tool_result(call, "ok", child.answer, is_error=False, child_ids=(child.id,),
                            usage=child.usage)
    return parent, child


# --- fork --------------------------------------------------------------------------------------


def test_fork_has_the_same_snapshot_and_a_new_id() -> None:
    state, _ = with_subagent()
    copy = state.fork()
    assert copy.id != state.id
    assert copy.snapshot() == state.snapshot() and copy.history == state.history


def test_fork_is_independent() -> None:
    state = State(messages=[Message.user("a")], extra_data={"x": 1})
    before = state.snapshot()
    copy = state.fork()
    copy.add_message(Message.user("try another path"))
    with copy.edit_extra_data() as data:
        data["x"] = 2
    think(copy, text="done")
    assert state.snapshot() == before
    assert copy.extra_data == {"x": 2}


def test_fork_of_a_finished_state_is_finished() -> None:
    state = State()
    state.finish("x")
    assert state.fork().finished


def test_fork_refuses_while_the_model_is_waited_on() -> None:
    state = State(messages=[Message.user("a")])
    state._begin_think(1, [])
    with pytest.raises(ValueError, match="cannot fork: the model is being waited on"):
        state.fork()
    state._end_think(Reply("ok"))
    state.fork()


def test_state_from_a_snapshot_taken_while_waiting_is_a_plain_replay() -> None:
    state = State(messages=[Message.user("a")])
    state._begin_think(1, [])
    rebuilt = State(history=state.snapshot().history)
    assert rebuilt.turn == 1 and rebuilt.snapshot() == state.snapshot()


def test_fork_shares_the_children_it_ran() -> None:
    state, child = with_subagent()
    assert state.fork().child("sub-1") is child


def test_fork_has_no_store_but_opens_children_from_the_loaded_ones() -> None:
    store = DictStore()
    state, child = with_subagent()
    store.save(state)
    store.save(child)
    loaded = store.load(state.id)
    loaded._bind_store(store)
    fork = loaded.fork()
    assert fork._store is None
    assert fork.child("sub-1").answer == "sub answer"


# --- child / achild ----------------------------------------------------------------------------


def test_child_is_the_very_state_while_in_memory() -> None:
    state, child = with_subagent()
    assert state.child("sub-1") is child
    assert state.child("sub-1") is state.child("sub-1")


def test_child_of_an_id_that_is_not_a_child_is_a_key_error() -> None:
    state, _ = with_subagent()
    with pytest.raises(KeyError, match="'other' is not a child of State 'parent'"):
        state.child("other")


def test_a_grandchild_is_not_a_child() -> None:
    state, child = with_subagent()
    call = ToolCall("deeper", {}, id="call_d")
    think(child, call)
    grandchild = State(id="sub-2")
    child._register_child(grandchild)
    child._add_tool_result(call, "ok", "x", is_error=False, child_ids=("sub-2",))
    assert state.child("sub-1").child("sub-2") is grandchild
    with pytest.raises(KeyError, match="not a child"):
        state.child("sub-2")


def test_a_call_that_has_not_closed_has_no_child_yet() -> None:
    state = State(messages=[Message.user("a")])
    think(state, ToolCall("research", {}))
    state._register_child(State(id="running"))
    with pytest.raises(KeyError, match="not a child"):
        state.child("running")


def test_child_not_in_memory_without_a_store_is_a_value_error() -> None:
    state, _ = with_subagent()
    rebuilt = State(history=state.history)
    with pytest.raises(ValueError, match="not in memory and no store is bound"):
        rebuilt.child("sub-1")


def test_child_is_loaded_from_the_bound_store_and_not_cached() -> None:
    store = DictStore()
    state, child = with_subagent()
    store.save(child)
    rebuilt = State(history=state.history)
    rebuilt._bind_store(store)
    loaded = rebuilt.child("sub-1")
    assert loaded.snapshot() == child.snapshot() and loaded.parent_id == "parent"
    assert rebuilt.child("sub-1") is not loaded


def test_child_with_an_async_only_store_is_a_type_error() -> None:
    state, _ = with_subagent()
    rebuilt = State(history=state.history)
    rebuilt._bind_store(AsyncOnlyStore())
    message = "The store works only asynchronously. Use `achild`."
    with pytest.raises(TypeError, match=re.escape(message)):
        rebuilt.child("sub-1")


def test_child_missing_from_the_store_is_a_lookup_error() -> None:
    state, _ = with_subagent()
    rebuilt = State(history=state.history)
    rebuilt._bind_store(DictStore())
    with pytest.raises(LookupError, match="has no State 'sub-1'") as raised:
        rebuilt.child("sub-1")
    assert not isinstance(raised.value, KeyError)


@pytest.mark.anyio
async def test_achild_loads_with_aload_from_an_async_only_store() -> None:
    store = AsyncOnlyStore()
    state, child = with_subagent()
    store.save(child)
    rebuilt = State(history=state.history)
    rebuilt._bind_store(store)
    loaded = await rebuilt.achild("sub-1")
    assert loaded.snapshot() == child.snapshot()
    assert await rebuilt.achild("sub-1") is not loaded


@pytest.mark.anyio
async def test_achild_gives_the_same_errors_as_child() -> None:
    state, child = with_subagent()
    assert await state.achild("sub-1") is child
    with pytest.raises(KeyError, match="not a child"):
        await state.achild("nope")
    rebuilt = State(history=state.history)
    with pytest.raises(ValueError, match="no store is bound"):
        await rebuilt.achild("sub-1")
    rebuilt._bind_store(AsyncOnlyStore())
    with pytest.raises(LookupError, match="has no State"):
        await rebuilt.achild("sub-1")


# --- restore -----------------------------------------------------------------------------------


def test_restore_goes_back_to_every_value() -> None:
    state = State(messages=[Message.user("a")], extra_data={"x": 1})
    before = state.snapshot()
    think(state, text="answer")
    with state.edit_extra_data() as data:
        data["x"] = 2
    state._stop(StoppedByLimit(1))
    state.finish("done")
    state.restore(before)
    assert (state.messages, state.turn, state.extra_data) == (
        before.messages, before.turn, before.extra_data)
    assert (state.finished, state.answer, state.stopped) == (False, None, None)


def test_restore_keeps_usage_cumulative() -> None:
    state = State(messages=[Message.user("a")])
    before = state.snapshot()
    think(state, text="x", usage=Usage(10, 1, 1, 0.5))
    state.restore(before)
    assert state.usage == Usage(10, 1, 1, 0.5)
    assert state.snapshot() != before


def test_restore_keeps_history_and_records_one_context_change() -> None:
    state = State(messages=[Message.user("a")])
    before = state.snapshot()
    think(state, text="x")
    history = state.history
    state.restore(before)
    assert state.history[: len(history)] == history and len(state.history) == len(history) + 1
    entry = state.history[-1]
    assert entry.kind == "context_change" and entry.change == "restore"
    assert entry.content.history_length == len(before.history)  # type: ignore[union-attr]


def test_restored_state_rebuilds_from_its_history() -> None:
    state = State(messages=[Message.user("a")])
    before = state.snapshot()
    think(state, text="x")
    state.restore(before)
    state.add_message(Message.user("b"))
    assert State(history=state.history).snapshot() == state.snapshot()


def test_restore_refuses_what_is_not_a_snapshot() -> None:
    with pytest.raises(TypeError, match="takes a StateSnapshot"):
        State().restore(State())  # type: ignore[arg-type]


def test_restore_refuses_a_snapshot_of_another_state() -> None:
    other = State(messages=[Message.user("a")]).snapshot()
    with pytest.raises(ValueError, match="not from this State"):
        State(messages=[Message.user("a")]).restore(other)


def test_restore_refuses_while_calls_are_pending() -> None:
    state = State(messages=[Message.user("a")])
    before = state.snapshot()
    think(state, ToolCall("search", {}))
    with pytest.raises(ValueError, match="cannot restore: tool calls are pending"):
        state.restore(before)


def test_restore_refuses_while_the_model_is_waited_on() -> None:
    state = State(messages=[Message.user("a")])
    before = state.snapshot()
    state._begin_think(1, [])
    with pytest.raises(ValueError, match="the model is being waited on"):
        state.restore(before)


def test_restore_refuses_while_a_compaction_is_under_way() -> None:
    state = State(messages=[Message.user("a")])
    before = state.snapshot()
    state._begin_request("compact", 1)
    with pytest.raises(ValueError, match="a compaction is under way"):
        state.restore(before)


def test_restore_refuses_a_snapshot_taken_while_the_model_was_waited_on() -> None:
    state = State(messages=[Message.user("a")])
    state._begin_think(1, [])
    during = state.snapshot()
    state._end_think(Reply("ok"))
    with pytest.raises(ValueError, match="snapshot was taken while the model was being waited"):
        state.restore(during)


def test_restore_works_on_a_fork_with_a_snapshot_from_before_the_fork() -> None:
    state = State(messages=[Message.user("a")])
    before = state.snapshot()
    think(state, text="x")
    fork = state.fork()
    fork.restore(before)
    assert fork.messages == before.messages and state.turn == 1


def test_snapshot_is_frozen() -> None:
    snapshot = State().snapshot()
    assert isinstance(snapshot, StateSnapshot)
    with pytest.raises(AttributeError):
        snapshot.turn = 3  # type: ignore[misc]
