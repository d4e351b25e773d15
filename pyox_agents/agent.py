"""`Agent`: a model, its tools and instructions, and the ways to run it.

`agent.stream(conversation, state=...)` yields a run's events as they happen; `await
agent.arun(...)` and `agent.run(...)` run to the end and return a `RunResult`. The conversation
is a `State` (kept, saved, continued) or a prompt string that starts a new one; `state=` is the
shared JSON document, changed only by tools. `think`, `use_tools`, `ask` and `compact` are single
turns for loops you write yourself; `as_tool` makes the agent a subagent of another.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import anyio
import pydantic

from pyox_agents._errors import PyoxError
from pyox_agents._run_request import DoubleTexting, ToolOutput
from pyox_agents.events import RunFailed, RunFinished, RuntimeEvent, StateSnapshots
from pyox_agents.models.base import Model, ToolSpec
from pyox_agents.models.names import resolve_model
from pyox_agents.runtime import _resuming, _starting, _task, _turns
from pyox_agents.runtime._handle import RunHandle
from pyox_agents.runtime._limits import Limits
from pyox_agents.runtime._paused import PAUSED_BYTES, PAUSED_RUNS, PAUSED_SECONDS, PausedRuns
from pyox_agents.runtime._permissions import Permission
from pyox_agents.runtime._planning import Planner
from pyox_agents.runtime._runner import Runner
from pyox_agents.runtime._setup import Instructions, Setup
from pyox_agents.runtime._starting import NOT_GIVEN as _NOT_GIVEN
from pyox_agents.runtime._starting import Client as _Client
from pyox_agents.runtime._state_note import StateNote
from pyox_agents.runtime._subagent_tool import subagent_tool
from pyox_agents.runtime._turns import COMPACT_PROMPT as COMPACT_PROMPT
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message, Reply, Usage
from pyox_agents.state.run import AgentError, RunState
from pyox_agents.stores.base import Store
from pyox_agents.tools import Tool
from pyox_agents.toolsets import Toolset, opened

__all__ = ["Agent", "RunFailedError", "RunResult"]

T = TypeVar("T")


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


class RunFailedError(PyoxError):
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
            are kept (in memory: the latest 1,000, up to 64 MB, each for a day; see
            `with_store`) so that `resume` can continue them.
        limits: a budget (`Limits(steps=, tool_calls=, input_tokens=, output_tokens=, cost=,
            seconds=)`): a run that reaches it stops.
        planner: `fn(run_state) -> CallTool(...) | [CallTool(...)] | Answer(value)`, instead
            of a model, for deterministic agents (see `pyox_agents.runtime._planning`).
        tool_timeout: seconds after which a tool call is stopped (its result becomes a timeout
            error, the run goes on); a tool's own `@tool(timeout=...)` comes first.
        state_snapshots: how often a web frontend is sent the whole shared state besides its
            changes: "change" (after every change), "step" (at most once per step end, the
            default) or "finish" (only at the end). The AI SDK stream reads it; each change
            always goes out as a small patch.
        double_texting: what a server does with a message that comes while a run is going on
            its thread: "enqueue" (the default: it waits for the run's end, then runs; nothing
            is lost, the order is kept), "reject" (409) or "interrupt" (the running run stops
            at its next step boundary, its finished steps kept, then the new one runs). A
            request may choose for itself (AG-UI `forwardedProps.doubleTexting`, the AI SDK
            body's `doubleTexting`).
        state_note: what the model is told when a person changes the shared state during a
            run (a server's `PATCH .../state`): True (the default) adds a short note of the
            changed places and values to its next request, once; False tells it nothing; a
            function of the changes (RFC 6902 operations) returns the note's text (or None).
    """

    def __init__(self, model: Model | str | None = None, *, tools: Iterable[Tool | Toolset] = (),
                 instructions: Instructions = None,
                 state_type: type[pydantic.BaseModel] | None = None, name: str | None = None,
                 reporters: Sequence[Any] = (), permissions: Sequence[Permission] = (),
                 store: Store | None = None, limits: Limits | None = None,
                 planner: Planner | None = None, tool_timeout: float | None = None,
                 state_snapshots: StateSnapshots = "step",
                 double_texting: DoubleTexting = "enqueue", state_note: StateNote = True) -> None:
        _check_options(model, planner, limits, instructions, permissions, state_snapshots,
                       double_texting)
        self.model = model
        self.tools: dict[str, Tool] = {}
        self.toolsets: tuple[Toolset, ...] = ()
        for item in tools:
            self._add_tool(item)
        self.instructions = instructions
        self.state_type = state_type
        self.name = name
        self.reporters = tuple(reporters)
        self.permissions = tuple(permissions)
        self.store = store
        self.limits = limits
        self.planner = planner
        self.tool_timeout = tool_timeout
        self.state_snapshots: StateSnapshots = state_snapshots
        self.double_texting: DoubleTexting = double_texting
        if not isinstance(state_note, bool) and not callable(state_note):
            raise TypeError(f"Agent(state_note=...) is True, False or a function of the "
                            f"changes, got {type(state_note).__name__}")
        self.state_note: StateNote = state_note
        self._paused = PausedRuns()  # store-less agents' paused runs, bounded
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
            raise TypeError(f"Agent(tools=...) takes tools made with @tool; got {item!r}: "
                            "decorate it")

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

    def with_store(self, store: Store | None, *, paused_runs: int = PAUSED_RUNS,
                   paused_seconds: float = PAUSED_SECONDS,
                   paused_bytes: int = PAUSED_BYTES) -> Agent:
        """A copy of this agent that saves to `store` (the server gives agents its store so).

        Without a store, the copy keeps at most `paused_runs` runs paused for a person, and at
        most `paused_bytes` of their conversations and states (as JSON), each for at most
        `paused_seconds` (the oldest go first; a run let go cannot be resumed).
        """
        clone = copy.copy(self)
        clone.store = store
        clone._paused = PausedRuns(paused_runs, paused_seconds, paused_bytes)
        return clone

    # -- whole runs ----------------------------------------------------------------------------

    def stream(self, conversation: State | str, *, state: Any = _NOT_GIVEN,
               client_tools: Sequence[ToolSpec] = (), context: Sequence[str] = (),
               forwarded_props: Any = None, fence: tuple[str, int] | None = None,
               owner: str | None = None) -> AsyncIterator[RuntimeEvent]:
        """Start a run and yield its events as they happen.

        `conversation` is a `State` to continue, or a prompt that starts a new one. `state` is
        the shared JSON state (any JSON, `None` included); without it, the run starts from `{}`:
        nothing carries over from an earlier run (keep the state yourself, e.g. from
        `RunFinished.state`, and give it again). `client_tools` are tools the client (a web
        frontend) runs itself: the model may call them, and the run ends with their calls in
        `RunFinished.pending_call_ids`; give their results to the conversation before the next
        run. `context` lines tell the model about the app's situation; `forwarded_props` (JSON)
        is what the client forwarded, which tools read as `ctx.forwarded_props`. `fence`
        (servers: the thread and the token of the store lease the run holds) makes every step
        write refused once another process has taken the lease. Everything is checked here,
        before anything runs. `owner` (servers) is the principal a new thread is saved for.
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
            ValueError: the model is a name with no provider, or the State is finished, or a
                message holds an image or file the model cannot take (`InputNotAccepted`,
                naming the part and what the model takes); when iterated, the conversation's
                last run is still running (in this process, or another holds the thread's
                store lease).
        """
        return self.start(conversation, state=state, client_tools=client_tools, context=context,
                          forwarded_props=forwarded_props, fence=fence, owner=owner).events()

    def start(self, conversation: State | str, *, state: Any = _NOT_GIVEN,
              client_tools: Sequence[ToolSpec] = (), context: Sequence[str] = (),
              forwarded_props: Any = None, fence: tuple[str, int] | None = None,
              owner: str | None = None, state_bytes: int | None = None) -> RunHandle:
        """Check and set up a run as `stream` does, and return its `RunHandle` (servers: bad
        input is answered before anything runs). `state_bytes` is a server's limit on a state,
        which tools' commits then keep to.

        Raises:
            TypeError, pydantic.ValidationError, ValueError: as `stream`.
        """
        runner = _starting.prepare(self, conversation, state, client_tools, context,
                                   forwarded_props)
        assert runner.journal is not None
        runner.journal.fence, runner.journal.owner = fence, owner
        runner.access.shared.max_bytes = state_bytes
        return _task.handle(self, runner, state_given=state is not _NOT_GIVEN)

    async def arun(self, conversation: State | str, *, state: Any = _NOT_GIVEN) -> RunResult:
        """Run to the end and return the result.

        Raises:
            RunFailedError: the run ended with `RunFailed`.
            TypeError, pydantic.ValidationError, ValueError: as `stream`.
        """
        runner = _starting.prepare(self, conversation, state)
        events = _task.events(self, runner, state_given=state is not _NOT_GIVEN)
        return await _result(events, runner)

    def run(self, conversation: State | str, *, state: Any = _NOT_GIVEN) -> RunResult:
        """Run to the end from synchronous code; see `arun`.

        Raises:
            RuntimeError: called while an event loop is running (use `await agent.arun(...)`).
        """
        return _task.run_sync(self.arun, conversation, state=state)

    # -- resuming --------------------------------------------------------------------------------

    async def stream_resume(self, run_id: str, *, approve: bool | None = None, answer: Any = None,
                            edited_arguments: Mapping[str, Any] | None = None,
                            request_id: str | None = None, arguments_hash: str | None = None,
                            messages: Sequence[Message] = ()) -> AsyncIterator[RuntimeEvent]:
        """Continue run `run_id` and yield its events: a paused run with a person's answer, or a
        run whose process died (calls that may have run are re-run if idempotent, else a person
        is asked "outcome unknown after a crash: run again?").

        `approve` answers the pending request: True lets the call run (from its start, with
        `edited_arguments` if given; `ctx.ask_person` returns `answer`), False gives the model a
        "denied by a person" result (with `answer` as its reason, if it is a str). `request_id`
        and `arguments_hash`, when given, must be those of the pending request. The answer is
        recorded in the audit log. `messages` are user messages the person sent with it: they
        go into the conversation right after the results of the calls the run waits on.

        Raises:
            LookupError: no such run (without a store: no such paused run in this Agent).
            ValueError: the run has ended; it waits for a person and `approve` is missing, or it
                does not and `approve` is given; the request id or argument hash is not the
                pending request's; the edited arguments do not fit the tool.
        """
        runner = await _resuming.prepare_resume(self, run_id, approve, answer, edited_arguments,
                                                request_id, arguments_hash, messages)
        async for event in _task.events(self, runner, resumed=True):
            yield event

    async def start_resume(self, run_id: str, *, approve: bool | None = None, answer: Any = None,
                           edited_arguments: Mapping[str, Any] | None = None,
                           request_id: str | None = None, fence: tuple[str, int] | None = None,
                           state_bytes: int | None = None, messages: Sequence[Message] = (),
                           client_tools: Sequence[ToolSpec] = (), context: Sequence[str] = (),
                           forwarded_props: Any = None, tool_outputs: Sequence[ToolOutput] = (),
                           ) -> RunHandle:
        """Check a resume as `stream_resume` does, and return its `RunHandle` (servers answer
        bad input first); `fence` and `state_bytes` as in `start`, `messages` as in
        `stream_resume`. The answering request's `client_tools`, `context` and
        `forwarded_props` are the resumed run's, as in `start`; `tool_outputs` are the client's
        results for its own tools' calls the run waits on (one made beside the approved call).

        Raises:
            LookupError, ValueError: as `stream_resume`.
        """
        client = _Client(client_tools, context, forwarded_props, tool_outputs)
        runner = await _resuming.prepare_resume(self, run_id, approve, answer, edited_arguments,
                                                request_id, None, messages, client=client)
        assert runner.journal is not None
        runner.journal.fence = fence
        runner.access.shared.max_bytes = state_bytes
        return _task.handle(self, runner, resumed=True)

    def paused_run(self, thread_id: str) -> RunState | None:
        """The run of thread `thread_id` that waits for a person (its `pending` request), or None.

        With a store: the thread's latest run, if it waits; without one: a run paused in this
        Agent. Reads the store: from async code, use `apaused_run`.
        """
        return _resuming.paused_run(self, thread_id)

    async def apaused_run(self, thread_id: str) -> RunState | None:
        """`paused_run`, off the event loop."""
        if self.store is None:
            return self.paused_run(thread_id)
        return await anyio.to_thread.run_sync(self.paused_run, thread_id)

    async def athread_owner(self, thread_id: str) -> str | None:
        """The principal thread `thread_id` was started for (a server's; None for everyone).

        With a store, as the store keeps it with the thread; without one, as kept with the
        thread's run paused for a person (the only thing such an agent keeps of a thread).

        Raises:
            LookupError: the agent keeps nothing of this thread.
        """
        if self.store is None:
            paused = self._paused.of_thread(thread_id)
            if paused is None:
                raise LookupError(f"no thread {thread_id!r} is kept by this Agent")
            return paused.owner
        return await self.store.athread_owner(thread_id)

    async def apaused_state(self, run_id: str, thread_id: str) -> Any:
        """The shared state that run `run_id` of `thread_id`, paused, keeps until it resumes.

        Raises:
            LookupError: it keeps none (it is not paused, or it ended).
        """
        return await _resuming.paused_state(self, run_id, thread_id)

    async def areplace_paused_state(self, run_id: str, thread_id: str, state: Any, *,
                                    fence: tuple[str, int] | None = None) -> None:
        """Replace the shared state paused run `run_id` keeps (a person's edits, committed
        before it resumes); `fence` as in `start`."""
        await _resuming.replace_paused_state(self, run_id, thread_id, state, fence=fence)

    async def acancel_paused(self, run_id: str, reason: str) -> None:
        """End run `run_id`, which waits for a person, as cancelled: its open tool calls get a
        "cancelled" result saying `reason`, and it can no longer be answered (a server does
        this when a person goes back in the conversation instead of answering).

        Raises:
            LookupError: no such run (without a store: no such paused run in this Agent).
            ValueError: the run does not wait for a person.
        """
        await _resuming.cancel_paused(self, run_id, reason)

    async def athread(self, thread_id: str) -> State | None:
        """The conversation this agent keeps of thread `thread_id`, or None: its store's, or,
        without a store, that of its run paused on the thread (all it keeps of a thread)."""
        if self.store is None:
            paused = self._paused.of_thread(thread_id)
            return None if paused is None else paused.conversation
        try:
            return await self.store.aload(thread_id)
        except LookupError:
            return None

    async def aresume(self, run_id: str, *, approve: bool | None = None, answer: Any = None,
                      edited_arguments: Mapping[str, Any] | None = None,
                      request_id: str | None = None, arguments_hash: str | None = None,
                      messages: Sequence[Message] = ()) -> RunResult:
        """Continue run `run_id` to its end (or next pause) and return the result like `arun`
        (`messages` as in `stream_resume`).

        Raises:
            RunFailedError, LookupError, ValueError: as `arun` and `stream_resume`.
        """
        runner = await _resuming.prepare_resume(self, run_id, approve, answer, edited_arguments,
                                                request_id, arguments_hash, messages)
        return await _result(_task.events(self, runner, resumed=True), runner)

    def resume(self, run_id: str, *, approve: bool | None = None, answer: Any = None,
               edited_arguments: Mapping[str, Any] | None = None, request_id: str | None = None,
               arguments_hash: str | None = None, messages: Sequence[Message] = ()) -> RunResult:
        """`aresume` from synchronous code."""
        return _task.run_sync(self.aresume, run_id, approve=approve, answer=answer,
                              edited_arguments=edited_arguments, request_id=request_id,
                              arguments_hash=arguments_hash, messages=messages)

    async def load_run(self, run_id: str) -> RunState:
        """The saved `RunState` of run `run_id` (from the store, or a paused run in memory).

        Raises:
            LookupError: no such run.
        """
        return (await _resuming.load(self, run_id))[0]

    # -- single turns, for loops you write yourself ---------------------------------------------

    async def athink(self, conversation: State) -> Reply:
        """Ask the model for the next turn of `conversation` and record its reply.

        Raises:
            ValueError: the State is finished, or tool calls are pending (use_tools first).
        """
        runner = _starting.turn_runner(self, conversation)
        return await _turns.think(runner, self.tools, self.toolsets)

    def think(self, conversation: State) -> Reply:
        """`athink` from synchronous code."""
        return _task.run_sync(self.athink, conversation)

    async def ause_tools(self, conversation: State) -> None:
        """Run the pending tool calls of `conversation` and record their results.

        Raises:
            ValueError: the State is finished.
        """
        conversation._check_can_run()
        runner = _starting.turn_runner(self, conversation)
        await _turns.use_tools(runner, self.tools, self.toolsets)

    def use_tools(self, conversation: State) -> None:
        """`ause_tools` from synchronous code."""
        _task.run_sync(self.ause_tools, conversation)

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
        return await _turns.ask(_starting.turn_runner(self, conversation), question, returns)

    def ask(self, conversation: State, question: str, returns: type[T] = str) -> T:  # type: ignore[assignment]
        """`aask` from synchronous code."""
        answer: T = _task.run_sync(self.aask, conversation, question, returns)
        return answer

    async def acompact(self, conversation: State) -> str:
        """Ask the model to summarize the conversation, then `compact` it; return the summary.

        Raises:
            ValueError: tool calls are pending.
        """
        return await _turns.compact(_starting.turn_runner(self, conversation))

    def compact(self, conversation: State) -> str:
        """`acompact` from synchronous code."""
        return _task.run_sync(self.acompact, conversation)

    # -- subagents -----------------------------------------------------------------------------

    def as_tool(self, name: str | None = None, description: str | None = None,
                state: Literal["read", "write"] | None = None) -> Tool:
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
        return subagent_tool(self, name, description, state)

    # -- preparing runs ------------------------------------------------------------------------

    def resolve_model(self) -> Model | None:
        """The model this agent runs (None with a planner), resolved from its name once (one
        provider client per agent).

        Raises:
            ValueError: the name has no provider (the message lists the forms that have one).
        """
        if self.model is None:
            return None
        if self._resolved is None:
            self._resolved = resolve_model(self.model)
        return self._resolved

    def _setup(self, store: Store | None = None) -> Setup:
        return Setup(model=self.resolve_model(), tools=self.tools, instructions=self.instructions,
                     reporters=self.reporters, permissions=self.permissions,
                     store=self.store if self.store is not None else store, limits=self.limits,
                     planner=self.planner, tool_timeout=self.tool_timeout, name=self.name,
                     state_note=self.state_note)


async def _result(events: AsyncIterator[RuntimeEvent], runner: Runner) -> RunResult:
    """Collect a run's events into a `RunResult`, or raise `RunFailedError`."""
    collected = [event async for event in events]
    last = collected[-1]
    if isinstance(last, RunFailed):
        raise RunFailedError(last.error, tuple(collected))
    assert isinstance(last, RunFinished)
    return RunResult(last.answer, last.state, last.usage, tuple(collected), runner.run_id,
                     runner.conversation)


def _check_options(model: Any, planner: Any, limits: Any, instructions: Any,
                   permissions: Sequence[Any], state_snapshots: Any, double_texting: Any) -> None:
    """Refuse an `Agent(...)` argument of the wrong kind, before anything is kept."""
    if model is None and planner is None:
        raise TypeError("Agent() needs a model (or a planner): Agent(model=...)")
    if limits is not None and not isinstance(limits, Limits):
        raise TypeError(f"Agent(limits=...) takes Limits(...), got {limits!r}")
    if instructions is not None and not (isinstance(instructions, str) or callable(instructions)):
        raise TypeError("Agent(instructions=...) takes a str or a callable (ctx) -> str")
    for permission in permissions:
        if not callable(permission):
            raise TypeError(f"Agent(permissions=...) takes callables, got {permission!r}")
    if state_snapshots not in ("change", "step", "finish"):
        raise ValueError(f'Agent(state_snapshots=...) is "change", "step" or "finish", '
                         f"got {state_snapshots!r}")
    if double_texting not in ("reject", "enqueue", "interrupt"):
        raise ValueError(f'Agent(double_texting=...) is "reject", "enqueue" or "interrupt", '
                         f"got {double_texting!r}")
