"""Subagents as seeds 000 and 004 word them: a subagent's State runs again from any entry point
and keeps its parent link; a subagent that waits for a person pauses its parent's run."""

from __future__ import annotations

from typing import Any

import pytest

from pyox_agents import Agent, Message, State
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.stores import MemoryStore, SQLiteStore


def _child_of(parent: State) -> str:
    (entry,) = [e for e in parent.history if e.kind == "tool_result"]
    (child_id,) = entry.child_ids
    return child_id


def _ran_subagent(store: Any = None) -> tuple[State, str]:
    """A parent conversation whose one tool call ran the `researcher` subagent."""
    sub = Agent(ScriptedModel(["found it in b.py"]), name="researcher").as_tool()
    model = ScriptedModel([ToolCall("researcher", {"task": "find the bug"}, id="c1"), "done"])
    parent = Agent(model, tools=[sub], store=store).run("go").conversation
    return parent, _child_of(parent)


def _continue(child: State) -> str:
    child.add_message(Message.user("and the fix?"))
    answer = Agent(ScriptedModel(["change line 3"])).run(child).answer
    assert isinstance(answer, str)
    return answer


def test_a_subagents_state_continues_with_agent_run() -> None:
    """Seed 000: a State is what you "pass to agent.run ... to continue it"; a subagent's State
    (state.child(id)) is one, and keeps its parent link."""
    parent, child_id = _ran_subagent()
    child = parent.child(child_id)
    assert _continue(child) == "change line 3"
    assert (child.parent_id, child.parent_call_id) == (parent.id, "c1")
    assert [e.parent_id for e in child.history if e.kind == "run_start"] == [parent.id] * 2


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_loaded_subagent_state_continues_with_agent_run(kind: str, tmp_path: Any) -> None:
    """Seed 000: "Continue a saved State with store.load(id)"; a subagent's is no exception."""
    store = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "s.db")
    parent, child_id = _ran_subagent(store)
    loaded = store.load(child_id)
    child = Agent(ScriptedModel(["change line 3"]), store=store)
    loaded.add_message(Message.user("and the fix?"))
    assert child.run(loaded).answer == "change line 3"
    again = store.load(child_id)
    assert (again.parent_id, again.parent_call_id) == (parent.id, "c1")
    assert again.answer == "change line 3"


def test_a_fork_of_a_subagents_state_runs() -> None:
    """Seed 000 l.282-290: `attempt = state.fork(); agent.run(attempt)`, here for a subagent's
    State: the fork runs, and the State it was taken from is untouched."""
    parent, child_id = _ran_subagent()
    child = parent.child(child_id)
    before = child.snapshot()
    attempt = child.fork()
    assert _continue(attempt) == "change line 3"
    assert child.snapshot() == before
    assert attempt.parent_id == parent.id


def test_a_subagents_state_retries_after_a_failed_run() -> None:
    """Seed 000 l.13: a State is passed to agent.run "to continue it after Ctrl+C", or after a
    failure: the retry of a subagent's State runs."""
    parent, child_id = _ran_subagent()
    child = parent.child(child_id)
    child.add_message(Message.user("and the fix?"))
    failing = Agent(ScriptedModel([]))
    with pytest.raises(Exception, match="ran out of replies"):
        failing.run(child)
    assert Agent(ScriptedModel(["retried"])).run(child).answer == "retried"
