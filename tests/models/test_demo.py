"""DemoModel drives a todo list and a cart with whatever tools it is given, offline."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pyox_agents import Agent, RunContext, TextDelta, ToolCall, ToolCallStarted, ToolError, tool
from pyox_agents.demo import demo_agents
from pyox_agents.models import DemoModel, Message, resolve_model
from pyox_agents.models.base import ModelRequest, TextChunk, ToolCallChunk
from pyox_agents.models.demo import decide

from ..runs import replay

pytestmark = pytest.mark.anyio


# -- a todo list: tools take the todo's text ----------------------------------------------------


def _find(todos: Any, item: str) -> int:
    if item.isdigit() and 1 <= int(item) <= len(todos):
        return int(item) - 1
    for index, todo in enumerate(todos):
        if todo["text"] == item:
            return index
    raise ToolError(f"there is no todo {item!r}")


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo to the list.

    Args:
        text: what to do
    """
    ctx.state["todos"].append({"text": text, "done": False})
    return f"added {text}"


@tool
def complete_todo(ctx: RunContext, item: str) -> str:
    """Mark a todo as done.

    Args:
        item: the todo's text, or its number on the list
    """
    ctx.state["todos"][_find(ctx.state["todos"], item)]["done"] = True
    return "done"


@tool
def remove_todo(ctx: RunContext, item: str) -> str:
    """Delete a todo.

    Args:
        item: the todo's text, or its number on the list
    """
    del ctx.state["todos"][_find(ctx.state["todos"], item)]
    return "removed"


@tool
def list_todos(ctx: RunContext) -> Any:
    """Show the todos."""
    return ctx.state["todos"]


todo_agent = Agent(model=DemoModel(), tools=[add_todo, complete_todo, remove_todo, list_todos])


def todos(*texts: str, done: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"todos": [{"text": t, "done": t in done} for t in texts]}


async def test_add_two_items_makes_two_parallel_calls_and_says_what_it_did() -> None:
    start = todos()
    result = await todo_agent.arun("Please add milk and eggs to my list", state=start)
    started = [e for e in result.events if isinstance(e, ToolCallStarted)]
    assert [e.name for e in started] == ["add_todo", "add_todo"]
    assert sorted(t["text"] for t in result.state["todos"]) == ["eggs", "milk"]
    assert result.answer == "Added milk and eggs."  # in the order asked, whatever ran first
    assert replay(start, result.events) == result.state


async def test_done_with_an_item_completes_it() -> None:
    result = await todo_agent.arun("done with milk", state=todos("milk", "eggs"))
    assert result.state == todos("milk", "eggs", done=("milk",))
    assert result.answer == "Marked milk as done."


async def test_complete_by_number_passes_the_number_to_a_text_argument() -> None:
    result = await todo_agent.arun("complete 2", state=todos("milk", "eggs"))
    assert result.state == todos("milk", "eggs", done=("eggs",))


async def test_remove_deletes_the_item() -> None:
    result = await todo_agent.arun("remove eggs", state=todos("milk", "eggs"))
    assert result.state == todos("milk")
    assert result.answer == "Removed eggs."


async def test_a_failed_tool_is_reported_in_the_summary() -> None:
    result = await todo_agent.arun("remove bananas", state=todos("milk"))
    assert result.state == todos("milk")
    assert result.answer.startswith("I couldn't remove bananas:")
    assert "there is no todo 'bananas'" in result.answer


@pytest.mark.parametrize("prompt", ["what's on my list?", "Show my list", "list"])
async def test_show_reads_the_list_and_summarises_it(prompt: str) -> None:
    result = await todo_agent.arun(prompt, state=todos("milk", "eggs", done=("eggs",)))
    assert [e.name for e in result.events if isinstance(e, ToolCallStarted)] == ["list_todos"]
    assert result.answer == "Here's what's on your list: 1. milk; 2. eggs (done)."


async def test_anything_else_gets_a_helpful_reply_and_no_tool_call() -> None:
    result = await todo_agent.arun("tell me a joke", state=todos())
    assert not any(isinstance(e, ToolCallStarted) for e in result.events)
    assert '"add milk and eggs"' in result.answer
    assert '"done with milk"' in result.answer
    assert '"remove eggs"' in result.answer


async def test_replies_stream_word_by_word() -> None:
    result = await todo_agent.arun("hello", state=todos())
    deltas = [e.delta for e in result.events if isinstance(e, TextDelta)]
    assert len(deltas) > 5 and "".join(deltas) == result.answer


async def test_the_same_conversation_gets_the_same_answer() -> None:
    first = await todo_agent.arun("add bread, butter and jam", state=todos())
    second = await todo_agent.arun("add bread, butter and jam", state=todos())
    assert first.answer == second.answer == "Added bread, butter and jam."
    texts = [[t["text"] for t in r.state["todos"]] for r in (first, second)]
    assert sorted(texts[0]) == sorted(texts[1]) == ["bread", "butter", "jam"]


# -- a cart: other tool names, a quantity, and removal by number ----------------------------------


@tool
def add_item(ctx: RunContext, name: str, quantity: int = 1) -> str:
    """Put a product in the shopping cart.

    Args:
        name: the product
        quantity: how many
    """
    ctx.state["cart"].append({"name": name, "quantity": quantity})
    return "ok"


@tool
def delete_item(ctx: RunContext, index: int) -> str:
    """Take a product out of the cart.

    Args:
        index: its number in the cart, from 1
    """
    del ctx.state["cart"][index - 1]
    return "ok"


@tool
def get_cart(ctx: RunContext) -> Any:
    """The cart's contents."""
    return {"cart": ctx.state["cart"]}


cart_agent = Agent(model="demo", tools=[add_item, delete_item, get_cart])


async def test_a_leading_count_fills_the_quantity_argument() -> None:
    result = await cart_agent.arun("add 2 apples and bread", state={"cart": []})
    assert sorted(result.state["cart"], key=lambda i: i["name"]) == [
        {"name": "apples", "quantity": 2},
        {"name": "bread", "quantity": 1},
    ]


async def test_a_number_goes_to_an_integer_argument() -> None:
    cart = {"cart": [{"name": "apples", "quantity": 2}, {"name": "bread", "quantity": 1}]}
    result = await cart_agent.arun("remove #1", state=cart)
    assert result.state == {"cart": [{"name": "bread", "quantity": 1}]}
    assert result.answer == "Removed #1."


async def test_text_for_a_tool_that_takes_only_a_number_asks_for_the_number() -> None:
    result = await cart_agent.arun("remove bread", state={"cart": [{"name": "bread"}]})
    assert "needs its number" in result.answer
    assert result.state == {"cart": [{"name": "bread"}]}


async def test_the_cart_is_summarised_with_quantities() -> None:
    cart = {"cart": [{"name": "apples", "quantity": 2}, {"name": "bread", "quantity": 1}]}
    result = await cart_agent.arun("what's in my cart?", state=cart)
    assert result.answer == "Here's what's on your list: 1. 2 × apples; 2. bread."


async def test_a_missing_kind_of_tool_is_said_plainly() -> None:
    result = await cart_agent.arun("done with apples", state={"cart": []})
    assert result.answer.startswith("I can't mark as done items here")


def test_an_agent_without_tools_says_it_has_none() -> None:
    reply = decide([Message.user("add milk")], [])
    assert "none of my tools" in reply.text and not reply.tool_calls


def test_the_demo_name_resolves_to_the_demo_model() -> None:
    assert isinstance(resolve_model("demo"), DemoModel)


def test_without_a_read_tool_it_reads_the_state_shown_in_the_instructions() -> None:
    state = {"todos": [{"text": "milk", "done": True}], "cart": [{"name": "tea", "qty": 3}]}
    system = Message.system(f"Help with the list.\nThe current state:\n{json.dumps(state)}")
    reply = decide([system, Message.user("show my cart")], [add_todo.spec])
    assert reply.text == "Here's what I see. cart: 1. 3 × tea."
    reply = decide([system, Message.user("what's on my list?")], [add_todo.spec])
    assert reply.text == "Here's what I see. todos: 1. milk (done)."


async def test_a_read_result_with_several_lists_shows_each() -> None:
    @tool
    def show_state(ctx: RunContext) -> Any:
        """The current state."""
        return ctx.state

    agent = Agent(model=DemoModel(), tools=[add_todo, show_state])
    result = await agent.arun("what do I have?", state={"todos": [], "cart": ["tea"]})
    assert result.answer == "Here's what I see. todos: empty. cart: 1. tea."


async def test_a_note_of_the_persons_edits_after_the_tool_results_is_no_new_request() -> None:
    """Rule: the runtime tells the model of a person's edits made during the run as a system
    note after the tool results (`Agent(state_note=...)`); the demo model (the demo's own rules
    too) answers the conversation: it sums up the results, it does not call the tools again."""
    shop = demo_agents()["demo"]
    specs = [t.spec for t in shop.tools.values()]
    call = ToolCall("add_to_cart", {"name": "eggs"}, id="call-1")
    messages = [Message.user("add eggs to my cart"), Message.assistant(tool_calls=(call,)),
                Message.tool(call, "added 1 x eggs to the cart"),
                Message.system("The person changed the shared state since your last turn: "
                               "set /todos/0/done to true")]
    for model in (shop.model, DemoModel()):
        assert isinstance(model, DemoModel)
        chunks = [c async for c in model.stream(ModelRequest(messages, specs))]
        text = "".join(c.delta for c in chunks if isinstance(c, TextChunk))
        assert text == "Added eggs." and not any(isinstance(c, ToolCallChunk) for c in chunks)
