"""What a tool (or a hook) knows about its run: `RunContext`, with the shared state, the run's
ids, and the live events a tool sends while it runs (`emit`, `progress`, `cite`,
`attach_file`); and the exceptions a tool raises to wait for a person."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pyox_agents._errors import ToolError
from pyox_agents.events import CustomEvent, FileAttached, Progress, SourceCited
from pyox_agents.state._schemas import schema_problem
from pyox_agents.state.draft import Draft, StateAccessDenied
from pyox_agents.state.frozen import NotJSON, freeze
from pyox_agents.state.messages import NO_USAGE
from pyox_agents.state.patch import diff
from pyox_agents.state.run import Spent

__all__ = ["ContextMisuse", "PersonDeclined", "PersonNeeded", "Preliminary", "RunContext",
           "RunLink"]

class RunLink(Protocol):
    """What a tool's context needs of its run: a person's answer about a call, if given."""

    def gate(self, call_id: str) -> Mapping[str, Any] | None: ...


class RunContext:
    """What a tool (or an instructions callable, a reporter, a permission) knows about its run.

    `ctx.state` is the shared JSON state. Inside a tool it is a draft: reads see the version the
    tool started from, and changes (in place, or `ctx.state = {...}`) are applied when the tool
    returns. Anywhere else it is a read-only version: hooks read a copy, only tools change the
    state. `ctx.conversation` is the run's `State` (the conversation record); `ctx.finish(answer)`
    ends the run with that answer.
    """

    __slots__ = ("_denied", "_draft", "_run", "_send", "_sources", "_state", "_views", "call_id",
                 "child_ids", "child_spent", "child_usage", "conversation", "forwarded_props",
                 "idempotency_key", "run_id", "thread_id", "tool_name")

    def __init__(self, *, run_id: str, conversation: Any, state: Any = None,
                 draft: Draft | None = None, call_id: str | None = None,
                 tool_name: str | None = None, denied: str | None = None,
                 run: RunLink | None = None, send: Callable[[Any], None] | None = None,
                 forwarded_props: Any = None) -> None:
        self.run_id = run_id
        """The run's id: 64 hexadecimal digits."""
        self.conversation = conversation
        """The run's conversation record (a `State`); its methods are thread-safe."""
        self.thread_id: str = conversation.id
        """The conversation's id: the AG-UI thread id, the AI SDK chat id."""
        self.call_id = call_id
        """The id of the tool call being run, or None outside a tool."""
        self.tool_name = tool_name
        """The name of the tool being run, or None outside a tool."""
        self.child_ids: list[str] = []
        """Ids of the subagent States this tool call started."""
        self.child_usage = NO_USAGE
        """What the subagents this tool call started spent."""
        self.child_spent: Spent | None = None
        """The subagents' spend (tool calls, tokens, cost), counted toward this run's limits."""
        self.idempotency_key: str | None = None
        """Inside a tool of a run: a key that is the same on every attempt of this call (a hash
        of the run id, the step, the call id and the arguments). Pass it to payment APIs and the
        like, so a call run again after a crash does not act twice."""
        self.forwarded_props = forwarded_props
        """What the client forwarded with its request, read-only JSON or None (AG-UI's
        `forwardedProps`, which CopilotKit fills from `<CopilotKit properties={...}>`)."""
        self._draft = draft
        self._state = state
        self._denied = denied
        self._run = run
        self._send = send
        self._views: dict[str, Any] = {}
        self._sources = 0

    @property
    def state(self) -> Any:
        """The shared JSON state: a draft inside a tool, a read-only version elsewhere.

        Raises:
            PermissionError: in a subagent's tool, when `as_tool` gave it no access.
        """
        if self._denied is not None:
            raise StateAccessDenied(self._denied)
        if self._draft is not None:
            return self._draft.root
        return self._state

    @state.setter
    def state(self, value: Any) -> None:
        if self._denied is not None:
            raise StateAccessDenied(self._denied)
        if self._draft is None:
            raise ContextMisuse("ctx.state cannot be replaced here: hooks read a copy of the "
                                "shared state and only tools change it; change it from a tool")
        self._draft.replace(value)

    def emit(self, name: str, value: Any, *, id: str | None = None,
             transient: bool = False) -> None:
        """Send `value` (JSON) to the page now, while the tool runs: a `CustomEvent`.

        AG-UI clients get `CUSTOM{name, value}`; AI SDK clients a `data-<name>` part, which a
        later part with the same `id` replaces, and which is not kept in the message when
        `transient`. It is not shared state and stays sent if the tool then fails.

        Raises:
            TypeError: `value` is not JSON (the message names the path), or `name` is empty
                or reserved (`RESERVED_NAMES`).
            RuntimeError: called outside a tool of a run.
        """
        _check_name("ctx.emit", "name", name)
        value = freeze(value, path=f"ctx.emit({name!r}) value")
        self._deliver("ctx.emit", CustomEvent(name, value, id=id, transient=transient,
                                                call_id=self.call_id))

    def progress(self, kind: str, content: Any, *, id: str | None = None) -> str:
        """Show `content` (JSON) as the live view `kind` of this tool's work; returns its id.

        Calling it again with the same `kind` (or `id`) updates that view: the page gets only
        what changed (AG-UI `ACTIVITY_SNAPSHOT`, then `ACTIVITY_DELTA`; AI SDK a `data-<kind>`
        part updated in place). The shared state is not touched: it changes when tools finish.

        Raises:
            TypeError: `content` is not JSON (the message names the path), or `kind` is empty
                or reserved (`RESERVED_NAMES`).
            RuntimeError: called outside a tool of a run.
        """
        _check_name("ctx.progress", "kind", kind)
        freeze(kind, path="ctx.progress kind")  # before the id made of it is checked
        view = id if id is not None else f"{self.call_id}-{kind}"
        content = freeze(content, path=f"ctx.progress({kind!r}) content")
        delta = None  # the view's first event: no previous content to patch
        if view in self._views:
            delta = [op.to_json() for op in diff(self._views[view], content)]
        self._deliver("ctx.progress", Progress(view, kind, content, delta, call_id=self.call_id))
        self._views[view] = content
        return view

    def cite(self, url: str, title: str | None = None) -> str:
        """Cite the web page `url` as a source of the answer; returns the source's id.

        AI SDK clients get a `source-url` part; AG-UI clients a `CUSTOM{name: "source"}`.
        """
        if not isinstance(url, str) or not url:
            raise ContextMisuse(f"ctx.cite needs a non-empty str url, got {url!r}")
        source_id = self._source_id()
        self._deliver("ctx.cite", SourceCited(source_id, url=url, title=title,
                                              call_id=self.call_id))
        return source_id

    def cite_document(self, title: str, media_type: str, filename: str | None = None) -> str:
        """Cite a document (`title`, of type `media_type`) as a source; returns its id.

        AI SDK clients get a `source-document` part.
        """
        if not isinstance(title, str) or not isinstance(media_type, str) or not media_type:
            raise ContextMisuse("ctx.cite_document needs a str title and a media type such as "
                            f"'application/pdf', got {title!r}, {media_type!r}")
        source_id = self._source_id()
        self._deliver("ctx.cite_document", SourceCited(
            source_id, title=title, media_type=media_type, filename=filename,
            call_id=self.call_id))
        return source_id

    def attach_file(self, url: str, media_type: str, filename: str | None = None) -> None:
        """Give the page a file this tool made: `url` (a `data:` URL or a link) of type
        `media_type`. AI SDK clients get a `file` part."""
        if not isinstance(url, str) or not url or not isinstance(media_type, str) or not media_type:
            raise ContextMisuse("ctx.attach_file needs a str url and a media type such as "
                            f"'image/png', got {url!r}, {media_type!r}")
        self._deliver("ctx.attach_file", FileAttached(url, media_type, filename,
                                                     call_id=self.call_id))

    def _source_id(self) -> str:
        self._sources += 1
        return f"{self.call_id}-source-{self._sources}"

    def _deliver(self, where: str, event: Any) -> None:
        if self._send is None:
            raise RuntimeError("this context streams nothing: ctx.emit, ctx.progress, ctx.cite "
                               "and ctx.attach_file work inside a tool of a run")
        for item in dataclasses.fields(event):  # names, ids, urls, titles: text a client reads
            text = getattr(event, item.name)
            if item.name in _NOT_TEXT or text is None:
                continue
            if not isinstance(text, str):
                raise NotJSON(f"{where} {item.name} must be a str, got "
                              f"{type(text).__name__}")
            freeze(text, path=f"{where} {item.name}")  # a lone surrogate is no text
        self._send(event)

    def finish(self, answer: Any = None) -> None:
        """End the run with `answer` (a submit tool): the loop stops before its next turn."""
        self.conversation.finish(answer)

    async def ask_person(self, prompt: str, schema: Mapping[str, Any] | None = None) -> Any:
        """Wait for a person's answer to `prompt` (JSON, matching `schema` if given).

        The run pauses: this tool stops here and changes nothing, and `RunFinished` has an
        interrupt outcome. Once a person answers (`agent.resume(run_id, approve=True,
        answer=...)`), the tool runs again from its start, and this call returns the answer.

        Raises:
            PersonDeclined: the person declined to answer (the tool's result says so).
            ValueError: `schema` is not a JSON Schema (the message says where).
        """
        if schema is not None:
            problem = schema_problem(schema)
            if problem is not None:
                raise ValueError(f"ask_person(schema=...) is not a JSON Schema: {problem}")
        gate = self._run.gate(self.call_id) if self._run is not None and self.call_id else None
        if gate is not None:
            if not gate["approved"]:
                raise PersonDeclined(f"a person declined to answer: {prompt}")
            return gate["answer"]
        raise PersonNeeded(prompt, schema)


@dataclass(frozen=True, slots=True)
class Preliminary:
    """A value a streaming tool yielded: the run makes it a `PreliminaryResult`."""

    value: Any


class PersonNeeded(BaseException):
    """Raised inside a tool by `ctx.ask_person`: the run pauses for a person. A
    `BaseException`, so a tool's own `except Exception` does not swallow it."""

    def __init__(self, prompt: str, schema: Mapping[str, Any] | None) -> None:
        super().__init__(prompt)
        self.prompt = prompt
        self.schema = schema


class ContextMisuse(ToolError, TypeError):
    """A tool used its `RunContext` wrongly (a name that is not text, or is reserved, a
    replaced state outside a tool): the message says what to do, shown as is. A
    `TypeError`."""


class PersonDeclined(ToolError):
    """A person declined to answer a tool's `ctx.ask_person`."""


RESERVED_NAMES = frozenset({"state", "state-delta", "run-error", "approval-request"})
"""Names of the AI SDK parts the runtime writes itself (`data-state`, ...): not for tools."""


_NOT_TEXT = frozenset({"value", "content", "delta", "transient", "call_id", "run_id"})
"""Fields of a tool's live event that are not text the tool gave (JSON values, or ours)."""


def _check_name(where: str, what: str, name: Any) -> None:
    if not isinstance(name, str) or not name:
        raise ContextMisuse(f"{where} needs a non-empty str {what}, got {name!r}")
    if name in RESERVED_NAMES:
        raise ContextMisuse(f"{where}({name!r}, ...): {name!r} is reserved (the AI SDK part "
                         f"data-{name} is the runtime's own); pick another name, such as "
                         f"{name + '-view'!r}")
