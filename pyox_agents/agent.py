"""`Agent`: a model, its tools and instructions, and the ways to run it.

`agent.stream(conversation, state=...)` yields a run's events as they happen; `await
agent.arun(...)` and `agent.run(...)` run to the end and return a `RunResult`. The conversation
is a `State` (kept, saved, continued) or a prompt string that starts a new one; `state=` is the
shared JSON document, changed only by tools. `think`, `use_tools`, `ask` and `compact` are single
turns for loops you write yourself; `as_tool` makes the agent a subagent of another.
"""

from __future__ import annotations

import asyncio
import copy
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import anyio
import pydantic

from pyox_agents.events import (
    RunFailed,
    RunFinished,
    RuntimeEvent,
)
from pyox_agents.models.base import Model, ModelRequest, ToolSpec
from pyox_agents.models.names import resolve_model
from pyox_agents.runtime._answers import check_answer
from pyox_agents.runtime._asking import strip_fences, without_open_calls
from pyox_agents.runtime._handle import Outbox, RunHandle
from pyox_agents.runtime._journal import Journal
from pyox_agents.runtime._limits import Limits
from pyox_agents.runtime._permissions import Permission
from pyox_agents.runtime._planning import Planner
from pyox_agents.runtime._recovery import last_run_id, take_over_crashed
from pyox_agents.runtime._runner import (
    Access,
    Instructions,
    Runner,
    Setup,
)
from pyox_agents.runtime._subagents import PausedRuns
from pyox_agents.runtime._subagents import run_subagent as _run_child
from pyox_agents.runtime._toolsets import toolsets_opened
from pyox_agents.state._validation import describe_problems
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message, Reply, Usage
from pyox_agents.state.run import AgentError, RunState
from pyox_agents.state.shared import SharedState
from pyox_agents.stores.base import StepRecord, Store
from pyox_agents.tools import RunContext, Tool, make_tool
from pyox_agents.toolsets import Toolset, opened

__all__ = ["Agent", "RunFailedError", "RunResult"]

T = TypeVar("T")


class _NotGiven:
    """The `state=` of a run that was given none (`None` is JSON, so it cannot say so)."""

    def __repr__(self) -> str:
        return "<no state given>"


_NOT_GIVEN: Any = _NotGiven()

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
            `other_agent.as_tool(...)`), and toolsets (`MCPToolset(...)`), whose tools are
            listed when a run starts (see `pyox_agents.toolsets`).
        instructions: the system prompt, or a callable `(ctx) -> str` called before every model
            request, sync or async; it reads the shared state through a read-only `ctx.state`.
        state_type: a pydantic model the shared state must validate against.
        name: the agent's name, for servers, logs and `as_tool`.
        reporters: objects with any of `on_run_start(ctx)`, `on_think_start(ctx)`,
            `on_think_end(ctx, reply)`, `on_tool_start(ctx, call)`, `on_tool_end(ctx, call,
            result)`; they read a read-only copy of the state (`ctx.conversation` is the
            conversation, e.g. to `fork()` it between turns).
        permissions: callables `(call, ctx) -> Allow() | Deny(reason, stop=...) | Ask(...)`
            asked before every tool call (see `pyox_agents.runtime._permissions`).
        store: where conversations and runs are saved after every step (`MemoryStore`,
            `SQLiteStore`). Without one, nothing is saved, and only runs paused for a person
            are kept (in memory) so that `resume` can continue them.
        limits: a budget (`Limits(steps=, tool_calls=, input_tokens=, output_tokens=, cost=,
            seconds=)`): a run that reaches it stops.
        planner: `fn(run_state) -> CallTool(...) | [CallTool(...)] | Answer(value)`, instead
            of a model, for deterministic agents (see `pyox_agents.runtime._planning`).
        tool_timeout: seconds after which a tool call is stopped (its result becomes a timeout
            error, the run goes on); a tool's own `@tool(timeout=...)` comes first.
    """

    def __init__(
        self,
        model: Model | str | None = None,
        *,
        tools: Iterable[Tool | Toolset] = (),
        instructions: Instructions = None,
        state_type: type[pydantic.BaseModel] | None = None,
        name: str | None = None,
        reporters: Sequence[Any] = (),
        permissions: Sequence[Permission] = (),
        store: Store | None = None,
        limits: Limits | None = None,
        planner: Planner | None = None,
        tool_timeout: float | None = None,
    ) -> None:
        if model is None and planner is None:
            raise TypeError("Agent() needs a model (or a planner): Agent(model=...)")
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError(f"Agent(limits=...) takes Limits(...), got {limits!r}")
        self.model = model
        self.tools: dict[str, Tool] = {}
        self.toolsets: tuple[Toolset, ...] = ()
        for item in tools:
            self._add_tool(item)
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
        self.limits = limits
        self.planner = planner
        self.tool_timeout = tool_timeout
        self._paused: PausedRuns = {}  # store-less agents' paused runs
        self._paused_state: dict[str, Any] = {}  # their shared state, until they resume
        self._resolved: Model | None = None

    def _add_tool(self, item: Tool | Toolset) -> None:
        if isinstance(item, Tool):
            if item.name in self.tools:
                raise ValueError(f"two tools are named {item.name!r}; give one @tool(name=...)")
            self.tools[item.name] = item
        elif isinstance(item, Toolset):
            if any(item.name == other.name for other in self.toolsets):
                raise ValueError(f"two toolsets are named {item.name!r}; give one a name=")
            self.toolsets += (item,)
        else:
            raise TypeError(
                f"Agent(tools=...) takes tools made with @tool; got {item!r}: decorate it"
            )

    async def __aenter__(self) -> Agent:
        """Enter the agent's toolsets, so they stay connected for every run until the exit."""
        for toolset in self.toolsets:
            await toolset.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        for toolset in reversed(self.toolsets):
            await toolset.__aexit__(*exc_info)

    async def _tools_for(self, name: str | None) -> Mapping[str, Tool]:
        """The agent's tools, with tool `name` as a run would list it from the toolsets."""
        if name is None or name in self.tools or not self.toolsets:
            return self.tools
        async with opened(self.tools, self.toolsets) as (tools, _):
            return tools

    def with_store(self, store: Store | None) -> Agent:
        """A copy of this agent that saves to `store` (the server gives agents its store so)."""
        clone = copy.copy(self)
        clone.store = store
        clone._paused = {}
        clone._paused_state = {}
        return clone

    # -- whole runs ----------------------------------------------------------------------------

    def stream(
        self,
        conversation: State | str,
        *,
        state: Any = _NOT_GIVEN,
        client_tools: Sequence[ToolSpec] = (),
        context: Sequence[str] = (),
        fence: tuple[str, int] | None = None,
        owner: str | None = None,
    ) -> AsyncIterator[RuntimeEvent]:
        """Start a run and yield its events as they happen.

        `conversation` is a `State` to continue, or a prompt that starts a new one. `state` is
        the shared JSON state (any JSON, `None` included); without it, the run starts from `{}`:
        nothing carries over from an earlier run (keep the state yourself, e.g. from
        `RunFinished.state`, and give it again). `client_tools` are tools the client (a web
        frontend) runs itself: the model may call them, and the run ends with their calls in
        `RunFinished.pending_call_ids`; give their results to the conversation before the next
        run. `context` lines tell the model about the app's situation. `fence` (servers: the
        thread and the token of the store lease the run holds) makes every step write refused
        once another process has taken the lease. Everything is checked here, before anything
        runs. `owner` (servers) is the principal a new thread is saved for.
        Breaking out of the `async for` cancels the run, including tools that are running; the
        conversation records the cancelled calls and can be run again.

        When the conversation's last run was cut by a crash (saved with calls in flight, and
        running nowhere), that run goes on instead of a new one, as `resume` continues it: its
        idempotent calls run again with the same key, the others are put to a person, and
        messages added meanwhile wait for the calls' results.

        Raises:
            TypeError: `state` is not JSON (the message names the path of the bad value), or
                `conversation` is neither a State nor a str.
            pydantic.ValidationError: `state` does not validate against `state_type`.
            ValueError: the model is a name with no provider, or the State is finished; when
                iterated, the conversation's last run is still running (in this process, or
                another holds the thread's store lease).
        """
        return self.start(conversation, state=state, client_tools=client_tools, context=context,
                          fence=fence, owner=owner).events()

    def start(
        self,
        conversation: State | str,
        *,
        state: Any = _NOT_GIVEN,
        client_tools: Sequence[ToolSpec] = (),
        context: Sequence[str] = (),
        fence: tuple[str, int] | None = None,
        owner: str | None = None,
        state_bytes: int | None = None,
    ) -> RunHandle:
        """Check and set up a run as `stream` does, and return its `RunHandle` (servers: bad
        input is answered before anything runs). `state_bytes` is a server's limit on a state,
        which tools' commits then keep to.

        Raises:
            TypeError, pydantic.ValidationError, ValueError: as `stream`.
        """
        runner = self._prepare(conversation, state, client_tools, context)
        assert runner.journal is not None
        runner.journal.fence, runner.journal.owner = fence, owner
        runner.access.shared.max_bytes = state_bytes
        return RunHandle(runner.run_id, _batches(self, runner, state_given=state is not _NOT_GIVEN))

    async def arun(self, conversation: State | str, *, state: Any = _NOT_GIVEN) -> RunResult:
        """Run to the end and return the result.

        Raises:
            RunFailedError: the run ended with `RunFailed`.
            TypeError, pydantic.ValidationError, ValueError: as `stream`.
        """
        runner = self._prepare(conversation, state)
        return await _result(_events(self, runner, state_given=state is not _NOT_GIVEN), runner)

    def run(self, conversation: State | str, *, state: Any = _NOT_GIVEN) -> RunResult:
        """Run to the end from synchronous code; see `arun`.

        Raises:
            RuntimeError: called while an event loop is running (use `await agent.arun(...)`).
        """
        return _sync(self.arun, conversation, state=state)

    # -- resuming --------------------------------------------------------------------------------

    async def stream_resume(
        self,
        run_id: str,
        *,
        approve: bool | None = None,
        answer: Any = None,
        edited_arguments: Mapping[str, Any] | None = None,
        request_id: str | None = None,
        arguments_hash: str | None = None,
    ) -> AsyncIterator[RuntimeEvent]:
        """Continue run `run_id` and yield its events: a paused run with a person's answer, or a
        run whose process died (calls that may have run are re-run if idempotent, else a person
        is asked "outcome unknown after a crash: run again?").

        `approve` answers the pending request: True lets the call run (from its start, with
        `edited_arguments` if given; `ctx.ask_person` returns `answer`), False gives the model a
        "denied by a person" result. `request_id` and `arguments_hash`, when given, must be those
        of the pending request. The answer is recorded in the audit log.

        Raises:
            LookupError: no such run (without a store: no such paused run in this Agent).
            ValueError: the run has ended; it waits for a person and `approve` is missing, or it
                does not and `approve` is given; the request id or argument hash is not the
                pending request's; the edited arguments do not fit the tool.
        """
        runner = await self._prepare_resume(
            run_id, approve, answer, edited_arguments, request_id, arguments_hash
        )
        async for event in _events(self, runner, resumed=True):
            yield event

    async def start_resume(
        self,
        run_id: str,
        *,
        approve: bool | None = None,
        answer: Any = None,
        edited_arguments: Mapping[str, Any] | None = None,
        request_id: str | None = None,
        fence: tuple[str, int] | None = None,
        state_bytes: int | None = None,
    ) -> RunHandle:
        """Check a resume as `stream_resume` does, and return its `RunHandle` (servers answer
        bad input first); `fence` and `state_bytes` as in `start`.

        Raises:
            LookupError, ValueError: as `stream_resume`.
        """
        runner = await self._prepare_resume(
            run_id, approve, answer, edited_arguments, request_id, None
        )
        assert runner.journal is not None
        runner.journal.fence = fence
        runner.access.shared.max_bytes = state_bytes
        return RunHandle(runner.run_id, _batches(self, runner, resumed=True))

    def paused_run(self, thread_id: str) -> RunState | None:
        """The run of thread `thread_id` that waits for a person (its `pending` request), or None.

        With a store: the thread's latest run, if it waits; without one: a run paused in this
        Agent. Reads the store: from async code, use `apaused_run`.
        """
        if self.store is None:
            kept = (run for run, conversation in self._paused.values()
                    if conversation.id == thread_id and run.pending is not None)
            return next(kept, None)
        try:
            run_id = last_run_id(self.store.load(thread_id))
            latest: RunState | None = self.store.load_run(run_id) if run_id else None
        except LookupError:
            return None
        return latest if latest is not None and latest.pending is not None else None

    async def apaused_run(self, thread_id: str) -> RunState | None:
        """`paused_run`, off the event loop."""
        if self.store is None:
            return self.paused_run(thread_id)
        return await anyio.to_thread.run_sync(self.paused_run, thread_id)

    async def apaused_state(self, run_id: str, thread_id: str) -> Any:
        """The shared state that run `run_id` of `thread_id`, paused, keeps until it resumes.

        Raises:
            LookupError: it keeps none (it is not paused, or it ended).
        """
        if self.store is None:
            if run_id not in self._paused_state:
                raise LookupError(f"no paused run {run_id!r} in this Agent")
            return self._paused_state[run_id]
        loaded = await self.store.aload_thread(thread_id)
        if loaded.shared_version is None or loaded.shared_state is None:
            raise LookupError(f"thread {thread_id!r} keeps no state of a paused run")
        return loaded.shared_state

    async def areplace_paused_state(self, run_id: str, thread_id: str, state: Any, *,
                                    fence: tuple[str, int] | None = None) -> None:
        """Replace the shared state paused run `run_id` keeps (a person's edits, committed
        before it resumes); `fence` as in `start`."""
        if self.store is None:
            self._paused_state[run_id] = state
            return
        store = self.store
        record = StepRecord(thread_id=thread_id, first_seq=await store.aentry_count(thread_id),
                            shared_state=state, shared_version=0)
        if fence is not None:
            await anyio.to_thread.run_sync(store.write_fenced, record, *fence)
        else:
            await store.awrite(record)

    async def aresume(
        self,
        run_id: str,
        *,
        approve: bool | None = None,
        answer: Any = None,
        edited_arguments: Mapping[str, Any] | None = None,
        request_id: str | None = None,
        arguments_hash: str | None = None,
    ) -> RunResult:
        """Continue run `run_id` to its end (or next pause) and return the result like `arun`.

        Raises:
            RunFailedError, LookupError, ValueError: as `arun` and `stream_resume`.
        """
        runner = await self._prepare_resume(
            run_id, approve, answer, edited_arguments, request_id, arguments_hash
        )
        return await _result(_events(self, runner, resumed=True), runner)

    def resume(
        self,
        run_id: str,
        *,
        approve: bool | None = None,
        answer: Any = None,
        edited_arguments: Mapping[str, Any] | None = None,
        request_id: str | None = None,
        arguments_hash: str | None = None,
    ) -> RunResult:
        """`aresume` from synchronous code."""
        return _sync(self.aresume, run_id, approve=approve, answer=answer,
                     edited_arguments=edited_arguments, request_id=request_id,
                     arguments_hash=arguments_hash)

    async def load_run(self, run_id: str) -> RunState:
        """The saved `RunState` of run `run_id` (from the store, or a paused run in memory).

        Raises:
            LookupError: no such run.
        """
        return (await self._load(run_id))[0]

    async def _load(self, run_id: str) -> tuple[RunState, State]:
        if self.store is None:
            if run_id not in self._paused:
                raise LookupError(
                    f"no paused run {run_id!r} in this Agent: without a store, only runs paused "
                    "for a person in this process can be resumed; give Agent(store=...) to keep "
                    "every run"
                )
            return self._paused[run_id]
        run = await self.store.aload_run(run_id)
        thread_id = await anyio.to_thread.run_sync(self.store.run_thread, run_id)
        return run, await self.store.aload(thread_id)

    async def _prepare_resume(
        self,
        run_id: str,
        approve: bool | None,
        answer: Any,
        edited: Mapping[str, Any] | None,
        request_id: str | None,
        hash_: str | None,
    ) -> Runner:
        run, conversation = await self._load(run_id)
        tools = await self._tools_for(run.pending.tool if run.pending and edited else None)
        check_answer(run, tools, approve, answer, edited, request_id, hash_)
        request = run.pending
        self._paused.pop(run_id, None)
        shared = SharedState(await self._kept_state(run_id, conversation),
                             state_type=self.state_type)
        journal = Journal(run, conversation, shared, self.store)
        if request is not None:
            journal.answered(request, bool(approve), answer, edited)
        runner = Runner(self._setup(), conversation, Access(shared, conversation),
                        journal=journal)
        if request is None:  # nobody was asked: a run cut by a crash, or one to go on
            runner.continue_run(run)
        return runner

    # -- single turns, for loops you write yourself ---------------------------------------------

    async def athink(self, conversation: State) -> Reply:
        """Ask the model for the next turn of `conversation` and record its reply.

        Raises:
            ValueError: the State is finished, or tool calls are pending (use_tools first).
        """
        runner = self._turn_runner(conversation)
        async with toolsets_opened(self.tools, self.toolsets, runner):
            reply = await runner.think()
        await runner.save_conversation()
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
        async with toolsets_opened(self.tools, self.toolsets, runner):
            await runner.use_tools()
        await runner.save_conversation()

    def use_tools(self, conversation: State) -> None:
        """`ause_tools` from synchronous code."""
        _sync(self.ause_tools, conversation)

    async def aask(self, conversation: State, question: str, returns: type[T] = str) -> T:  # type: ignore[assignment]
        """Ask the model `question` about the conversation, without adding to it.

        With `returns` a type (a pydantic model, a dataclass, `list[str]`, ...), the answer is
        JSON validated against it, asked again once if invalid. Its usage counts.

        Every tool call needs a result before the model is asked again, so while calls are
        pending (a tool asking about its own conversation, say) the model is asked without the
        open turn's calls: it reads that reply's text, not calls that have no result yet. The
        conversation itself is left as it is.

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
        settled = without_open_calls(conversation.messages, conversation.pending_calls)
        messages = [*system, *settled, Message.user(prompt)]
        problem = ""
        for _ in range(2):
            reply = await self._request(runner, "ask", messages)
            if returns is str:
                return reply.text  # type: ignore[return-value]
            try:
                return adapter.validate_json(strip_fences(reply.text))
            except pydantic.ValidationError as exc:
                problem = describe_problems(exc, root="value")
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
        await runner.save_conversation()
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
        tools commits into the parent run's state as it finishes). When one of its calls waits
        for a person, the parent run pauses with that request (`pending`); answering it with
        `resume(parent_run_id, approve=...)` resumes the subagent's run where it paused.

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
            return await _run_child(ctx, subagent._setup, subagent._paused, task, tool_name,
                                    state, (subagent.tools, subagent.toolsets))

        return make_tool(
            run_subagent,
            name=tool_name,
            description=description or f"Give the {tool_name} agent a task; it answers.",
            local=globals(),
        )

    # -- preparing runs ------------------------------------------------------------------------

    def resolve_model(self) -> Model | None:
        """The model this agent runs (None with a planner), resolved from its name once.

        Raises:
            ValueError: the name has no provider (the message lists the forms that have one).
        """
        return self._model()

    def _model(self) -> Model | None:
        """The model, resolved from its name once (one provider client per agent)."""
        if self.model is None:
            return None
        if self._resolved is None:
            self._resolved = resolve_model(self.model)
        return self._resolved

    def _setup(self, store: Store | None = None) -> Setup:
        return Setup(
            model=self._model(),
            tools=self.tools,
            instructions=self.instructions,
            reporters=self.reporters,
            permissions=self.permissions,
            store=self.store if self.store is not None else store,
            limits=self.limits,
            planner=self.planner,
            tool_timeout=self.tool_timeout,
        )

    def _prepare(
        self,
        conversation: State | str,
        state: Any,
        client_tools: Sequence[ToolSpec] = (),
        context: Sequence[str] = (),
    ) -> Runner:
        if isinstance(conversation, str):
            conversation = State(messages=[Message.user(conversation)])
        elif not isinstance(conversation, State):
            raise TypeError(
                f"run a State or a prompt str, got {type(conversation).__name__}; for the shared "
                "state, pass state=..."
            )
        conversation._check_can_run()
        setup = self._setup()
        value = self._validated({} if state is _NOT_GIVEN else state)
        shared = SharedState(value, state_type=self.state_type)
        goal = next((m.content for m in reversed(conversation.messages) if m.role == "user"), "")
        journal = Journal(RunState(secrets.token_hex(32), goal), conversation, shared, setup.store)
        return Runner(setup, conversation, Access(shared, conversation), journal=journal,
                      client_tools=client_tools, context=context)

    def _turn_runner(self, conversation: State) -> Runner:
        """A runner for one turn (`think`, `use_tools`, ...): its tools see a state of `{}`, as
        a run given none (nothing is kept between runs)."""
        if not isinstance(conversation, State):
            raise TypeError(f"expected a State, got {type(conversation).__name__}")
        shared = SharedState({}, state_type=self.state_type)
        return Runner(self._setup(), conversation, Access(shared, conversation))

    async def _kept_state(self, run_id: str, conversation: State) -> Any:
        """The shared state run `run_id` had when it paused or was cut off, to resume it.

        A run keeps it only while it can be resumed: with a store, in the thread's record
        (written with each step, emptied when the run ends); without one, in this Agent.
        """
        if self.store is None:
            return self._paused_state.pop(run_id, {})
        loaded = await self.store.aload_thread(conversation.id)
        return {} if loaded.shared_version is None else loaded.shared_state

    def _validated(self, state: Any) -> Any:
        if self.state_type is None:
            return state
        return self.state_type.model_validate(state).model_dump(mode="json")


async def _batches(
    agent: Agent, runner: Runner, *, resumed: bool = False, state_given: bool = True
) -> AsyncIterator[list[RuntimeEvent]]:
    """Execute the run in its own task and yield its events, all those there are at a time;
    closing this stops the run.

    The run lives in a task of its own, not in a task group spanning our `yield`s: a consumer
    that breaks out of `async for` closes this generator from wherever Python finalises it, and a
    plain task can be cancelled from there, while a cancel scope could not be exited. The run
    puts its events in an outbox with no trip through the event loop per event.
    """
    if not resumed:
        resumed = await take_over_crashed(runner)
        if resumed and not state_given:
            await _continue_with_kept_state(agent, runner)
    outbox = Outbox()
    runner.emit = outbox.put

    async def execute() -> None:
        try:
            async with toolsets_opened(agent.tools, agent.toolsets, runner):
                await runner.execute(resumed=resumed)
                journal = runner.journal
                if agent.store is None and journal is not None and journal.run.pending is not None:
                    agent._paused[journal.run.run_id] = (journal.run, runner.conversation)
                    agent._paused_state[journal.run.run_id] = runner.access.shared.value
                outbox.close()  # the run is over: its stream ends before the toolsets close
        finally:
            outbox.close()

    task = asyncio.create_task(execute(), name=f"pyox-agents run {runner.run_id[:12]}")
    try:
        while batch := await outbox.take():
            yield batch
    finally:
        task.cancel()
        await asyncio.wait([task])
    if not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]


def _events(agent: Agent, runner: Runner, *, resumed: bool = False,
            state_given: bool = True) -> AsyncIterator[RuntimeEvent]:
    """The run's events one at a time (see `_batches`)."""
    batches = _batches(agent, runner, resumed=resumed, state_given=state_given)
    return RunHandle(runner.run_id, batches).events()


async def _continue_with_kept_state(agent: Agent, runner: Runner) -> None:
    """A run cut by a crash that a run given no `state=` continues goes on from the state its
    record kept (the app gave none to replace it)."""
    journal = runner.journal
    assert journal is not None
    old = runner.access.shared
    shared = SharedState(await agent._kept_state(runner.run_id, runner.conversation),
                         state_type=agent.state_type, max_bytes=old.max_bytes)
    access = runner.access
    runner.access = Access(shared, access.owner, access.writable, access.denied)
    journal.shared = shared


async def _result(events: AsyncIterator[RuntimeEvent], runner: Runner) -> RunResult:
    """Collect a run's events into a `RunResult`, or raise `RunFailedError`."""
    collected = [event async for event in events]
    last = collected[-1]
    if isinstance(last, RunFailed):
        raise RunFailedError(last.error, tuple(collected))
    assert isinstance(last, RunFinished)
    return RunResult(
        last.answer, last.state, last.usage, tuple(collected), runner.run_id, runner.conversation
    )


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
