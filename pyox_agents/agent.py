"""`Agent`: a model, its tools and instructions, and the ways to run it.

`agent.stream(prompt, state=...)` yields the run's events as they happen; `await agent.arun(...)`
and `agent.run(...)` run to the end and return a `RunResult`. Every run has its own shared JSON
state, given with `state=` and changed only by tools.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import pydantic

from pyox_agents.events import RunFailed, RunFinished, RuntimeEvent
from pyox_agents.models.base import Model, resolve_model
from pyox_agents.runner import Instructions, Runner
from pyox_agents.state.messages import Message, Usage
from pyox_agents.state.run import AgentError
from pyox_agents.state.shared import SharedState
from pyox_agents.tools import Tool

__all__ = ["Agent", "RunFailedError", "RunResult"]


@dataclass(frozen=True, slots=True)
class RunResult:
    """What a finished run gave: its answer, final shared state, usage and every event."""

    answer: Any
    state: Any
    usage: Usage
    events: tuple[RuntimeEvent, ...]
    run_id: str


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
        tools: the tools the model may call (functions decorated with `@tool`).
        instructions: the system prompt, or a callable `(ctx) -> str` called before every model
            request, sync or async; it reads the shared state through a read-only `ctx.state`.
        state_type: a pydantic model the shared state must validate against.
        name: the agent's name, for servers and logs.
        reporters: objects with any of `on_run_start(ctx)`, `on_think_start(ctx)`,
            `on_think_end(ctx, reply)`, `on_tool_start(ctx, call)`, `on_tool_end(ctx, call,
            result)`; they read a read-only copy of the state.
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
        self.instructions = instructions
        self.state_type = state_type
        self.name = name
        self.reporters = tuple(reporters)

    def stream(
        self, prompt: str, *, state: Any = None, thread_id: str | None = None
    ) -> AsyncIterator[RuntimeEvent]:
        """Start a run and yield its events as they happen.

        The run's state is checked here, before anything runs. Breaking out of the `async for`
        cancels the run, including tools that are running.

        Raises:
            TypeError: `state` is not JSON (the message names the path of the bad value), or
                `prompt` is not a str.
            pydantic.ValidationError: `state` does not validate against `state_type`.
            ValueError: the model is a name with no provider.
        """
        runner = self._prepare(prompt, state, thread_id)
        return _events(runner)

    async def arun(
        self, prompt: str, *, state: Any = None, thread_id: str | None = None
    ) -> RunResult:
        """Run to the end and return the result.

        Raises:
            RunFailedError: the run ended with `RunFailed`.
            TypeError, pydantic.ValidationError, ValueError: as `stream`.
        """
        runner = self._prepare(prompt, state, thread_id)
        events: list[RuntimeEvent] = []
        async for event in _events(runner):
            events.append(event)
        last = events[-1]
        if isinstance(last, RunFailed):
            raise RunFailedError(last.error, tuple(events))
        assert isinstance(last, RunFinished)
        return RunResult(last.answer, last.state, last.usage, tuple(events), runner.run_id)

    def run(self, prompt: str, *, state: Any = None, thread_id: str | None = None) -> RunResult:
        """Run to the end from synchronous code; see `arun`.

        Raises:
            RuntimeError: called while an event loop is running (use `await agent.arun(...)`).
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError(
                "Agent.run() cannot be called while an event loop is running (you are in async "
                "code): use `await agent.arun(...)` or `async for event in agent.stream(...)`"
            )
        return anyio.run(self._arun_kw, prompt, state, thread_id)

    async def _arun_kw(self, prompt: str, state: Any, thread_id: str | None) -> RunResult:
        return await self.arun(prompt, state=state, thread_id=thread_id)

    def _prepare(self, prompt: str, state: Any, thread_id: str | None) -> _Prepared:
        if not isinstance(prompt, str):
            raise TypeError(f"the prompt must be a str, got {type(prompt).__name__}")
        model = resolve_model(self.model)
        shared = SharedState(self._validated(state))
        return _Prepared(
            agent=self,
            model=model,
            shared=shared,
            messages=[Message.user(prompt)],
            run_id=secrets.token_hex(32),
            thread_id=thread_id or "thread_" + secrets.token_hex(8),
        )

    def _validated(self, state: Any) -> Any:
        if self.state_type is None:
            return {} if state is None else state
        checked = self.state_type.model_validate({} if state is None else state)
        return checked.model_dump(mode="json")


@dataclass
class _Prepared:
    """A run checked and ready to start; `_events` starts it."""

    agent: Agent
    model: Model
    shared: SharedState
    messages: list[Message]
    run_id: str
    thread_id: str


async def _events(prepared: _Prepared) -> AsyncIterator[RuntimeEvent]:
    """Execute the run in its own task and yield its events; closing this stops the run.

    The run lives in a task of its own, not in a task group spanning our `yield`s: a consumer
    that breaks out of `async for` closes this generator from wherever Python finalises it, and a
    plain task can be cancelled from there, while a cancel scope could not be exited.
    """
    send, receive = anyio.create_memory_object_stream[Sequence[RuntimeEvent]](float("inf"))
    agent = prepared.agent
    runner = Runner(
        model=prepared.model,
        tools=agent.tools,
        instructions=agent.instructions,
        reporters=agent.reporters,
        run_id=prepared.run_id,
        thread_id=prepared.thread_id,
        shared=prepared.shared,
        messages=prepared.messages,
        emit=send.send_nowait,
    )

    async def execute() -> None:
        with send:
            await runner.execute()

    task = asyncio.create_task(execute(), name=f"pyox-agents run {prepared.run_id[:12]}")
    try:
        with receive:
            async for batch in receive:
                for event in batch:
                    yield event
    finally:
        task.cancel()
        await asyncio.wait([task])
