"""Running an agent on a conversation: think, use the tools, repeat until it answers.

A `Runner` works on one `State` (the conversation), one shared JSON document and, for whole runs,
one `Journal` (the run's durable record). `execute` runs a run and emits its events in order;
`think` and `use_tools` are single turns, for custom loops. Each step is one decision followed by
its tool calls, which run concurrently in one task group; each tool's state changes are committed
the moment it finishes, and its `ToolResult` and `StateChanged` are emitted together so nothing
comes between them. A call that needs a person pauses the run at the end of its step.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic_core

from pyox_agents.events import (
    ApprovalRequested,
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    StepFinished,
    StepStarted,
    ToolResult,
)
from pyox_agents.models.base import Model, ModelError, ModelRequest, ToolSpec
from pyox_agents.runtime._journal import Journal, StoreError, new_request
from pyox_agents.runtime._limits import Limits
from pyox_agents.runtime._permissions import Ask, Deny, Permission, decide, permission_name
from pyox_agents.runtime._planning import PlannerModel
from pyox_agents.runtime._records import ClosedCall, Gate, spent_plus
from pyox_agents.runtime._replies import ReplyStream, arguments_problem, valid_text
from pyox_agents.state.conversation import State
from pyox_agents.state.frozen import freeze, thaw
from pyox_agents.state.messages import Message, Reply, ToolCall, Usage
from pyox_agents.state.patch import Conflict
from pyox_agents.state.run import AgentError, ApprovalRequest, RunState, Spent, StopReason
from pyox_agents.state.shared import Refused, SharedState
from pyox_agents.state.stopped import (
    StoppedByLimit,
    StoppedByPermission,
    StoppedByUntil,
)
from pyox_agents.stores.base import Store
from pyox_agents.tools import PersonDeclined, PersonNeeded, RunContext, Tool, ToolArgumentsError

__all__ = ["Access", "Runner", "Setup", "SubagentPaused", "discard", "running_here"]

Emit = Callable[[Sequence[RuntimeEvent]], None]
Instructions = str | Callable[[RunContext], Any] | None

NO_ACCESS = (
    "this subagent has no access to the shared state: give it with "
    'as_tool(..., state="read") or state="write"'
)
CRASH_PROMPT = "outcome unknown after a crash: run again?"

_RUNNING: set[str] = set()
"""The ids of the runs executing in this process now."""


def running_here(run_id: str) -> bool:
    """Whether run `run_id` is executing in this process now."""
    return run_id in _RUNNING


def discard(events: Sequence[RuntimeEvent]) -> None:
    """An `Emit` for turns nobody streams (custom loops, ask, compact)."""


@dataclass(frozen=True)
class Setup:
    """What a runner needs of its agent."""

    model: Model | None
    tools: Mapping[str, Tool]
    instructions: Instructions = None
    reporters: Sequence[Any] = ()
    permissions: tuple[Permission, ...] = ()
    store: Store | None = None
    limits: Limits | None = None
    planner: Any = None
    tool_timeout: float | None = None


@dataclass
class Access:
    """How this run reaches the shared state: its own, its parent's, or none.

    `owner` is the conversation whose history records the changes (a "write" subagent records
    them in its parent's).
    """

    shared: SharedState
    owner: State
    writable: bool = True
    denied: str | None = None


class SubagentPaused(PersonNeeded):
    """Raised by a subagent's tool call when the subagent's run paused for a person: the
    parent pauses with the same `request`, and `link` says where the subagent's run is
    (`{"thread_id", "run_id", "call_id"}`), so the answer resumes it in place."""

    def __init__(self, request: ApprovalRequest, link: Mapping[str, str]) -> None:
        super().__init__(request.prompt, request.schema)
        self.request = request
        self.link = dict(link)


@dataclass
class _StepCalls:
    """What the tool calls of one step produced, as each closes (they may run at once)."""

    closed: dict[str, ClosedCall] = field(default_factory=dict)
    """The calls that have a result, by call id."""
    paused: dict[str, ApprovalRequest] = field(default_factory=dict)
    """The calls that wait for a person, by call id."""
    stops: list[StoppedByPermission] = field(default_factory=list)
    """Permissions that denied a call and stop the run."""
    spent: Spent = field(default_factory=Spent)
    """What the calls' subagents spent."""


@dataclass
class _Call:
    """What running one tool call produced: events to emit, or a request for a person."""

    events: list[RuntimeEvent] = field(default_factory=list)
    outcome: str = "ok"
    text: str = ""
    child_ids: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    spent: Spent | None = None
    paused: ApprovalRequest | None = None
    subagent: dict[str, str] | None = None
    client: bool = False


class Runner:
    """Executes a run, or single turns, of an agent on a conversation."""

    def __init__(
        self,
        setup: Setup,
        conversation: State,
        access: Access,
        *,
        journal: Journal | None = None,
        run_id: str | None = None,
        emit: Emit = discard,
        client_tools: Sequence[ToolSpec] = (),
        context: Sequence[str] = (),
    ) -> None:
        self.setup = setup
        self.client_tools = {spec.name: spec for spec in client_tools}
        """Tools the client runs itself: the model may call them; the run hands the calls over."""
        self.context = tuple(context)
        """What the app tells the model about its situation, added to the instructions."""
        self.handed_over: list[str] = []
        """Ids of calls to client tools this run ended with, waiting for the client's results."""
        self.conversation = conversation
        self.access = access
        self.journal = journal
        self.run_id = journal.run.run_id if journal else (run_id or secrets.token_hex(32))
        self.emit = emit
        """Where the run's events go, a list at a time (its consumer sets it before it runs)."""
        self._stream: ReplyStream | None = None
        self._step: int | None = None
        self.usage = Usage()
        self._rerun_lock = anyio.Lock()
        self.recovering = False
        """True when resuming a run whose process died: unfinished calls may have run."""
        if setup.planner is not None:
            self.model: Model = PlannerModel(setup.planner, self._run_state)
        else:
            assert setup.model is not None, "an agent has a model or a planner"
            self.model = setup.model

    def gate(self, call_id: str) -> Gate | None:
        """A person's answer about call `call_id` in this run's decision, if one was given."""
        return self.journal.gate(call_id) if self.journal is not None else None

    def _run_state(self) -> Any:
        assert self.journal is not None, "a planner decides inside a run"
        return self.journal.run

    # -- a whole run ---------------------------------------------------------------------------

    async def execute(
        self,
        *,
        parent_id: str | None = None,
        parent_call_id: str | None = None,
        resumed: bool = False,
    ) -> None:
        """Run to the end or to a pause, emitting events; the last is `RunFinished`/`RunFailed`."""
        _RUNNING.add(self.run_id)
        try:
            await self._execute(parent_id, parent_call_id, resumed)
        finally:
            _RUNNING.discard(self.run_id)

    def continue_run(self, run: RunState) -> None:
        """Make this runner continue `run`, a saved run that is not running anywhere, instead of
        starting a new one; a run cut by a crash goes on in recovery (`recovering`).

        A run waiting for a person about calls a crash cut (the question was asked, no answer
        came) asks again: the answer it waited for never came.
        """
        journal = self.journal
        assert journal is not None
        journal.run = run
        self.run_id = run.run_id
        if run.pending is not None:
            journal.withdraw()
        self.recovering = run.in_flight is not None

    async def _execute(self, parent_id: str | None, parent_call_id: str | None,
                       resumed: bool) -> None:
        conversation, journal = self.conversation, self.journal
        assert journal is not None
        try:
            conversation._start_run(parent_id, parent_call_id, run_id=self.run_id)
            journal.audit("run_resumed" if resumed else "run_started",
                          {"thread_id": conversation.id, "goal": journal.run.goal})
            await journal.save()
            self._send(RunStarted(self.run_id, conversation.id, self.access.shared.value))
            if self.setup.reporters:
                await self._report("on_run_start", self._context())
            paused = await self._loop()
        except ModelError as exc:
            await self._fail(AgentError(exc.code, str(exc)))
        except StoreError as exc:
            await self._fail(AgentError("store_error", str(exc)))
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                self._close_pending("cancelled: the run was stopped")
                conversation._fail_run("cancelled")
                journal.stop(StopReason.CANCELLED, "the run was cancelled")
                with contextlib.suppress(StoreError):  # nobody to tell: the record stays as was
                    await journal.save()
            raise
        except Exception as exc:  # a bug in a hook or in pyox-agents: report it, never raise it
            cause = _first(exc)
            if isinstance(cause, ModelError | StoreError):
                code = cause.code if isinstance(cause, ModelError) else "store_error"
                await self._fail(AgentError(code, str(cause)))
            else:  # the details: here, in the server's log, and in the run's record
                logging.getLogger(__name__).error("run %s failed with an internal error",
                                                  self.run_id, exc_info=cause)
                await self._fail(AgentError("internal_error", f"{type(cause).__name__}: {cause}"))
        else:
            if paused is not None:
                self._send(ApprovalRequested(paused))
            self._send(
                RunFinished(
                    answer=conversation.answer,
                    state=self.access.shared.value,
                    usage=self.usage,
                    stopped=conversation.stopped,
                    outcome="interrupt" if paused is not None else "success",
                    pending_call_ids=tuple(self.handed_over),
                )
            )

    async def _loop(self) -> ApprovalRequest | None:
        """Steps until the run ends; the request it paused for, if it did."""
        journal = self.journal
        assert journal is not None
        step = 0
        while True:
            if await self._ended():
                return None
            self._step = step
            self._send(StepStarted(step))
            if self.conversation.pending_calls:  # a step left open (a resume): finish it first
                paused = await self.use_tools()
            else:
                reply = await self.think()
                idempotent = {name: tool.idempotent for name, tool in self.setup.tools.items()}
                journal.decide(reply.tool_calls, reply.usage, idempotent)
                if not reply.tool_calls:
                    self._step = None
                    self._send(StepFinished(step))
                    await self._ended()
                    return None
                await journal.save()  # the decision, with its calls in flight
                paused = await self.use_tools()
            self._step = None
            self._send(StepFinished(step))
            if paused is not None:
                journal.pause(paused)
            elif self.handed_over:
                handed = set(self.handed_over)
                journal.hand_over(tuple(c for c in self.conversation.pending_calls
                                        if c.id in handed))
                journal.stop(StopReason.CLIENT_TOOLS, "the client runs the tools it was asked for")
            await journal.save()
            if paused is not None or self.handed_over:
                return paused
            step += 1

    async def _ended(self) -> bool:
        """Whether the run is over (answered, finished, stopped, out of budget); saves if so."""
        journal, conversation = self.journal, self.conversation
        assert journal is not None
        stopped = conversation.stopped
        if conversation.finished or (stopped is None and self._answered()):
            journal.answer(conversation.answer)
        elif isinstance(stopped, StoppedByPermission):
            journal.stop(StopReason.PERMISSION, f"denied by permission {stopped.permission}")
        elif isinstance(stopped, StoppedByUntil | StoppedByLimit):
            journal.stop(StopReason.UNTIL, f"stopped by {stopped}")
        elif stopped is None and (reached := self._limit_reached()) is not None:
            reason, message = reached
            conversation._stop(StoppedByLimit(journal.run.spent.steps))
            journal.stop(reason, message)
        else:
            return False
        await journal.save()
        return True

    def _answered(self) -> bool:
        """The last decision gave an answer (a reply without tool calls)."""
        messages = self.conversation.messages
        return bool(messages) and messages[-1].role == "assistant" and not messages[-1].tool_calls \
            and not self.conversation.pending_calls and self._step_count > 0

    @property
    def _step_count(self) -> int:
        return self.journal.run.spent.steps if self.journal else 0

    def _limit_reached(self) -> tuple[StopReason, str] | None:
        limits, journal = self.setup.limits, self.journal
        if limits is None or journal is None:
            return None
        return limits.reached(journal.run.spent, journal.elapsed())

    # -- one model decision --------------------------------------------------------------------

    async def think(self) -> Reply:
        """Ask the model (or planner) for the next decision and record it in the conversation."""
        conversation = self.conversation
        conversation._check_can_run()
        ctx = self._context()
        await self._report("on_think_start", ctx)
        messages = (*await self._system_messages(ctx), *conversation.messages)
        tools = (*(t.spec for t in self.setup.tools.values()), *self.client_tools.values())
        conversation._begin_think(len(messages), [t.name for t in tools])
        try:
            reply = await self._ask_model(ModelRequest(messages, tools))
            conversation._end_think(reply)
        except BaseException as exc:
            conversation._fail_think(f"{type(exc).__name__}: {exc}" if str(exc) else "cancelled")
            raise
        if isinstance(self.model, PlannerModel) and self.model.answer is not None:
            conversation.finish(self.model.answer.value)  # keep a planner's answer as it is
            self.model.answer = None
        self.usage = self.usage + reply.usage
        await self._report("on_think_end", ctx, reply)
        return reply

    async def complete(self, request: ModelRequest) -> Reply:
        """The model's reply to `request`, streamed as events (used by ask and compact too)."""
        return await self._ask_model(request)

    async def _ask_model(self, request: ModelRequest) -> Reply:
        self._stream = ReplyStream(self._send)
        async for chunk in self.model.stream(request):
            self._stream.add(chunk)
        reply = self._stream.finish()
        self._stream = None
        return reply

    async def _system_messages(self, ctx: RunContext) -> list[Message]:
        instructions = self.setup.instructions
        if self.context:
            extra = "Context from the app:\n" + "\n".join(f"- {c}" for c in self.context)
            text = await self._instructions_text(ctx, instructions)
            return [Message.system(f"{text}\n\n{extra}" if text else extra)]
        text = await self._instructions_text(ctx, instructions)
        return [Message.system(text)] if text else []

    @staticmethod
    async def _instructions_text(ctx: RunContext, instructions: Instructions) -> str:
        if instructions is None:
            return ""
        if callable(instructions):
            text = instructions(ctx)
            if inspect.isawaitable(text):
                text = await text
            if not isinstance(text, str):
                kind = type(text).__name__
                raise TypeError(f"the instructions callable returned {kind}, not str")
            return text
        return instructions

    # -- the tool calls of one decision --------------------------------------------------------

    async def use_tools(self) -> ApprovalRequest | None:
        """Run every pending tool call concurrently; each result is recorded as it closes.

        Returns the first request for a person, if a call needs one: such calls stay pending.
        """
        calls = self.conversation.pending_calls
        step = _StepCalls()
        if self.recovering and self.journal is not None:
            self.journal.retry()
        try:
            if len(calls) == 1:  # the usual case: no task group to set up for one call
                await self._call_tool(calls[0], step)
            else:
                async with anyio.create_task_group() as group:
                    for call in calls:
                        group.start_soon(self._call_tool, call, step)
        except BaseException:
            self._close_pending("cancelled: the run was stopped")
            raise
        finally:
            self.recovering = False
        if self.journal is not None:
            self.journal.record_steps(step.closed, calls, step.spent)
            if not self.conversation.pending_calls:
                self.journal.decision_done()
        if step.stops and self.conversation.stopped is None:
            self.conversation._stop(step.stops[0])
        return next((step.paused[call.id] for call in calls if call.id in step.paused), None)

    async def _call_tool(self, call: ToolCall, step: _StepCalls) -> None:
        done = await self._run_tool(call, step.stops)
        if done.paused is not None:
            step.paused[call.id] = done.paused
            if done.subagent is not None and self.journal is not None:
                self.journal.link_subagent(call.id, done.subagent)
            return
        if done.client:
            self.handed_over.append(call.id)
            return
        result = done.events[0]
        assert isinstance(result, ToolResult)
        value = result.result if result.error is None else result.error
        self.conversation._add_tool_result(
            call,
            done.outcome,  # type: ignore[arg-type]
            value,
            is_error=result.error is not None,
            child_ids=done.child_ids,
            usage=done.usage,
            text=done.text,
        )
        error = None
        if result.error is not None:
            code = "denied" if done.outcome == "denied" else "tool_error"
            error = AgentError(code, result.error)
        step.closed[call.id] = ClosedCall(done.outcome, result.result, error)
        if done.spent is not None:
            step.spent = spent_plus(step.spent, done.spent)
        self.emit(done.events)
        if self.setup.reporters:
            await self._report("on_tool_end", self._context(), call, result)

    async def _run_tool(self, call: ToolCall, stops: list[StoppedByPermission]) -> _Call:
        """Run one call: its `ToolResult` (and `StateChanged`), or a request for a person."""
        if call.name in self.client_tools and call.name not in self.setup.tools:
            return _Call(client=True)
        tool = self.setup.tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted([*self.setup.tools, *self.client_tools])) or "none"
            return self._error(call, f"there is no tool {call.name!r}; the tools are: {known}")
        if call.raw_arguments is not None:
            return self._error(call, arguments_problem(call))
        gate = self.gate(call.id)
        if self.recovering and gate is not None and gate["approved"] and not tool.idempotent:
            gate = None  # approved, then cut by another crash: a person decides again
        if gate is not None and not gate["approved"]:
            reason = f": {gate['answer']}" if isinstance(gate["answer"], str) else ""
            return self._error(call, f"denied by a person{reason}", outcome="denied")
        if gate is not None and gate["arguments"] is not None:
            call = ToolCall(call.name, gate["arguments"], id=call.id)
        try:
            arguments = tool.validate(call.arguments)
        except ToolArgumentsError as exc:
            return self._error(call, str(exc))
        decision, permission = await decide(self.setup.permissions, call, self._context())
        if isinstance(decision, Deny):
            assert permission is not None
            name = permission_name(permission)
            if decision.stop:
                stops.append(StoppedByPermission(call, name))
            reason = f": {decision.reason}" if decision.reason else ""
            return self._error(call, f"denied by permission {name}{reason}", outcome="denied")
        if gate is None:
            needs = self._needs_person(tool, decision)
            if needs is not None:
                return self._pause(call, needs)
        if self.setup.reporters:
            await self._report("on_tool_start", self._context(), call)
        first = await self._attempt(tool, call, arguments)
        if not isinstance(first, Conflict):
            return first
        if not tool.idempotent:
            return self._error(call, f"{first}; nothing of this call was applied: read ctx.state "
                                     "again and retry if the change still makes sense")
        async with self._rerun_lock:  # re-runs take turns, so they converge
            while True:
                outcome = await self._attempt(tool, call, arguments)
                if not isinstance(outcome, Conflict):
                    return outcome

    def _needs_person(self, tool: Tool, decision: Any) -> str | None:
        """The prompt for a person if this call may not run without one, else None."""
        if isinstance(decision, Ask):
            return decision.prompt or f"allow {tool.name} with these arguments?"
        if tool.approval:
            return f"allow {tool.name} with these arguments?"
        if self.recovering and not tool.idempotent:
            return CRASH_PROMPT
        return None

    def _pause(self, call: ToolCall, prompt: str, schema: Mapping[str, Any] | None = None
               ) -> _Call:
        if self.journal is None:
            return self._error(call, "this call needs a person's approval, which only a run "
                                     "can wait for: use agent.run/arun/stream, then agent.resume")
        return _Call(paused=new_request(call, prompt, schema))

    async def _attempt(
        self, tool: Tool, call: ToolCall, arguments: Mapping[str, Any]
    ) -> _Call | Conflict:
        access = self.access
        draft = None
        if access.denied is None:
            draft = access.shared.draft(tool.name, writable=access.writable)
        ctx = RunContext(
            run_id=self.run_id,
            conversation=self.conversation,
            draft=draft,
            call_id=call.id,
            tool_name=tool.name,
            denied=access.denied,
            run=self,
        )
        if self.journal is not None:
            ctx.idempotency_key = self.journal.call_key(call.id)
        timeout = tool.timeout if tool.timeout is not None else self.setup.tool_timeout
        try:
            if timeout is None:
                value = await tool.call(ctx, arguments)
            else:
                with anyio.fail_after(timeout):
                    value = await tool.call(ctx, arguments)
            result = _to_json(value)
        except BaseException as exc:
            if draft is not None:
                draft.close()  # a failed, paused, timed-out or cancelled tool changes nothing
            if not isinstance(exc, Exception | PersonNeeded):
                raise  # a cancel goes on up
            return self._failed(call, exc, timeout, ctx)
        commit = None
        if draft is not None:
            try:
                commit = access.shared.commit(draft)
            except Conflict as conflict:
                return conflict
            except Refused as refused:
                return self._error(call, f"{refused}; nothing of this call was applied")
        done = _Call([ToolResult(call.id, call.name, result=result)], text=_as_text(result),
                     child_ids=ctx.child_ids, usage=ctx.child_usage, spent=ctx.child_spent)
        if commit is not None:
            done.events.append(StateChanged(commit.delta, commit.state, call.id, commit.version))
        return done

    def _failed(self, call: ToolCall, exc: Exception | PersonNeeded, timeout: float | None,
                ctx: RunContext) -> _Call:
        """What a tool that raised `exc` gives: a pause when it waits for a person, else an
        error result the model reads (with what its subagents used)."""
        if isinstance(exc, TimeoutError) and timeout is not None:
            return self._error(call, f"the tool did not finish within {timeout:g} s and was "
                                     "stopped; nothing of it was applied")
        if isinstance(exc, SubagentPaused) and self.journal is not None:
            return _Call(paused=exc.request, subagent=exc.link)
        if isinstance(exc, PersonNeeded):
            return self._pause(call, exc.prompt, exc.schema)
        declined = isinstance(exc, PersonDeclined)
        message = str(exc) if declined else f"{type(exc).__name__}: {exc}"
        failed = self._error(call, message, outcome="denied" if declined else "error")
        failed.child_ids, failed.usage = ctx.child_ids, ctx.child_usage
        failed.spent = ctx.child_spent
        return failed

    def _error(self, call: ToolCall, message: str, *, outcome: str = "error") -> _Call:
        message = valid_text(message)  # an exception's text may quote a surrogate-escaped name
        return _Call([ToolResult(call.id, call.name, error=message)], outcome=outcome, text=message)

    def _close_pending(self, reason: str) -> None:
        """Give every call still pending a "cancelled" result (and step), so the conversation
        and the run's record can go on."""
        calls = self.conversation.pending_calls
        for call in calls:
            self.conversation._add_tool_result(call, "cancelled", reason, is_error=True,
                                               text=reason)
        if calls and self.journal is not None and self.journal.run.in_flight is not None:
            self.journal.close_calls(calls, reason)

    # -- helpers -------------------------------------------------------------------------------

    def _context(self) -> RunContext:
        return RunContext(
            run_id=self.run_id,
            conversation=self.conversation,
            state=self.access.shared.value,
            denied=self.access.denied,
            run=self,
        )

    async def _report(self, hook: str, *args: Any) -> None:
        for reporter in self.setup.reporters:
            method = getattr(reporter, hook, None)
            if method is None:
                continue
            outcome = method(*args)
            if inspect.isawaitable(outcome):
                await outcome

    async def save_conversation(self) -> None:
        """Save the conversation's new entries (custom loops: after each turn)."""
        store = self.setup.store
        if store is not None:
            self.conversation._bind_store(store)
            await store.asave(self.conversation)

    def _send(self, event: RuntimeEvent) -> None:
        self.emit((event,))

    async def _fail(self, error: AgentError) -> None:
        """Close whatever is open, record the failure, then end the run with `RunFailed`."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self._step is not None:
            self._send(StepFinished(self._step))
            self._step = None
        self._close_pending(f"the run failed: {error.message}")
        self.conversation._fail_run(error.message)
        if self.journal is not None:
            self.journal.fail(error)
            try:
                await self.journal.save()
            except StoreError as exc:
                error = AgentError(error.code, f"{error.message}; {exc}")
        self._send(RunFailed(error))


def _first(exc: BaseException) -> BaseException:
    """The exception behind a task group's ExceptionGroup (its first), or `exc` itself."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _to_json(value: Any) -> Any:
    """A tool's return value as JSON; a view of ctx.state gives its current value."""
    try:
        return thaw(freeze(value, path="the result"))
    except TypeError:
        pass
    try:
        plain = pydantic_core.to_jsonable_python(value)
    except pydantic_core.PydanticSerializationError:
        raise TypeError(
            f"the tool returned a {type(value).__name__}, which is not JSON; return a str, "
            "number, dict, list, pydantic model or dataclass"
        ) from None
    return thaw(freeze(plain, path="the result"))  # a lone surrogate, too deep: TypeError


def _as_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))

