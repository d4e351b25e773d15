"""`DemoModel`: a deterministic offline model that drives list demos (todos, carts) with tools.

It reads the last user message, picks one of the tools it is given by matching their names and
descriptions, and fills the tool's main argument from the text. After the tools answer, it says
in a sentence what happened. No network, no randomness: the same conversation gives the same
reply, which makes it good for demos, tutorials and tests of a frontend.

Phrases it understands (case-insensitive; "please", "can you" and a trailing "to my list" are
ignored; several items are split on commas and "and", one tool call each, in parallel):

- add: "add milk and eggs", "put bread on the list", "buy apples", "I need to call mom",
  "remember to water the plants"; "add 2 apples" fills a `quantity`/`qty`/`count` argument.
- complete: "done with milk", "I finished the report", "complete 2", "mark eggs as done",
  "check off milk", "milk is done".
- remove: "remove eggs", "delete 3", "take milk off my list", "get rid of bread".
- clear: "clear the list", "empty my cart" (a tool named like clear/empty/reset).
- show: "show my list", "what's on my list?", "list", "what do I have?" (a read tool, such as
  `list_todos`/`get_cart`; with none, the lists of a JSON state shown in the instructions, the
  ones the user names first; with neither, it says it cannot see the list).
- plan: "plan a trip to Rome", "plan my week", "pack for a beach holiday", "plan a party"
  add the several items of a built-in plan in one reply (one add call each, in parallel).
- anything else: a short reply saying what it can do with the tools it has.

A number ("complete 2", "remove #3") goes to an integer argument (`index`, `id`, `number`...)
when the tool has one. Tools are matched generically: a tool whose name or description says
"add"/"create"/"new" adds, "complete"/"done"/"finish"/"check"/"toggle" completes,
"remove"/"delete" removes, "list"/"show"/"get"/"read"/"view" reads.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence

from pyox_agents.models._demo_reading import (
    is_greeting,
    last_user_text,
    read_intent,
    without_notes,
)
from pyox_agents.models._demo_replies import VERBS, help_reply, state_summary, summary
from pyox_agents.models._demo_tools import fill, main_argument, properties_of, tool_for, types_of
from pyox_agents.models._inputs import ANY_INPUT, Source
from pyox_agents.models._streaming import stream_reply
from pyox_agents.models.base import ModelChunk, ModelRequest, TextChunk, ToolSpec
from pyox_agents.state.messages import Message, Reply, ToolCall

__all__ = ["DemoModel", "decide"]


Rules = Callable[[Sequence[Message], Sequence[ToolSpec]], Reply]
"""How a `DemoModel` decides its reply to the messages, given the tools (`decide`)."""


class DemoModel:
    """A deterministic offline model for list demos: rules, not an LLM.

    It calls the tools it is given (by name and JSON schema) for phrases such as "add milk and
    eggs", "done with milk", "remove eggs" and "what's on my list?", then sums up the tool
    results in a sentence. The module docstring lists every phrase. Replies stream word by
    word, like `ScriptedModel`.

    `rules` decides each reply from the messages and the tools: `decide` (these rules) unless
    an app teaches the model its own phrases with a function layered on `decide` (the demo
    agent's `shop_reply`).
    """

    def __init__(self, rules: Rules | None = None, *, pace: float = 0.0) -> None:
        if pace < 0:
            raise ValueError(f"DemoModel(pace=...) is a number of seconds from 0, got {pace!r}")
        self._rules: Rules = rules or decide
        self.pace = pace
        """About how many seconds a reply takes, as a real model's would: two thirds of it
        before the first word (thinking), the rest spread over its words. 0 (the default):
        at once (tests)."""

    @property
    def name(self) -> str:
        """Always "demo"."""
        return "demo"

    input_kinds = ANY_INPUT
    """The demo model is given every image and file (it reads only the text)."""

    def accepts(self, media_type: str, source: Source = "data") -> bool:
        """Always True: the demo model takes every image and file (it reads only the text)."""
        return True

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Decide the reply by rules and stream it."""
        # The rules answer the conversation: a note the runtime adds at the end (a person's
        # edits of the shared state) is no new request (tool results still get their summary).
        reply = self._rules(without_notes(request.messages), request.tools)
        pace = self.pace
        if pace:
            await asyncio.sleep(pace * 2 / 3)
            words = max(1, len(reply.text.split()))
        async for chunk in stream_reply(reply, request):
            if pace and isinstance(chunk, TextChunk):
                await asyncio.sleep(pace / 3 / words)
            yield chunk


def decide(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply:
    """What the demo model replies to `messages`, given `tools`."""
    if messages and messages[-1].role == "tool":
        return Reply(text=summary(messages, tools))
    text = last_user_text(messages)
    intent = read_intent(text)
    if intent is None:
        return Reply(text=help_reply(tools, greeting=is_greeting(text)))
    spec = tool_for(intent.kind, tools, intent.lists)
    if spec is None and intent.kind == "read":
        seen = state_summary(messages, text)
        if seen is not None:
            return Reply(text=seen)
    if spec is None:
        return Reply(
            text=f"I can't {VERBS[intent.kind]} items here: none of my tools does that. "
            + help_reply(tools, greeting=False))
    if intent.kind in ("read", "clear"):
        return Reply(tool_calls=(ToolCall(spec.name, {}),))
    if not intent.items:
        return Reply(
            text=f"What should I {VERBS[intent.kind]}? Name the items, e.g. "
            f'"{intent.kind} milk and eggs".')
    main = main_argument(spec)
    if main is not None and "array" in types_of(properties_of(spec).get(main, {})):
        return Reply(tool_calls=(ToolCall(spec.name, {main: list(intent.items)}),))
    filled = [fill(spec, item) for item in intent.items]
    if any(arguments is None for arguments in filled):
        return Reply(
            text=f"To {VERBS[intent.kind]} an item, {spec.name} needs its number: say, for "
            f'example, "{intent.kind} 2".')
    return Reply(tool_calls=tuple(ToolCall(spec.name, a) for a in filled if a is not None))
