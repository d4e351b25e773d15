"""Running an agent on a conversation: think, use the tools, repeat until it answers.

A `Runner` works on one `State` (the conversation) and one shared JSON document. `execute` runs
a whole run and emits its events in order; `think` and `use_tools` are single turns, for custom
loops. Each step is one model decision followed by its tool calls, which run concurrently in one
task group; each tool's state changes are committed the moment it finishes, and its
`ToolResult` and `StateChanged` are emitted together so nothing comes between them. Everything
is recorded in the conversation's history as it happens.
"""

from __future__ import annotations

import inspect
import json
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic_core

from pyox_agents.events import (
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    StepFinished,
    StepStarted,
    ToolResult,
)
from pyox_agents.models.base import Model, ModelError, ModelRequest
from pyox_agents.permissions import Ask, Deny, Permission, decide, permission_name
from pyox_agents.replies import ReplyStream
from pyox_agents.state.conversation import State
from pyox_agents.state.frozen import freeze, thaw
from pyox_agents.state.messages import Message, Reply, ToolCall, Usage
from pyox_agents.state.patch import Conflict
from pyox_agents.state.run import AgentError
from pyox_agents.state.shared import SharedState
from pyox_agents.state.stopped import StoppedByPermission
from pyox_agents.tools import RunContext, Tool, ToolArgumentsError

__all__ = ["Access", "Runner", "Setup", "discard"]

Emit = Callable[[Sequence[RuntimeEvent]], None]
Instructions = str | Callable[[RunContext], Any] | None

NO_ACCESS = (
    "this subagent has no access to the shared state: give it with "
    'as_tool(..., state="read") or state="write"'
)


def discard(events: Sequence[RuntimeEvent]) -> None:
    """An `Emit` for turns nobody streams (custom loops, ask, compact)."""


@dataclass(frozen=True)
class Setup:
    """What a runner needs of its agent."""

    model: Model
    tools: Mapping[str, Tool]
    instructions: Instructions = None
    reporters: Sequence[Any] = ()
    permissions: tuple[Permission, ...] = ()
    store: Any = None


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


@dataclass
class _Call:
    """What running one tool call produced."""

    events: list[RuntimeEvent]
    outcome: str = "ok"
    text: str = ""
    child_ids: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


class Runner:
    """Executes a run, or single turns, of an agent on a conversation."""

    def __init__(
        self,
        setup: Setup,
        conversation: State,
        access: Access,
        *,
        run_id: str | None = None,
        emit: Emit = discard,
    ) -> None:
        self.setup = setup
        self.conversation = conversation
        self.access = access
        self.run_id = run_id or secrets.token_hex(32)
        self._emit = emit
        self._stream: ReplyStream | None = None
        self._step: int | None = None
        self.usage = Usage()
        self._rerun_lock = anyio.Lock()

    # -- a whole run ---------------------------------------------------------------------------

    async def execute(
        self,
        *,
        parent_id: str | None = None,
        parent_call_id: str | None = None,
        given_state: bool = False,
    ) -> None:
        """Run to the end, emitting events; the last one is `RunFinished` or `RunFailed`."""
        conversation = self.conversation
        try:
            conversation._start_run(parent_id, parent_call_id, run_id=self.run_id)
            if given_state:
                self._record_start_state()
            await self._save()
            self._send(RunStarted(self.run_id, conversation.id, self.access.shared.value))
            await self._report("on_run_start", self._context())
            await self._loop()
        except ModelError as exc:
            self._fail(AgentError(exc.code, str(exc)))
        except anyio.get_cancelled_exc_class():
            self._close_pending("cancelled: the run was stopped")
            conversation._fail_run("cancelled")
            raise
        except Exception as exc:  # a bug in a hook or in pyox-agents: report it, never raise it
            self._fail(AgentError("internal_error", f"{type(exc).__name__}: {exc}"))
        else:
            self._send(
                RunFinished(
                    answer=conversation.answer,
                    state=self.access.shared.value,
                    usage=self.usage,
                    stopped=conversation.stopped,
                )
            )

    async def _loop(self) -> None:
        step = 0
        while not self.conversation.finished and self.conversation.stopped is None:
            self._step = step
            self._send(StepStarted(step))
            if self.conversation.pending_calls:  # a turn left open: finish it first
                more = True
                await self.use_tools()
            else:
                reply = await self.think()
                more = bool(reply.tool_calls)
                if more:
                    await self.use_tools()
            self._step = None
            self._send(StepFinished(step))
            await self._save()
            if not more:
                return
            step += 1

    def _record_start_state(self) -> None:
        """Record the state given to the run, so the thread's state can be rebuilt from history."""
        value = self.access.shared.value
        op = {"op": "replace", "path": "", "value": thaw(value)}
        self.access.owner._add_state_change("", [op], 0)

    # -- one model decision --------------------------------------------------------------------

    async def think(self) -> Reply:
        """Ask the model for the next decision and record it in the conversation."""
        conversation = self.conversation
        conversation._check_can_run()
        ctx = self._context()
        await self._report("on_think_start", ctx)
        messages = (*await self._system_messages(ctx), *conversation.messages)
        tools = tuple(t.spec for t in self.setup.tools.values())
        conversation._begin_think(len(messages), [t.name for t in tools])
        try:
            reply = await self._ask_model(ModelRequest(messages, tools))
            conversation._end_think(reply)
        except BaseException as exc:
            conversation._fail_think(f"{type(exc).__name__}: {exc}" if str(exc) else "cancelled")
            raise
        self.usage = self.usage + reply.usage
        await self._report("on_think_end", ctx, reply)
        return reply

    async def complete(self, request: ModelRequest) -> Reply:
        """The model's reply to `request`, streamed as events (used by ask and compact too)."""
        return await self._ask_model(request)

    async def _ask_model(self, request: ModelRequest) -> Reply:
        self._stream = ReplyStream(self._send)
        async for chunk in self.setup.model.stream(request):
            self._stream.add(chunk)
        reply = self._stream.finish()
        self._stream = None
        return reply

    async def _system_messages(self, ctx: RunContext) -> list[Message]:
        instructions = self.setup.instructions
        if instructions is None:
            return []
        if callable(instructions):
            text = instructions(ctx)
            if inspect.isawaitable(text):
                text = await text
            if not isinstance(text, str):
                raise TypeError(
                    f"the instructions callable returned {type(text).__name__}, not str"
                )
            instructions = text
        return [Message.system(instructions)] if instructions else []

    # -- the tool calls of one decision --------------------------------------------------------

    async def use_tools(self) -> None:
        """Run every pending tool call concurrently; each result is recorded as it closes."""
        calls = self.conversation.pending_calls
        stops: list[StoppedByPermission] = []
        try:
            async with anyio.create_task_group() as group:
                for call in calls:
                    group.start_soon(self._call_tool, call, stops)
        except BaseException:
            self._close_pending("cancelled: the run was stopped")
            raise
        if stops and self.conversation.stopped is None:
            self.conversation._stop(stops[0])

    async def _call_tool(self, call: ToolCall, stops: list[StoppedByPermission]) -> None:
        done = await self._run_tool(call, stops)
        result = done.events[0]
        assert isinstance(result, ToolResult)
        self.conversation._add_tool_result(
            call,
            done.outcome,  # type: ignore[arg-type]
            result.result if result.error is None else result.error,
            is_error=result.error is not None,
            child_ids=done.child_ids,
            usage=done.usage,
            text=done.text,
        )
        for event in done.events[1:]:
            if isinstance(event, StateChanged):
                self.access.owner._add_state_change(call.id, event.delta, event.version)
        self._emit(done.events)
        await self._report("on_tool_end", self._context(), call, result)

    async def _run_tool(self, call: ToolCall, stops: list[StoppedByPermission]) -> _Call:
        """Run one call; its `ToolResult`, followed by its `StateChanged` if any."""
        tool = self.setup.tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self.setup.tools)) or "none"
            return self._error(call, f"there is no tool {call.name!r}; the tools are: {known}")
        if call.raw_arguments is not None:
            return self._error(
                call,
                f"the arguments of {call.name!r} are not a JSON object: "
                f"{call.raw_arguments!r}; send them as a JSON object",
            )
        try:
            arguments = tool.validate(call.arguments)
        except ToolArgumentsError as exc:
            return self._error(call, str(exc))
        decision, permission = await decide(self.setup.permissions, call, self._context())
        if isinstance(decision, Deny | Ask):
            assert permission is not None
            name = permission_name(permission)
            reason = decision.reason if isinstance(decision, Deny) else "it needs a person"
            if isinstance(decision, Deny) and decision.stop:
                stops.append(StoppedByPermission(call, name))
            message = f"denied by permission {name}" + (f": {reason}" if reason else "")
            return self._error(call, message, outcome="denied")
        await self._report("on_tool_start", self._context(), call)
        first = await self._attempt(tool, call, arguments)
        if not isinstance(first, Conflict):
            return first
        if not tool.idempotent:
            return self._error(
                call,
                f"{first}; nothing of this call was applied: read ctx.state "
                "again and retry if the change still makes sense",
            )
        async with self._rerun_lock:  # re-runs take turns, so they converge
            while True:
                outcome = await self._attempt(tool, call, arguments)
                if not isinstance(outcome, Conflict):
                    return outcome

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
            runner=self,
        )
        try:
            value = await tool.call(ctx, arguments)
            result = _to_json(value)
        except BaseException as exc:
            if draft is not None:
                draft.close()  # a failed or cancelled tool changes nothing, now or later
            if not isinstance(exc, Exception):
                raise
            failed = self._error(call, f"{type(exc).__name__}: {exc}")
            failed.child_ids, failed.usage = ctx.child_ids, ctx.child_usage
            return failed
        commit = None
        if draft is not None:
            try:
                commit = access.shared.commit(draft)
            except Conflict as conflict:
                return conflict
        done = _Call(
            [ToolResult(call.id, call.name, result=result)],
            text=_as_text(result),
            child_ids=ctx.child_ids,
            usage=ctx.child_usage,
        )
        if commit is not None:
            done.events.append(StateChanged(commit.delta, commit.state, call.id, commit.version))
        return done

    def _error(self, call: ToolCall, message: str, *, outcome: str = "error") -> _Call:
        return _Call([ToolResult(call.id, call.name, error=message)], outcome=outcome, text=message)

    def _close_pending(self, reason: str) -> None:
        """Give every call still pending a "cancelled" result, so the conversation can go on."""
        for call in self.conversation.pending_calls:
            self.conversation._add_tool_result(
                call, "cancelled", reason, is_error=True, text=reason
            )

    # -- helpers -------------------------------------------------------------------------------

    def _context(self) -> RunContext:
        return RunContext(
            run_id=self.run_id,
            conversation=self.conversation,
            state=self.access.shared.value,
            denied=self.access.denied,
            runner=self,
        )

    async def _report(self, hook: str, *args: Any) -> None:
        for reporter in self.setup.reporters:
            method = getattr(reporter, hook, None)
            if method is None:
                continue
            outcome = method(*args)
            if inspect.isawaitable(outcome):
                await outcome

    async def _save(self) -> None:
        store = self.setup.store
        if store is not None:
            self.conversation._bind_store(store)
            await store.asave(self.conversation)

    def _send(self, event: RuntimeEvent) -> None:
        self._emit((event,))

    def _fail(self, error: AgentError) -> None:
        """Close whatever is open, record the failure, then end the run with `RunFailed`."""
        events: list[RuntimeEvent] = []
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self._step is not None:
            events.append(StepFinished(self._step))
            self._step = None
        self._close_pending(f"the run failed: {error.message}")
        self.conversation._fail_run(error.message)
        events.append(RunFailed(error))
        self._emit(events)


def _to_json(value: Any) -> Any:
    """A tool's return value as JSON; a view of ctx.state gives its current value."""
    try:
        return thaw(freeze(value, path="the result"))
    except TypeError:
        pass
    try:
        return pydantic_core.to_jsonable_python(value)
    except pydantic_core.PydanticSerializationError:
        raise TypeError(
            f"the tool returned a {type(value).__name__}, which is not JSON; return a str, "
            "number, dict, list, pydantic model or dataclass"
        ) from None


def _as_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))
