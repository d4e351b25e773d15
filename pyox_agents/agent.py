"""`Agent`: a model, its tools and instructions, and the ways to run it.

`agent.stream(conversation, state=...)` yields a run's events as they happen; `await
agent.arun(...)` and `agent.run(...)` run to the end and return a `RunResult`. The conversation
is a `State` (kept, saved, continued) or a prompt string that starts a new one; `state=` is the
shared JSON document, changed only by tools. `think`, `use_tools`, `ask` and `compact` are single
turns for loops you write yourself; `as_tool` makes the agent a subagent of another.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import anyio
import pydantic

from pyox_agents.events import (
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    SubagentFinished,
    SubagentStarted,
)
from pyox_agents.models.base import Model, ModelRequest, resolve_model
from pyox_agents.permissions import Permission
from pyox_agents.runner import NO_ACCESS, Access, Instructions, Runner, Setup
from pyox_agents.state.conversation import State
from pyox_agents.state.history import shared_state_from
from pyox_agents.state.messages import Message, Reply, Usage
from pyox_agents.state.run import AgentError
from pyox_agents.state.shared import SharedState
from pyox_agents.tools import RunContext, Tool, make_tool

__all__ = ["Agent", "RunFailedError", "RunResult"]

T = TypeVar("T")

COMPACT_PROMPT = (
    "Summarize the work so far for yourself: the goal, what was done and found, what is left, "
    "and any names, numbers or decisions you will need. Reply with the summary only."
)


@dataclass(frozen=True, slots=True)
class RunResult:
    """What a finished run gave: its answer, final shared state, usage and every event.

    `conversation` is the `State` the run recorded into (the one given, or a new one).
    """

    answer: Any
    state: Any
    usage: Usage
    events: tuple[RuntimeEvent, ...]
    run_id: str
    conversation: State


class RunFailedError(Exception):
    """`run`/`arun` ended with `RunFailed`: the model failed, or a bug. `error` says why."""

    def __init__(self, error: AgentError, events: tuple[RuntimeEvent, ...]) -> None:
        super().__init__(f"the run failed ({error.code}): {error.message}")
        self.error = error
        self.events = events


class Agent:
    """A model with tools and instructions.

    Args:
        model: a `Model` (e.g. `ScriptedModel([...])`) or a model name.
        tools: the tools the model may call (functions decorated with `@tool`, or
            `other_agent.as_tool(...)`).
        instructions: the system prompt, or a callable `(ctx) -> str` called before every model
            request, sync or async; it reads the shared state through a read-only `ctx.state`.
        state_type: a pydantic model the shared state must validate against.
        name: the agent's name, for servers, logs and `as_tool`.
        reporters: objects with any of `on_run_start(ctx)`, `on_think_start(ctx)`,
            `on_think_end(ctx, reply)`, `on_tool_start(ctx, call)`, `on_tool_end(ctx, call,
            result)`; they read a read-only copy of the state (`ctx.conversation` is the
            conversation, e.g. to `fork()` it between turns).
        permissions: callables `(call, ctx) -> Allow() | Deny(reason, stop=...) | Ask(...)`
            asked before every tool call (see `pyox_agents.permissions`).
        store: where conversations are saved after every step (`MemoryStore`, `SQLiteStore`).
    """

    def __init__(
        self,
        model: Model | str,
        *,
        tools: Iterable[Tool] = (),
        instructions: Instructions = None,
        state_type: type[pydantic.BaseModel] | None = None,
        name: str | None = None,
        reporters: Sequence[Any] = (),
        permissions: Sequence[Permission] = (),
        store: Any = None,
    ) -> None:
        self.model = model
        self.tools: dict[str, Tool] = {}
        for item in tools:
            if not isinstance(item, Tool):
                raise TypeError(
                    f"Agent(tools=...) takes tools made with @tool; got {item!r}: decorate it"
                )
            if item.name in self.tools:
                raise ValueError(f"two tools are named {item.name!r}; give one @tool(name=...)")
            self.tools[item.name] = item
        if instructions is not None and not (
            isinstance(instructions, str) or callable(instructions)
        ):
            raise TypeError("Agent(instructions=...) takes a str or a callable (ctx) -> str")
        for permission in permissions:
            if not callable(permission):
                raise TypeError(f"Agent(permissions=...) takes callables, got {permission!r}")
        self.instructions = instructions
        self.state_type = state_type
        self.name = name
        self.reporters = tuple(reporters)
        self.permissions = tuple(permissions)
        self.store = store

    # -- whole runs ----------------------------------------------------------------------------

    def stream(
        self, conversation: State | str, *, state: Any = None
    ) -> AsyncIterator[RuntimeEvent]:
        """Start a run and yield its events as they happen.

        `conversation` is a `State` to continue, or a prompt that starts a new one. `state` is
        the shared JSON state; without it, a conversation that ran before continues from the
        shared state its history holds. Everything is checked here, before anything runs.
        Breaking out of the `async for` cancels the run, including tools that are running; the
        conversation records the cancelled calls and can be run again.

        Raises:
            TypeError: `state` is not JSON (the message names the path of the bad value), or
                `conversation` is neither a State nor a str.
            pydantic.ValidationError: `state` does not validate against `state_type`.
            ValueError: the model is a name with no provider, or the State is finished.
        """
        runner, given = self._prepare(conversation, state)
        return _events(runner, given)

    async def arun(self, conversation: State | str, *, state: Any = None) -> RunResult:
        """Run to the end and return the result.

        Raises:
            RunFailedError: the run ended with `RunFailed`.
            TypeError, pydantic.ValidationError, ValueError: as `stream`.
        """
        runner, given = self._prepare(conversation, state)
        events = [event async for event in _events(runner, given)]
        last = events[-1]
        if isinstance(last, RunFailed):
            raise RunFailedError(last.error, tuple(events))
        assert isinstance(last, RunFinished)
        return RunResult(
            last.answer, last.state, last.usage, tuple(events), runner.run_id, runner.conversation
        )

    def run(self, conversation: State | str, *, state: Any = None) -> RunResult:
        """Run to the end from synchronous code; see `arun`.

        Raises:
            RuntimeError: called while an event loop is running (use `await agent.arun(...)`).
        """
        return _sync(self.arun, conversation, state=state)

    # -- single turns, for loops you write yourself ---------------------------------------------

    async def athink(self, conversation: State) -> Reply:
        """Ask the model for the next turn of `conversation` and record its reply.

        Raises:
            ValueError: the State is finished, or tool calls are pending (use_tools first).
        """
        runner = self._turn_runner(conversation)
        reply = await runner.think()
        await runner._save()
        return reply

    def think(self, conversation: State) -> Reply:
        """`athink` from synchronous code."""
        return _sync(self.athink, conversation)

    async def ause_tools(self, conversation: State) -> None:
        """Run the pending tool calls of `conversation` and record their results.

        Raises:
            ValueError: the State is finished.
        """
        conversation._check_can_run()
        runner = self._turn_runner(conversation)
        await runner.use_tools()
        await runner._save()

    def use_tools(self, conversation: State) -> None:
        """`ause_tools` from synchronous code."""
        _sync(self.ause_tools, conversation)

    async def aask(self, conversation: State, question: str, returns: type[T] = str) -> T:  # type: ignore[assignment]
        """Ask the model `question` about the conversation, without adding to it.

        With `returns` a type (a pydantic model, a dataclass, `list[str]`, ...), the answer is
        JSON validated against it, asked again once if invalid. Its usage counts.

        Raises:
            ValueError: the State is finished, or the answer was invalid twice.
        """
        conversation._check_can_run()
        runner = self._turn_runner(conversation)
        adapter: pydantic.TypeAdapter[T] = pydantic.TypeAdapter(returns)
        prompt = question
        if returns is not str:
            schema = json.dumps(adapter.json_schema())
            prompt = (
                f"{question}\n\nAnswer with only a JSON value that matches this JSON "
                f"schema, and no other text:\n{schema}"
            )
        system = await runner._system_messages(runner._context())
        messages = [*system, *conversation.messages, Message.user(prompt)]
        problem = ""
        for _ in range(2):
            reply = await self._request(runner, "ask", messages)
            if returns is str:
                return reply.text  # type: ignore[return-value]
            try:
                return adapter.validate_json(_strip_fences(reply.text))
            except pydantic.ValidationError as exc:
                problem = "; ".join(
                    f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in exc.errors()
                )
                messages += [
                    Message.assistant(reply.text),
                    Message.user(
                        f"That answer is not valid ({problem}). Answer again with only "
                        "the JSON value."
                    ),
                ]
        expected = getattr(returns, "__name__", returns)
        raise ValueError(
            f"the model's answer to {question!r} did not match {expected} twice: {problem}"
        )

    def ask(self, conversation: State, question: str, returns: type[T] = str) -> T:  # type: ignore[assignment]
        """`aask` from synchronous code."""
        answer: T = _sync(self.aask, conversation, question, returns)
        return answer

    async def acompact(self, conversation: State) -> str:
        """Ask the model to summarize the conversation, then `compact` it; return the summary.

        Raises:
            ValueError: tool calls are pending.
        """
        runner = self._turn_runner(conversation)
        messages = [*conversation.messages, Message.user(COMPACT_PROMPT)]
        reply = await self._request(runner, "compact", messages)
        conversation.compact(reply.text)
        await runner._save()
        return reply.text

    def compact(self, conversation: State) -> str:
        """`acompact` from synchronous code."""
        return _sync(self.acompact, conversation)

    @staticmethod
    async def _request(
        runner: Runner, purpose: Literal["ask", "compact"], messages: Sequence[Message]
    ) -> Reply:
        conversation = runner.conversation
        conversation._begin_request(purpose, len(messages))
        try:
            reply = await runner.complete(ModelRequest(tuple(messages)))
        except BaseException as exc:
            conversation._fail_request(purpose, str(exc) or type(exc).__name__)
            raise
        conversation._end_request(purpose, reply)
        return reply

    # -- subagents -----------------------------------------------------------------------------

    def as_tool(
        self,
        name: str | None = None,
        description: str | None = None,
        state: Literal["read", "write"] | None = None,
    ) -> Tool:
        """This agent as a tool of another: the model gives it a task, it answers.

        Its run is a child `State` of the calling conversation (`parent.child(id)` opens it),
        its usage counts for the parent, and `state` says what it may do with the shared state:
        None (its tools get `PermissionError` from `ctx.state`), "read", or "write" (each of its
        tools commits into the parent run's state as it finishes).

        Raises:
            ValueError: no name (give `name=` or `Agent(name=...)`), or an unknown `state`.
        """
        if state not in (None, "read", "write"):
            raise ValueError(f'as_tool(state=...) is None, "read" or "write", got {state!r}')
        tool_name = name or self.name
        if not tool_name:
            raise ValueError("as_tool() needs a name: pass name=... or create Agent(name=...)")
        subagent = self

        async def run_subagent(ctx: RunContext, task: str) -> Any:
            """Args:
            task: What the subagent should do, with everything it needs to know.
            """
            return await _run_subagent(ctx, subagent, task, tool_name, state)

        return make_tool(
            run_subagent,
            name=tool_name,
            description=description or f"Give the {tool_name} agent a task; it answers.",
            local=globals(),
        )

    # -- preparing runs ------------------------------------------------------------------------

    def _setup(self, store: Any = None) -> Setup:
        return Setup(
            model=resolve_model(self.model),
            tools=self.tools,
            instructions=self.instructions,
            reporters=self.reporters,
            permissions=self.permissions,
            store=self.store if self.store is not None else store,
        )

    def _prepare(self, conversation: State | str, state: Any) -> tuple[Runner, bool]:
        if isinstance(conversation, str):
            conversation = State(messages=[Message.user(conversation)])
        elif not isinstance(conversation, State):
            raise TypeError(
                f"run a State or a prompt str, got {type(conversation).__name__}; for the shared "
                "state, pass state=..."
            )
        conversation._check_can_run()
        setup = self._setup()
        kept = self._kept_state(conversation)
        given = state is not None
        value = self._validated(state) if given else self._validated(kept)
        shared = SharedState(value)
        runner = Runner(setup, conversation, Access(shared, conversation))
        return runner, given and shared.value != kept

    def _turn_runner(self, conversation: State) -> Runner:
        if not isinstance(conversation, State):
            raise TypeError(f"expected a State, got {type(conversation).__name__}")
        shared = SharedState(self._kept_state(conversation))
        return Runner(self._setup(), conversation, Access(shared, conversation))

    @staticmethod
    def _kept_state(conversation: State) -> Any:
        """The shared state the conversation's history holds ({} if none was recorded)."""
        return shared_state_from(conversation.history, {})

    def _validated(self, state: Any) -> Any:
        if self.state_type is None:
            return state
        return self.state_type.model_validate(state).model_dump(mode="json")


async def _events(runner: Runner, given: bool) -> AsyncIterator[RuntimeEvent]:
    """Execute the run in its own task and yield its events; closing this stops the run.

    The run lives in a task of its own, not in a task group spanning our `yield`s: a consumer
    that breaks out of `async for` closes this generator from wherever Python finalises it, and a
    plain task can be cancelled from there, while a cancel scope could not be exited.
    """
    send, receive = anyio.create_memory_object_stream[Sequence[RuntimeEvent]](float("inf"))
    runner._emit = send.send_nowait

    async def execute() -> None:
        with send:
            await runner.execute(given_state=given)

    task = asyncio.create_task(execute(), name=f"pyox-agents run {runner.run_id[:12]}")
    try:
        with receive:
            async for batch in receive:
                for event in batch:
                    yield event
    finally:
        task.cancel()
        await asyncio.wait([task])


async def _run_subagent(
    ctx: RunContext, agent: Agent, task: str, name: str, mode: Literal["read", "write"] | None
) -> Any:
    """Run `agent` on `task` as a child of the run behind `ctx`; return its answer."""
    parent: Runner = ctx._runner
    child = State(messages=[Message.user(task)])
    parent.conversation._register_child(child)
    ctx.child_ids.append(child.id)
    access = parent.access
    denied = access.denied if access.denied is not None else (NO_ACCESS if mode is None else None)
    child_access = Access(access.shared, access.owner, access.writable and mode == "write", denied)
    run_id = secrets.token_hex(32)
    call_id = ctx.call_id or ""
    failure: list[str] = []

    def forward(events: Sequence[RuntimeEvent]) -> None:
        out: list[RuntimeEvent] = []
        for event in events:
            if isinstance(event, RunStarted):
                out.append(SubagentStarted(run_id, call_id, name, child.id))
            elif isinstance(event, RunFinished):
                out.append(SubagentFinished(run_id, call_id, answer=event.answer))
            elif isinstance(event, RunFailed):
                failure.append(event.error.message)
                out.append(SubagentFinished(run_id, call_id, error=event.error.message))
            elif getattr(event, "run_id", "") is None:
                out.append(dataclasses.replace(event, run_id=run_id))
            else:
                out.append(event)
        parent._emit(out)

    runner = Runner(
        agent._setup(parent.setup.store), child, child_access, run_id=run_id, emit=forward
    )
    try:
        await runner.execute(parent_id=parent.conversation.id, parent_call_id=call_id)
    finally:
        ctx.child_usage = ctx.child_usage + child.usage
    if failure:
        raise RuntimeError(f"the subagent {name} failed: {failure[0]}")
    return child.answer


def _strip_fences(text: str) -> str:
    """The JSON inside a ```json fenced block, or the text itself."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped.strip()


def _sync(fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
    """Run `fn` to the end from synchronous code, refusing inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            f"Agent.{fn.__name__.removeprefix('a')}() cannot be called while an event loop is "
            f"running (you are in async code): use `await agent.{fn.__name__}(...)`"
        )

    async def main() -> T:
        return await fn(*args, **kwargs)

    return anyio.run(main)
