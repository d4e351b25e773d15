"""`@tool`: names, descriptions, schemas and options from a plain function."""

from __future__ import annotations

from typing import Literal

import pydantic
import pytest

from pyox_agents import Agent, RunContext, Tool, tool


def test_tool_takes_name_description_and_schema_from_the_function() -> None:
    @tool
    def add_todo(ctx: RunContext, text: str, priority: int = 1) -> str:
        """Add a todo to the list.

        Args:
            text: What to do.
            priority: 1 is most urgent.
        """
        return text

    assert add_todo.name == "add_todo"
    assert add_todo.description == "Add a todo to the list."
    assert add_todo.takes_ctx
    schema = add_todo.parameters
    assert schema["required"] == ["text"]
    assert schema["properties"]["text"] == {
        "description": "What to do.",
        "title": "Text",
        "type": "string",
    }
    assert schema["properties"]["priority"]["default"] == 1
    assert "ctx" not in schema["properties"]


def test_tool_options_are_kept() -> None:
    @tool(name="buy", idempotent=True, approval=True)
    def purchase(item: Literal["pen", "ink"]) -> str:
        """Buy an item."""
        return item

    assert (purchase.name, purchase.idempotent, purchase.approval) == ("buy", True, True)
    assert not purchase.takes_ctx
    assert purchase.parameters["properties"]["item"]["enum"] == ["pen", "ink"]


def test_pydantic_model_arguments_are_validated_and_converted() -> None:
    class Item(pydantic.BaseModel):
        name: str
        qty: int

    @tool
    def add_item(item: Item) -> str:
        """Add to cart."""
        return item.name

    converted = add_item.validate({"item": {"name": "pen", "qty": "2"}})
    assert converted["item"] == Item(name="pen", qty=2)


def test_a_function_with_star_args_is_refused() -> None:
    def varargs(*items: str) -> str:
        """Bad."""
        return ""

    with pytest.raises(TypeError, match="tools take named parameters only"):
        tool(varargs)


def test_an_invalid_tool_name_is_refused() -> None:
    with pytest.raises(ValueError, match="must be 1 to 64 letters"):
        tool(name="has space")(lambda: None)


def test_agent_refuses_undecorated_functions_and_duplicate_names() -> None:
    def plain() -> None:
        """Plain."""

    with pytest.raises(TypeError, match="decorate it"):
        Agent(model="x", tools=[plain])  # type: ignore[list-item]
    one: Tool = tool(name="same")(plain)
    with pytest.raises(ValueError, match="two tools are named 'same'"):
        Agent(model="x", tools=[one, one])
