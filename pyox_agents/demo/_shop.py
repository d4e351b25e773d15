"""The demo agent behind `pyox-agents demo`: a todo list and a shopping cart in one shared state.

The state is `{"todos": [{id, text, done}], "cart": [{id, name, qty}], "orders": [{id, items,
status}]}` (`DemoState`). Every tool changes it in place through `ctx.state`, so each change
reaches the page as an AG-UI `STATE_DELTA` or an AI SDK `data-state` part; the person edits the
same lists on the page, and the next run starts from their edits. `checkout` waits for a
person's approval before it turns the cart into an order.

`shop_agent(model)` makes the agent (`demo_agents(model)` gives it, with the gallery's, by
name). The offline `"demo"` model understands a few phrases ("add milk and eggs to my cart",
"clear completed", "check out", "find a recipe for pancakes", "plan a trip to Rome", "plan my
week", "pack for a beach holiday"); a real model ("openai:gpt-5-mini", "ollama:llama3.2")
follows the instructions below.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from pyox_agents.agent import Agent
from pyox_agents.demo._recipes import find_recipe
from pyox_agents.examples._rules import last_user, model_for
from pyox_agents.models.base import Model, ToolSpec
from pyox_agents.models.demo import decide
from pyox_agents.state.messages import Message, Reply, ToolCall
from pyox_agents.tools import RunContext, ToolError, tool

__all__ = ["AGENT_NAME", "DemoState", "demo_tools", "shop_agent", "shop_reply"]

AGENT_NAME = "demo"
"""The name the demo agent is served under: `/agents/demo/ag-ui`, `/agents/demo/ai-sdk`."""


class Todo(BaseModel):
    """One todo: `done` is ticked by the agent or by the person on the page."""

    id: str
    text: str
    done: bool = False


class CartItem(BaseModel):
    """One line of the cart."""

    id: str
    name: str
    qty: int = Field(default=1, ge=1)


class Order(BaseModel):
    """A cart that was checked out with a person's approval."""

    id: str
    items: list[CartItem]
    status: str = "confirmed"


class DemoState(BaseModel):
    """The demo's shared state; a client may send `{}` or leave lists out (they default empty)."""

    todos: list[Todo] = []
    cart: list[CartItem] = []
    orders: list[Order] = []


INSTRUCTIONS = """\
You help a person with two lists they share with you on a web page: a todo list and a shopping
cart. They edit the same lists by hand, so always work from the current state below, never from
memory. Change the lists only with your tools:
- todos: add_todo, complete_todo, edit_todo, remove_todo, clear_completed;
- cart: add_to_cart (one call per item), remove_from_cart; checkout places the order (the person
  approves or refuses it on the page; if refused, say so and leave the cart as it is);
- show_state returns the current lists.
Refer to items by their id or their exact text. Answer in one or two short sentences.
"""


def _new_id() -> str:
    return uuid.uuid4().hex[:8]


def _items(ctx: RunContext, key: str) -> Any:
    """The list `ctx.state[key]`, made when the state has none yet."""
    if key not in ctx.state:
        ctx.state[key] = []
    return ctx.state[key]


def _find(items: Any, ref: str, field: str) -> int:
    """The index of the item whose id is `ref`, else whose `field` is `ref` (any case)."""
    wanted = ref.strip().lower()
    for index, item in enumerate(items):
        if item["id"] == ref.strip():
            return index
    for index, item in enumerate(items):
        if str(item[field]).strip().lower() == wanted:
            return index
    known = ", ".join(f"{item['id']} ({item[field]!r})" for item in items) or "none"
    raise ToolError(f"no item {ref!r}; the items are: {known}. Use an id or the exact text")


@tool
def add_todo(ctx: RunContext, text: str) -> str:
    """Add a todo to the list.

    Args:
        text: what is to be done.
    """
    todo = {"id": _new_id(), "text": text.strip(), "done": False}
    _items(ctx, "todos").append(todo)
    return f"added {todo['text']!r}"  # (the person reads it: no internal id)


@tool
def complete_todo(ctx: RunContext, todo: str, done: bool = True) -> str:
    """Tick a todo as done (or untick it with done=false).

    Args:
        todo: the todo's id or its text.
        done: true to tick it, false to untick it.
    """
    todos = _items(ctx, "todos")
    index = _find(todos, todo, "text")
    todos[index]["done"] = done
    return f"{'ticked' if done else 'unticked'} {todos[index]['text']!r}"


@tool
def edit_todo(ctx: RunContext, todo: str, text: str) -> str:
    """Change the text of a todo.

    Args:
        todo: the todo's id or its current text.
        text: the new text.
    """
    todos = _items(ctx, "todos")
    index = _find(todos, todo, "text")
    old, todos[index]["text"] = todos[index]["text"], text.strip()
    return f"renamed {old!r} to {text.strip()!r}"


@tool
def remove_todo(ctx: RunContext, todo: str) -> str:
    """Remove a todo from the list.

    Args:
        todo: the todo's id or its text.
    """
    todos = _items(ctx, "todos")
    index = _find(todos, todo, "text")
    removed = todos.pop(index)
    return f"removed {removed['text']!r}"


@tool
def clear_completed(ctx: RunContext) -> str:
    """Clear (empty out) the todos that are ticked."""
    todos = _items(ctx, "todos")
    done = [index for index, item in enumerate(todos) if item["done"]]
    for index in reversed(done):
        del todos[index]
    return f"cleared {len(done)} completed todo(s)" if done else "no todo was ticked"


@tool
def add_to_cart(ctx: RunContext, name: str, qty: int = 1) -> str:
    """Put an item in the cart (or add to its quantity when it is there already).

    Args:
        name: the item, such as "milk".
        qty: how many, at least 1.
    """
    if qty < 1:
        raise ToolError(f"qty is {qty}; use a quantity of 1 or more")
    cart = _items(ctx, "cart")
    wanted = name.strip().lower()
    for item in cart:
        if item["name"].lower() == wanted:
            item["qty"] = item["qty"] + qty
            return f"now {item['qty']} x {item['name']} in the cart"
    line = {"id": _new_id(), "name": name.strip(), "qty": qty}
    cart.append(line)
    return f"added {qty} x {line['name']} to the cart"


@tool
def remove_from_cart(ctx: RunContext, item: str) -> str:
    """Take an item out of the cart.

    Args:
        item: the cart line's id or the item's name.
    """
    cart = _items(ctx, "cart")
    removed = cart.pop(_find(cart, item, "name"))
    return f"removed {removed['name']} from the cart"


@tool(approval=True)
def checkout(ctx: RunContext) -> str:
    """Order everything in the cart. A person approves or refuses the order first."""
    cart = _items(ctx, "cart")
    if not len(cart):
        raise ToolError("the cart is empty; add items before checking out")
    items: list[dict[str, Any]] = [dict(item) for item in cart]
    order_id = _new_id()
    _items(ctx, "orders").append({"id": order_id, "items": items, "status": "confirmed"})
    cart.clear()
    names = ", ".join(f"{item['qty']} x {item['name']}" for item in items)
    return f"order {order_id} confirmed: {names}"


@tool
def show_state(ctx: RunContext) -> str:
    """The current todo list, cart and orders, as JSON."""
    return json.dumps(ctx.state.copy())  # a draft view: copy() is its plain value


def demo_tools() -> list[Any]:
    """The demo's tools, in the order the model is told about them."""
    return [add_todo, complete_todo, edit_todo, remove_todo, clear_completed, add_to_cart,
            remove_from_cart, checkout, show_state, find_recipe]


def _instructions(ctx: RunContext) -> str:
    return f"{INSTRUCTIONS}\nThe current state:\n{json.dumps(ctx.state)}"


_CHECKOUT = re.compile(r"\b(check ?out|place (?:the |my )?order|order (?:it|them|everything))\b",
                       re.I)
_RECIPE = re.compile(r"\brecipe (?:for|of) (?:an? )?([\w ]+?)[.?!]*$", re.I)
_CLEAR_DONE = re.compile(r"\bclear\b.*\b(completed?|done|ticked|finished)\b", re.I)
_CART_WORDS = re.compile(r"\b(cart|basket|buy|shop(?:ping)?)\b", re.I)
_TODO_WORDS = re.compile(r"\b(todos?|to-dos?|list|tasks?)\b", re.I)
_CART_TOOLS = frozenset({"add_to_cart", "remove_from_cart"})
_TODO_TOOLS = frozenset({"add_todo", "complete_todo", "edit_todo", "remove_todo",
                         "clear_completed"})


def shop_reply(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply:
    """The offline demo model's reply, taught the demo's own phrases (`DemoModel(shop_reply)`).

    It calls `checkout` for "check out" / "place the order", `find_recipe` for "find a recipe
    for pancakes", `clear_completed` for "clear completed", and sends "... to my cart" to the
    cart tools and "... to my list" to the todo tools; everything else is `decide`'s (see
    `pyox_agents.models.demo`).
    """
    names = {spec.name for spec in tools}
    if messages and messages[-1].role == "tool":
        last = messages[-1]
        if last.name == "checkout":
            if last.is_error:
                return Reply(text=f"The order was not placed ({last.content}); your cart is "
                                  "as it was.")
            return Reply(text=f"Thank you! {last.content[:1].upper()}{last.content[1:]}.")
        if last.name == "find_recipe" and not last.is_error:
            return Reply(text=f"Here is a recipe for {last.content}.")
        return decide(messages, tools)
    text = last_user(messages)
    if _CHECKOUT.search(text) and "checkout" in names:
        return Reply(tool_calls=(ToolCall("checkout", {}),))
    recipe = _RECIPE.search(text)
    if recipe and "find_recipe" in names:
        return Reply(tool_calls=(ToolCall("find_recipe", {"dish": recipe.group(1)}),))
    if _CLEAR_DONE.search(text) and "clear_completed" in names:
        return Reply(tool_calls=(ToolCall("clear_completed", {}),))
    scope = _CART_TOOLS if _CART_WORDS.search(text) else (
        _TODO_TOOLS if _TODO_WORDS.search(text) else None)
    if scope is not None and scope <= names:
        tools = [spec for spec in tools if spec.name in scope]
    return decide(messages, tools)


def shop_agent(model: Model | str = "demo", *, name: str = AGENT_NAME) -> Agent:
    """The todo and cart agent (`DemoState`), named `name`.

    `model` is a `Model` or a model name: "demo" (offline, the default: `DemoModel(shop_reply)`),
    "openai:<model>", "ollama:<model>" and the other names `Agent(model=...)` takes.
    """
    return Agent(model=model_for(model, shop_reply), tools=demo_tools(), instructions=_instructions,
                 state_type=DemoState, name=name)
