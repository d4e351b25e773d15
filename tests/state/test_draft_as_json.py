"""Draft views behave as the dict and list they show: isinstance, json, pydantic, copy.

Seed 004: the state is "one JSON document (usually a dict)" that tools read and change.
"""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pydantic
import pydantic_core
import pytest

from pyox_agents import Agent, RunContext, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.state.draft import Draft
from pyox_agents.state.frozen import freeze
from pyox_agents.state.shared import SharedState

from ..runs import collect, finished, results


def todos_draft() -> Draft:
    return Draft(freeze({"todos": [{"text": "a", "done": False}], "meta": {"n": 1}}))


def test_views_are_dicts_and_lists() -> None:
    """Seed 004: "one JSON document (usually a dict)"."""
    state = todos_draft().root
    assert isinstance(state, dict) and isinstance(state["todos"], list)
    assert isinstance(state["todos"][0], dict) and isinstance(state["meta"], dict)


def test_json_dumps_a_view_as_its_current_value() -> None:
    draft = todos_draft()
    state = draft.root
    state["todos"][0]["done"] = True
    state["todos"].append({"text": "b", "done": False})
    state["meta"]["n"] = 2
    expected = {"todos": [{"text": "a", "done": True}, {"text": "b", "done": False}],
                "meta": {"n": 2}}
    assert json.loads(json.dumps(state)) == expected
    assert json.loads(json.dumps(state["todos"])) == expected["todos"]


def test_pydantic_serialises_and_validates_a_view_as_its_value() -> None:
    draft = todos_draft()
    draft.root["todos"][0]["done"] = True
    draft.root["todos"].append({"text": "b", "done": False})
    value = {"todos": [{"text": "a", "done": True}, {"text": "b", "done": False}],
             "meta": {"n": 1}}
    assert pydantic_core.to_jsonable_python(draft.root) == value

    class Todos(pydantic.BaseModel):
        todos: list[dict[str, Any]]

    assert Todos.model_validate(draft.root).todos == value["todos"]
    assert Todos(todos=draft.root["todos"]).todos == value["todos"]
    assert pydantic.TypeAdapter(list[dict[str, Any]]).validate_python(
        draft.root["todos"]
    ) == value["todos"]


def test_copy_of_a_view_is_a_plain_detached_value() -> None:
    draft = todos_draft()
    shallow = copy.copy(draft.root["todos"])
    shallow.append("x")
    shallow[0]["done"] = True
    deep = copy.deepcopy(draft.root)
    deep["meta"]["n"] = 5
    assert type(shallow) is list and type(deep) is dict and type(deep["todos"][0]) is dict
    assert not draft.changed
    assert draft.root == {"todos": [{"text": "a", "done": False}], "meta": {"n": 1}}
    assert type(copy.copy(draft.root)) is dict
    assert pickle.loads(pickle.dumps(draft.root)) == draft.root


def test_dict_and_list_of_a_view_read_views_that_write_through() -> None:
    draft = todos_draft()
    plain = dict(draft.root)
    plain["todos"].append("x")
    items = list(draft.root["todos"])
    items[0]["done"] = True
    assert draft.value == {"todos": [{"text": "a", "done": True}, "x"], "meta": {"n": 1}}


def test_committed_state_holds_no_views() -> None:
    state = SharedState({"todos": [{"n": 0}], "meta": {"n": 1}})
    draft = state.draft()
    draft.root["todos"][0]["n"] = 1
    draft.root["meta"].get("n")
    commit = state.commit(draft)
    assert commit is not None
    assert {type(commit.state).__name__, type(commit.state["todos"]).__name__,  # type: ignore[index,call-overload]
            type(commit.state["todos"][0]).__name__,  # type: ignore[index,call-overload]
            type(commit.state["meta"]).__name__} == {"FrozenDict", "FrozenList"}  # type: ignore[index,call-overload]


@pytest.mark.anyio
async def test_inside_a_tool_the_state_is_the_dict_and_list_it_shows() -> None:
    """Seed 004: "A run can carry a state: one JSON document (usually a dict) that tools read
    and change"."""

    class Todo(pydantic.BaseModel):
        text: str
        done: bool

    class Plan(pydantic.BaseModel):
        todos: list[Todo]

    @tool
    def check_todos(ctx: RunContext) -> str:
        """Mark the first todo done and describe the state."""
        ctx.state["todos"][0]["done"] = True
        assert isinstance(ctx.state, dict) and isinstance(ctx.state["todos"], list)
        plan = Plan.model_validate(ctx.state)
        kept = copy.deepcopy(ctx.state)
        kept["todos"].clear()
        return json.dumps(ctx.state) + " " + plan.model_dump_json()

    agent = Agent(model=ScriptedModel([ToolCall("check_todos", {}), "ok"]), tools=[check_todos])
    events = await collect(agent, state={"todos": [{"text": "a", "done": False}]})
    dumped = '{"todos": [{"text": "a", "done": true}]}'
    [result] = results(events).values()
    assert result.error is None
    assert result.result == f'{dumped} {{"todos":[{{"text":"a","done":true}}]}}'
    assert finished(events).state == {"todos": [{"text": "a", "done": True}]}
