"""One run of an agent: ask the model, run the tools it asks for, repeat until it answers.

The `Runner` executes a run and hands its events, in order, to `emit`. Each step is one model
decision followed by its tool calls, which run concurrently in one task group; each tool's state
changes are committed the moment it finishes, and its `ToolResult` and `StateChanged` are emitted
together so nothing comes between them.
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
    ReasoningDelta,
    ReasoningEnded,
    ReasoningStarted,
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    StepFinished,
    StepStarted,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
)
from pyox_agents.models.base import (
    Model,
    ModelError,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    UsageChunk,
)
from pyox_agents.state.frozen import freeze, thaw
from pyox_agents.state.messages import Message, Reply, ToolCall, Usage
from pyox_agents.state.patch import Conflict
from pyox_agents.state.run import AgentError
from pyox_agents.state.shared import SharedState
from pyox_agents.tools import RunContext, Tool, ToolArgumentsError

Emit = Callable[[Sequence[RuntimeEvent]], None]
Instructions = str | Callable[[RunContext], Any] | None


def new_message_id() -> str:
    """A fresh id for an assistant message."""
    return "msg_" + secrets.token_hex(8)


@dataclass
class _Open:
    """What the current step has opened and must close, even when the run fails."""

    step: int | None = None
    text: str | None = None
    reasoning: str | None = None
    calls: dict[int, ToolCall] = field(default_factory=dict)


@dataclass
class _Streamed:
    """The parts of one model reply as they arrive."""

    message_id: str
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    names: dict[int, str] = field(default_factory=dict)
    ids: dict[int, str] = field(default_factory=dict)
    arguments: dict[int, list[str]] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)


class Runner:
    """Executes one run. Made by `Agent.stream`; not meant to be used directly."""

    def __init__(
        self,
        *,
        model: Model,
        tools: Mapping[str, Tool],
        instructions: Instructions,
        reporters: Sequence[Any],
        run_id: str,
        thread_id: str,
        shared: SharedState,
        messages: list[Message],
        emit: Emit,
    ) -> None:
        self._model = model
        self._tools = tools
        self._instructions = instructions
        self._reporters = reporters
        self.run_id = run_id
        self.thread_id = thread_id
        self._shared = shared
        self._messages = messages
        self._emit = emit
        self._open = _Open()
        self._usage = Usage()
        self._rerun_lock = anyio.Lock()

    async def execute(self) -> None:
        """Run to the end, emitting events; the last one is `RunFinished` or `RunFailed`."""
        try:
            answer = await self._loop()
        except ModelError as exc:
            self._fail(AgentError(exc.code, str(exc)))
        except Exception as exc:  # a bug in a hook or in pyox-agents: report it, never raise it
            message = f"{type(exc).__name__}: {exc}"
            self._fail(AgentError("internal_error", message))
        else:
            self._send(RunFinished(answer=answer, state=self._shared.value, usage=self._usage))

    async def _loop(self) -> Any:
        self._send(RunStarted(self.run_id, self.thread_id, self._shared.value))
        await self._report("on_run_start", self._context())
        step = 0
        while True:
            self._open.step = step
            self._send(StepStarted(step))
            reply = await self._think()
            if reply.tool_calls:
                results = await self._use_tools(reply.tool_calls)
                self._messages.extend(results)
            self._open.step = None
            self._send(StepFinished(step))
            if not reply.tool_calls:
                return reply.text
            step += 1

    # -- one model decision ------------------------------------------------------------------

    async def _think(self) -> Reply:
        ctx = self._context()
        await self._report("on_think_start", ctx)
        request = ModelRequest(
            messages=tuple(await self._system_messages(ctx)) + tuple(self._messages),
            tools=tuple(t.spec for t in self._tools.values()),
        )
        streamed = _Streamed(new_message_id())
        async for chunk in self._model.stream(request):
            if isinstance(chunk, TextChunk):
                self._on_text(streamed, chunk.delta)
            elif isinstance(chunk, ReasoningChunk):
                self._on_reasoning(streamed, chunk.delta)
            elif isinstance(chunk, ToolCallChunk):
                self._on_tool_call(streamed, chunk)
            elif isinstance(chunk, UsageChunk):
                streamed.usage = streamed.usage + chunk.usage
        self._close_reasoning(streamed)
        self._close_text(streamed)
        if self._open.calls:
            self._end_call(streamed, max(self._open.calls))
        reply = Reply(
            text="".join(streamed.text),
            reasoning="".join(streamed.reasoning),
            tool_calls=tuple(_parse_call(streamed, index) for index in sorted(streamed.names)),
            usage=streamed.usage,
        )
        self._usage = self._usage + streamed.usage
        self._messages.append(Message.assistant(reply.text, reply.tool_calls))
        await self._report("on_think_end", ctx, reply)
        return reply

    async def _system_messages(self, ctx: RunContext) -> list[Message]:
        instructions = self._instructions
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

    def _on_text(self, streamed: _Streamed, delta: str) -> None:
        self._close_reasoning(streamed)
        if self._open.text is None:
            self._open.text = streamed.message_id
            self._send(TextStarted(streamed.message_id))
        streamed.text.append(delta)
        self._send(TextDelta(streamed.message_id, delta))

    def _on_reasoning(self, streamed: _Streamed, delta: str) -> None:
        if self._open.reasoning is None:
            self._open.reasoning = streamed.message_id
            self._send(ReasoningStarted(streamed.message_id))
        streamed.reasoning.append(delta)
        self._send(ReasoningDelta(streamed.message_id, delta))

    def _on_tool_call(self, streamed: _Streamed, chunk: ToolCallChunk) -> None:
        index = chunk.index
        if index not in streamed.names:
            if chunk.name is None:
                raise ModelError(
                    f"the model streamed arguments for tool call {index} before its name"
                )
            self._close_reasoning(streamed)
            self._close_text(streamed)
            if self._open.calls:
                self._end_call(streamed, max(self._open.calls))
            streamed.names[index] = chunk.name
            streamed.ids[index] = chunk.id or "call_" + secrets.token_hex(12)
            streamed.arguments[index] = []
            self._open.calls[index] = ToolCall(chunk.name, id=streamed.ids[index])
            self._send(ToolCallStarted(streamed.ids[index], chunk.name, streamed.message_id))
        if chunk.arguments:
            streamed.arguments[index].append(chunk.arguments)
            self._send(ToolCallArgsDelta(streamed.ids[index], chunk.arguments))

    def _end_call(self, streamed: _Streamed, index: int) -> None:
        call = _parse_call(streamed, index)
        del self._open.calls[index]
        self._send(ToolCallEnded(call.id, call.name, call.arguments))

    def _close_text(self, streamed: _Streamed) -> None:
        if self._open.text is not None:
            self._open.text = None
            self._send(TextEnded(streamed.message_id, "".join(streamed.text)))

    def _close_reasoning(self, streamed: _Streamed) -> None:
        if self._open.reasoning is not None:
            self._open.reasoning = None
            self._send(ReasoningEnded(streamed.message_id, "".join(streamed.reasoning)))

    # -- the tool calls of one decision ------------------------------------------------------

    async def _use_tools(self, calls: Sequence[ToolCall]) -> list[Message]:
        results: dict[str, Message] = {}
        async with anyio.create_task_group() as group:
            for call in calls:
                group.start_soon(self._call_tool, call, results)
        return [results[call.id] for call in calls]

    async def _call_tool(self, call: ToolCall, results: dict[str, Message]) -> None:
        events = await self._run_tool(call)
        result = events[0]
        assert isinstance(result, ToolResult)
        if result.error is not None:
            results[call.id] = Message.tool(call, result.error, is_error=True)
        else:
            results[call.id] = Message.tool(call, _as_text(result.result))
        self._emit(events)
        await self._report("on_tool_end", self._context(), call, result)

    async def _run_tool(self, call: ToolCall) -> list[RuntimeEvent]:
        """Run one call; return its `ToolResult`, followed by its `StateChanged` if any."""
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            return [self._error(call, f"there is no tool {call.name!r}; the tools are: {known}")]
        if call.raw_arguments is not None:
            return [
                self._error(
                    call,
                    f"the arguments of {call.name!r} are not a JSON object: "
                    f"{call.raw_arguments!r}; send them as a JSON object",
                )
            ]
        try:
            arguments = tool.validate(call.arguments)
        except ToolArgumentsError as exc:
            return [self._error(call, str(exc))]
        await self._report("on_tool_start", self._context(), call)
        first = await self._attempt(tool, call, arguments)
        if not isinstance(first, Conflict):
            return first
        if not tool.idempotent:
            return [
                self._error(
                    call,
                    f"{first}; nothing of this call was applied: read ctx.state "
                    "again and retry if the change still makes sense",
                )
            ]
        async with self._rerun_lock:  # re-runs take turns, so they converge
            while True:
                outcome = await self._attempt(tool, call, arguments)
                if not isinstance(outcome, Conflict):
                    return outcome

    async def _attempt(
        self, tool: Tool, call: ToolCall, arguments: Mapping[str, Any]
    ) -> list[RuntimeEvent] | Conflict:
        draft = self._shared.draft(tool.name)
        ctx = RunContext(
            run_id=self.run_id,
            thread_id=self.thread_id,
            draft=draft,
            call_id=call.id,
            tool_name=tool.name,
        )
        try:
            value = await tool.call(ctx, arguments)
            result = _to_json(value)
        except BaseException as exc:
            draft.close()  # a failed or cancelled tool changes nothing, now or later
            if not isinstance(exc, Exception):
                raise
            return [self._error(call, f"{type(exc).__name__}: {exc}")]
        try:
            commit = self._shared.commit(draft)
        except Conflict as conflict:
            return conflict
        done: ToolResult = ToolResult(call.id, call.name, result=result)
        if commit is None:
            return [done]
        return [done, StateChanged(commit.delta, commit.state, call.id, commit.version)]

    def _error(self, call: ToolCall, message: str) -> ToolResult:
        return ToolResult(call.id, call.name, error=message)

    # -- helpers -----------------------------------------------------------------------------

    def _context(self) -> RunContext:
        return RunContext(run_id=self.run_id, thread_id=self.thread_id, state=self._shared.value)

    async def _report(self, hook: str, *args: Any) -> None:
        for reporter in self._reporters:
            method = getattr(reporter, hook, None)
            if method is None:
                continue
            outcome = method(*args)
            if inspect.isawaitable(outcome):
                await outcome

    def _send(self, event: RuntimeEvent) -> None:
        self._emit((event,))

    def _fail(self, error: AgentError) -> None:
        """Close whatever is open, then end the run with `RunFailed`."""
        events: list[RuntimeEvent] = []
        if self._open.reasoning is not None:
            events.append(ReasoningEnded(self._open.reasoning, ""))
        if self._open.text is not None:
            events.append(TextEnded(self._open.text, ""))
        for call in self._open.calls.values():
            events.append(ToolCallEnded(call.id, call.name, {}))
        if self._open.step is not None:
            events.append(StepFinished(self._open.step))
        self._open = _Open()
        events.append(RunFailed(error))
        self._emit(events)


def _parse_call(streamed: _Streamed, index: int) -> ToolCall:
    text = "".join(streamed.arguments[index]) or "{}"
    name, call_id = streamed.names[index], streamed.ids[index]
    try:
        arguments = json.loads(text)
    except ValueError:
        return ToolCall(name, {}, id=call_id, raw_arguments=text)
    if not isinstance(arguments, dict):
        return ToolCall(name, {}, id=call_id, raw_arguments=text)
    return ToolCall(name, arguments, id=call_id)


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
