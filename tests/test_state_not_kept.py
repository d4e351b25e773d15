"""Seed 004: "Nothing is stored: your app keeps the state between runs and gives it again."

A run uses the state it is given. What a paused or crashed run needs to resume is kept with that
run until it ends; nothing carries into a new run unless the app gives it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pyox_agents import Agent, RunContext, State, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.state.history import StateChangeEntry, entry_from_json
from pyox_agents.state.messages import Message
from pyox_agents.stores import MemoryStore, SQLiteStore
from pyox_agents.stores.base import Store

seen: list[Any] = []


@tool
def look(ctx: RunContext) -> str:
    """Note the shared state as the tool sees it."""
    seen.append(ctx.state if ctx.state is None else dict(ctx.state))
    return "looked"


@tool
def pay(ctx: RunContext, card: str) -> str:
    """Pay with a card.

    Args:
        card: the card number.
    """
    ctx.state["card"] = card
    return "paid"


@tool(approval=True)
def ship(ctx: RunContext) -> str:
    """Ship the order (a person approves first)."""
    ctx.state["shipped"] = True
    return "shipped"


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "s.sqlite")


def test_a_run_not_given_state_starts_from_an_empty_dict_not_the_last_runs(store: Store) -> None:
    """Seed 004: "Nothing is stored: your app keeps the state between runs and gives it
    again." A card number given to one run must not come back in the next."""
    seen.clear()
    agent = Agent(ScriptedModel([ToolCall("pay", {"card": "4242"}), "paid",
                                 ToolCall("look", {}), "looked"]), tools=[pay, look], store=store)
    first = agent.run("pay", state={"cart": ["tea"]})
    assert first.state == {"cart": ["tea"], "card": "4242"}
    conversation = store.load(first.conversation.id)
    conversation.add_message(Message.user("look"))
    second = agent.run(conversation)
    assert seen == [{}] and second.state == {}
    saved = store.load_thread(conversation.id)
    assert saved.shared_state is None  # the finished runs left nothing behind
    assert not [row for row in saved.entries if row["kind"] == "state_change"]
    assert not [e for e in conversation.history if e.kind == "state_change"]


def test_state_none_is_given_to_tools_as_none() -> None:
    """Seed 004: "Anything JSON works." `None` is JSON: `state=None` gives tools None."""
    seen.clear()
    agent = Agent(ScriptedModel([ToolCall("look", {}), "done"]), tools=[look])
    result = agent.run("look", state=None)
    assert seen == [None] and result.state is None


def test_a_run_not_given_state_gives_tools_an_empty_dict() -> None:
    seen.clear()
    result = Agent(ScriptedModel([ToolCall("look", {}), "done"]), tools=[look]).run("look")
    assert seen == [{}] and result.state == {}


@pytest.mark.parametrize("with_store", [True, False])
def test_a_paused_run_resumes_with_its_state_and_keeps_none_once_it_ends(
        with_store: bool) -> None:
    store = MemoryStore() if with_store else None
    agent = Agent(ScriptedModel([ToolCall("ship", {}), "shipped"]), tools=[ship], store=store)
    paused = agent.run("ship it", state={"order": 7})
    thread = paused.conversation.id
    if store is not None:  # kept with the run while it can resume
        assert store.load_thread(thread).shared_state == {"order": 7}
    done = agent.resume(paused.run_id, approve=True)
    assert done.state == {"order": 7, "shipped": True}
    if store is not None:
        assert store.load_thread(thread).shared_state is None
    else:
        assert len(agent._paused) == 0


def test_a_history_saved_with_state_change_rows_still_loads_and_runs(store: Store) -> None:
    """Histories of earlier versions recorded the shared state; they load, and a new run on them
    starts from the state it is given, not from those rows."""
    seen.clear()
    old = State(id="old")
    old.add_message(Message.user("hello"))
    old._add_state_change("", [{"op": "replace", "path": "", "value": {"card": "1111"}}], 0)
    store.save(old)
    loaded = store.load("old")
    rows = [e for e in loaded.history if isinstance(e, StateChangeEntry)]
    assert len(rows) == 1 and entry_from_json(rows[0].to_json()) == rows[0]
    agent = Agent(ScriptedModel([ToolCall("look", {}), "ok"]), tools=[look], store=store)
    agent.run(loaded, state={"fresh": True})
    assert seen == [{"fresh": True}]
