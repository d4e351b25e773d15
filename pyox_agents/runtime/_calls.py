"""The tool-call path of a run: every pending call of a decision run at once, each checked
(its tool, arguments, a person's answer, the permissions), paused for a person when it needs one,
run with its timeout, its state changes committed as it finishes, and its result recorded."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import pydantic_core

from pyox_agents._run_context import Preliminary
from pyox_agents.events import PreliminaryResult, RuntimeEvent, StateChanged, ToolResult
from pyox_agents.models.base import ToolSpec
from pyox_agents.runtime import _tracing
from pyox_agents.runtime._failures import tool_failure
from pyox_agents.runtime._journal import Journal, close_pending
from pyox_agents.runtime._permissions import Ask, Deny, decide, permission_name
from pyox_agents.runtime._records import ClosedCall, Gate, new_request, spent_plus
from pyox_agents.runtime._replies import arguments_problem, valid_text
from pyox_agents.runtime._setup import Access, Emit, Setup, SubagentPaused
from pyox_agents.state._json_errors import not_json
from pyox_agents.state.conversation import State
from pyox_agents.state.frozen import NotJSON, freeze, python_path, thaw
from pyox_agents.state.messages import ToolCall, Usage
from pyox_agents.state.patch import inverse
from pyox_agents.state.rebase import Conflict
from pyox_agents.state.run import AgentError, ApprovalRequest, Spent
from pyox_agents.state.shared import Refused
from pyox_agents.state.stopped import StoppedByPermission
from pyox_agents.tools import PersonDeclined, PersonNeeded, RunContext, Tool, ToolArgumentsError

__all__ = ["CRASH_PROMPT", "ToolCalls"]

CRASH_PROMPT = "outcome unknown after a crash: run again?"


@dataclass
class _StepCalls:
    """What the tool calls of one step produced, as each closes (they may run at once)."""

    calls: tuple[ToolCall, ...]
    """The step's calls, in request order."""
    closed: dict[str, ClosedCall] = field(default_factory=dict)
    """The calls that have a result and no step in the run's record yet, by call id."""
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
    error_type: str | None = None
    """What kind of error ended the call, for tracing: the exception's class, if it raised."""
    detail: str | None = None
    """What the run's record keeps of the error, when it says more than the result's text."""

    def traced(self, span: _tracing.ToolSpan) -> None:
        """Tell the call's span how it ended."""
        if self.paused is not None or self.client:
            span.ended("paused" if self.paused is not None else "handed_over")
            return
        result = self.events[0]
        assert isinstance(result, ToolResult)
        error = self.detail or result.error  # telemetry is the server's: the whole text
        span.ended(self.outcome, result.result, error, self.error_type)


class ToolCalls:
    """The tool-call part of a `Runner`: what it reads of the runner, and its calls' path."""

    __slots__ = ("recovering",)  # (the rest are the runner's)

    setup: Setup
    access: Access
    conversation: State
    journal: Journal | None
    run_id: str
    emit: Emit
    client_tools: dict[str, ToolSpec]
    forwarded_props: Any
    handed_over: list[str]
    recovering: bool
    _rerun_lock: asyncio.Lock

    if TYPE_CHECKING:
        def gate(self, call_id: str) -> Gate | None: ...
        def _context(self) -> RunContext: ...


    async def use_tools(self) -> ApprovalRequest | None:
        """Run every pending tool call concurrently; each result is recorded as it closes.

        Returns the first request for a person, if a call needs one: such calls stay pending.
        """
        calls = self.conversation.pending_calls
        step = _StepCalls(calls)
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
            close_pending(self.conversation, self.journal, "cancelled: the run was stopped")
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
        if _tracing.on is None:
            done = await self._run_tool(call, step.stops)
        else:
            with _tracing.tool_span(call, self.conversation.id) as span:
                done = await self._run_tool(call, step.stops)
                done.traced(span)
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
            call, done.outcome, value,  # type: ignore[arg-type]
            is_error=result.error is not None, child_ids=done.child_ids, usage=done.usage,
            text=done.text)
        error = None
        if result.error is not None:
            code = "denied" if done.outcome == "denied" else "tool_error"
            error = AgentError(code, done.detail or result.error)  # the record: the whole text
        step.closed[call.id] = ClosedCall(done.outcome, result.result, error)
        if done.spent is not None:
            step.spent = spent_plus(step.spent, done.spent)
        journal = self.journal
        if journal is not None and journal.store is not None \
                and type(done.events[-1]) is StateChanged:  # saved before it is shown
            await self._save_then_show(done.events, step)
        else:
            self.emit(done.events)
        if self.setup.reporters:
            await self.setup.report("on_tool_end", self._context(), call, result)

    async def _save_then_show(self, events: list[RuntimeEvent], step: _StepCalls) -> None:
        """Save the calls closed so far, then show `events` (a call's result and the change
        it committed, just now: no wait came between): see `Journal.save_closed`. Versions
        committed meanwhile wait for it (`InOrder`), and a committed change is saved and shown
        even if the run is stopped meanwhile (or shown, if the save failed: the run's end
        saves it again, or tells why it could not)."""
        assert self.journal is not None
        changed = events[-1]
        assert type(changed) is StateChanged
        in_order = self.access.in_order
        in_order.saving(changed.version)
        closed = dict(step.closed)
        step.closed.clear()
        with anyio.CancelScope(shield=True):
            try:
                await self.journal.save_closed(closed, step.calls,
                                               not self.conversation.pending_calls)
            finally:
                in_order.saved(changed.version, self.emit, events)

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
            await self.setup.report("on_tool_start", self._context(), call)
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

    async def _attempt(self, tool: Tool, call: ToolCall, arguments: Mapping[str, Any]
                       ) -> _Call | Conflict:
        access = self.access
        draft = None
        if access.denied is None:
            draft = access.shared.draft(tool.name, writable=access.writable)
        ctx = RunContext(run_id=self.run_id, conversation=self.conversation, draft=draft,
                         call_id=call.id, tool_name=tool.name, denied=access.denied, run=self,
                         send=self._sender(call), forwarded_props=self.forwarded_props)
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
            if _is_cancel(exc):
                raise  # a cancel goes on up
            return self._failed(call, exc, timeout, ctx)
        commit = None
        if draft is not None:
            try:
                before = access.shared.value
                commit = access.shared.commit(draft)
                if commit is not None and access.undo is not None:
                    access.undo.append((commit.version, inverse(before, commit.ops)))
            except Conflict as conflict:
                return conflict
            except Refused as refused:
                return self._error(call, f"{refused}; nothing of this call was applied")
        done = _Call([ToolResult(call.id, call.name, result=result)], text=_as_text(result),
                     child_ids=ctx.child_ids, usage=ctx.child_usage, spent=ctx.child_spent)
        if commit is not None:
            done.events.append(StateChanged(commit.delta, commit.state, call.id, commit.version))
        return done

    def _sender(self, call: ToolCall) -> Callable[[Any], None]:
        """How a tool's `ctx.emit`, `ctx.progress`, ... and yielded values reach the run's
        stream, now: from the event loop directly, from a sync tool's worker thread through
        the loop."""
        loop_thread = threading.get_ident()
        emit = self.emit

        def send(event: Any) -> None:
            if isinstance(event, Preliminary):
                event = PreliminaryResult(call.id, call.name, _to_json(event.value))
            if threading.get_ident() == loop_thread:
                emit((event,))
            else:
                anyio.from_thread.run_sync(emit, (event,))

        return send

    def _failed(self, call: ToolCall, exc: BaseException, timeout: float | None,
                ctx: RunContext) -> _Call:
        """What a tool that raised `exc` gives: a pause when it waits for a person, else an
        error result the model reads (with what its subagents used). That holds for what is
        not an `Exception` too (`SystemExit` from argparse or `sys.exit`, `KeyboardInterrupt`):
        raised on, it would end the run, and in a server the whole process."""
        if isinstance(exc, TimeoutError) and timeout is not None:
            return replace(self._error(call, f"the tool did not finish within {timeout:g} s and "
                                             "was stopped; nothing of it was applied"),
                           error_type="timeout")
        if isinstance(exc, SubagentPaused) and self.journal is not None:
            return _Call(paused=exc.request, subagent=exc.link)
        if isinstance(exc, PersonNeeded):
            return self._pause(call, exc.prompt, exc.schema)
        public, detail = tool_failure(exc, call.name, call.id)
        failed = self._error(call, public,
                             outcome="denied" if isinstance(exc, PersonDeclined) else "error")
        return replace(failed, detail=detail, child_ids=ctx.child_ids, usage=ctx.child_usage,
                       spent=ctx.child_spent,
                       error_type=f"{type(exc).__module__}.{type(exc).__qualname__}")

    def _error(self, call: ToolCall, message: str, *, outcome: str = "error") -> _Call:
        message = valid_text(message)  # an exception's text may quote a surrogate-escaped name
        return _Call([ToolResult(call.id, call.name, error=message)], outcome=outcome, text=message)


def _is_cancel(exc: BaseException) -> bool:
    """Whether `exc` is a cancel (the tool's timeout, a stopped run), which goes on up, or a
    group that holds one; anything else a tool raises is the tool's failure."""
    if isinstance(exc, BaseExceptionGroup):
        return any(_is_cancel(inner) for inner in exc.exceptions)
    return isinstance(exc, asyncio.CancelledError | anyio.get_cancelled_exc_class())


def _to_json(value: Any) -> Any:
    """A tool's return value as JSON; a view of ctx.state gives its current value."""
    try:
        return thaw(freeze(value, path="the result"))
    except TypeError:
        pass
    try:
        plain = pydantic_core.to_jsonable_python(value)  # a model, a dataclass, a set, ...
    except _NOT_SERIALIZABLE:
        raise NotJSON(_not_serializable(value, [])) from None
    return thaw(freeze(plain, path="the result"))  # a lone surrogate, too deep: TypeError


_NOT_SERIALIZABLE = (pydantic_core.PydanticSerializationError, UnicodeDecodeError)
"""What pydantic raises for a value it cannot make JSON of (bytes that are not UTF-8: the
decode error)."""


def _not_serializable(value: Any, at: list[str | int]) -> str:
    """What in `value` (a tool's result) pydantic cannot make JSON of, and where."""
    items = value.items() if isinstance(value, dict) else (
        enumerate(value) if isinstance(value, list | tuple) else ())
    for key, item in items:
        try:
            pydantic_core.to_jsonable_python(item)
        except _NOT_SERIALIZABLE:
            return _not_serializable(item, [*at, key])
    return not_json(value, python_path("the result", at))


def _as_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))
