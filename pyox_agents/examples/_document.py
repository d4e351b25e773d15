"""Predictive state updates: the page shows a document as the model writes it.

`write_document` is declared `@tool(predict_state={"document": "text"})`: before the model
streams that tool's call, AG-UI clients get `CUSTOM{name: "PredictState", value: [{state_key:
"document", tool: "write_document", tool_argument: "text"}]}`, so CopilotKit writes the partial
`text` argument into `agent.state.document` while it streams. When the tool finishes, its change
is committed and the authoritative `STATE_DELTA` follows. The shared state is `{"document":
str}`; the person may edit the document on the page, and the agent starts from their text.

A page that offers a `confirm_changes` tool (CopilotKit `useHumanInTheLoop`) is asked after each
change whether to keep it; when the person answers `{"accepted": false}`, the agent puts the
text back with `undo_document` (`write_document` keeps the text it replaced in `previous`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pydantic import BaseModel

from pyox_agents.agent import Agent
from pyox_agents.examples._pace import Paced
from pyox_agents.examples._rules import answered, clean, last_user, offered
from pyox_agents.models.base import Model, ToolSpec
from pyox_agents.models.demo import DemoModel, decide
from pyox_agents.state.messages import Message, Reply, ToolCall
from pyox_agents.tools import RunContext, ToolError, tool

__all__ = ["PREDICTIVE_STATE_UPDATES", "DocumentState", "document_reply",
           "predictive_state_updates_agent", "undo_document", "write_document"]

PREDICTIVE_STATE_UPDATES = "predictive_state_updates"
"""The name the predictive state updates agent is served under."""

INSTRUCTIONS = """\
You write and edit a document the person shares with you. To change it, call write_document
with the whole new text (it replaces the document); never write the document in the chat. If
the page offers confirm_changes, call it next, to ask the person whether to keep the change; if
they do not, call undo_document. Then say in one short sentence what you changed, or that the
change was undone.
"""


class DocumentState(BaseModel):
    """The shared state: one document, which the agent and the person both edit, and the text
    the agent's last change replaced (`None` once undone or before any change)."""

    document: str = ""
    previous: str | None = None


@tool(predict_state={"document": "text"})
def write_document(ctx: RunContext, text: str) -> str:
    """Write the document: the whole new text, which replaces the current one.

    Args:
        text: the document's full new text (plain text or markdown).
    """
    ctx.state["previous"] = ctx.state.get("document", "")
    ctx.state["document"] = text
    return f"wrote the document: {len(text.split())} words"


@tool
def undo_document(ctx: RunContext) -> str:
    """Undo the last write_document: put back the text it replaced."""
    previous = ctx.state.get("previous")
    if previous is None:
        raise ToolError("there is no change to undo: write_document has not changed the "
                         "document since the last undo")
    ctx.state["document"] = previous
    ctx.state["previous"] = None
    return "put the document back as it was"


def _instructions(ctx: RunContext) -> str:
    document = ctx.state.get("document", "") if ctx.state else ""
    return f"{INSTRUCTIONS}\nThe document now:\n{document or '(empty)'}"


_WRITE = re.compile(r"^(?:write|draft|compose)\s+(?:me\s+)?(?:a\s+|an\s+)?(?:short\s+)?"
                    r"(?P<kind>story|poem|letter|note|document|text)"
                    r"(?:\s+(?:about|on)\s+(?P<topic>.+))?$")


def _story(kind: str, topic: str) -> str:
    subject = topic or "a lighthouse"
    the = re.sub(r"^(?:a|an)\s+", "the ", subject)
    return (
        f"A {kind} about {subject}\n\n"
        f"Once there was {subject}, and nobody paid it much "
        "attention. Every morning the light came up over the water, and every evening it went "
        f"down again. Then one day a child stopped, looked closely at {the}, and asked why "
        "it was there at all. Nobody knew. So the child came back the next day, and the day "
        "after that, and wrote down everything that changed: the colour at dawn, the gulls, the "
        "sound of the rain. By the end of the year the notebook was full, and the whole town "
        f"read it, and from then on everyone who passed {the} stopped for a moment to look.")


def _accepted(content: str) -> bool:
    try:
        answer = json.loads(content)
    except json.JSONDecodeError:
        return False
    return isinstance(answer, dict) and answer.get("accepted") is True


def document_reply(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply:
    """The offline model's reply on the document page: "write a story about a lighthouse" calls
    `write_document` with a built-in story, then the page's `confirm_changes` if it offers one
    (and `undo_document` when the person does not keep the change); the rest is `decide`'s."""
    results = answered(messages)
    if results:
        last = results[-1]
        if last.is_error:
            return Reply(text=f"The document was not changed: {last.content}")
        if last.name == "confirm_changes":
            if _accepted(last.content):
                return Reply(text="Kept: the document is saved.")
            return Reply(tool_calls=(ToolCall("undo_document", {}),))
        if last.name == "undo_document":
            return Reply(text="Undone: the document is as it was.")
        if offered(tools, "confirm_changes"):
            return Reply(tool_calls=(ToolCall("confirm_changes", {}),))
        return Reply(text=f"Done: I {last.content[:1].lower()}{last.content[1:]}.")
    asked = _WRITE.match(clean(last_user(messages)))
    if asked is not None:
        text = _story(asked["kind"], (asked["topic"] or "").strip())
        return Reply(tool_calls=(ToolCall("write_document", {"text": text}),))
    return decide(messages, tools)


def predictive_state_updates_agent(model: Model | str = "demo", *, pause: float = 0.08
                                   ) -> Agent:
    """The document agent: `write_document` predicts `state.document` from its `text` argument.

    `model` is a `Model` or a model name; "demo" is the offline `DemoModel(document_reply)`,
    which streams the argument in pieces `pause` seconds apart, so the page can be watched.
    """
    if model == "demo":
        model = Paced(DemoModel(document_reply), pause)
    return Agent(model=model, tools=[write_document, undo_document], instructions=_instructions,
                 state_type=DocumentState, name=PREDICTIVE_STATE_UPDATES)
