"""Running an agent on a conversation: think, use the tools, repeat until it answers.

A `Runner` works on one `State` (the conversation), one shared JSON document and, for whole runs,
one `Journal` (the run's durable record). `execute` runs a run and emits its events in order;
`think` and `use_tools` are single turns, for custom loops. Each step is one decision followed by
its tool calls, which run concurrently in one task group; each tool's state changes are committed
the moment it finishes, and its `ToolResult` and `StateChanged` are emitted together so nothing
comes between them. A call that needs a person pauses the run at the end of its step.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import anyio

from pyox_agents._errors import ungrouped
from pyox_agents.events import (
    ApprovalRequested,
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    StepFinished,
    StepStarted,
)
from pyox_agents.models.base import Model, ModelError, ModelRequest, ToolSpec
from pyox_agents.runtime import _tracing
from pyox_agents.runtime._calls import ToolCalls
from pyox_agents.runtime._ending import run_over
from pyox_agents.runtime._failures import StoreError, internal_error, request_failure, run_error
from pyox_agents.runtime._instructions import system_messages
from pyox_agents.runtime._journal import Journal, close_pending
from pyox_agents.runtime._planning import PlannerModel
from pyox_agents.runtime._process_runs import (
    SHUTDOWN,
    Interrupted,
    StoppedForShutdown,
    executing,
    interrupting,
    left_for_recovery,
    running_here,
    stopping,
)
from pyox_agents.runtime._records import Gate
from pyox_agents.runtime._replies import ReplyIds, ReplyStream, used_call_ids
from pyox_agents.runtime._setup import Access, Emit, Setup, SubagentPaused, discard
from pyox_agents.runtime._state_note import PersonEdits
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import NO_USAGE, Reply
from pyox_agents.state.patch import Op
from pyox_agents.state.run import AgentError, ApprovalRequest, RunState, StopReason
from pyox_agents.state.shared import Commit
from pyox_agents.tools import RunContext

__all__ = ["Access", "Runner", "Setup", "SubagentPaused", "discard", "running_here"]

_ENDS = (RunFinished, RunFailed)
"""The events that tell a run's end."""

_NO_SPAN = contextlib.nullcontext()
"""A run's span when tracing is off (one, reused: it holds nothing)."""


class Runner(ToolCalls):
    """Executes a run, or single turns, of an agent on a conversation."""

    __slots__ = ("_call_ids", "_reply_ids", "_rerun_lock", "_step", "_stream", "access",
                 "client_tools", "context", "conversation", "emit", "forwarded_props",
                 "handed_over", "journal", "model", "person", "run_id", "setup",
                 "usage")

    def __init__(self, setup: Setup, conversation: State, access: Access, *,
                 journal: Journal | None = None, emit: Emit = discard,
                 client_tools: Sequence[ToolSpec] = (), context: Sequence[str] = (),
                 forwarded_props: Any = None) -> None:
        self.setup = setup
        self.client_tools = {spec.name: spec for spec in client_tools}
        """Tools the client runs itself: the model may call them; the run hands the calls over."""
        self.context = tuple(context)
        """What the app tells the model about its situation, added to the instructions."""
        self.forwarded_props = forwarded_props
        """What the client forwarded with its request (`ctx.forwarded_props`)."""
        self.handed_over: list[str] = []
        """Ids of calls to client tools this run ended with, waiting for the client's results."""
        self.conversation = conversation
        self.access = access
        self.journal = journal
        self.run_id = journal.run.run_id if journal else secrets.token_hex(32)
        self.emit = emit
        """Where the run's events go, a list at a time (its consumer sets it before it runs)."""
        self._stream: ReplyStream | None = None
        self._reply_ids = ReplyIds(conversation.id)
        self._call_ids: set[str] | None = None
        """The call ids the conversation has used, once a reply of this run had a call."""
        self._step: int | None = None
        self.usage = NO_USAGE
        self._rerun_lock = asyncio.Lock()  # its waiters' deque is made only when one waits
        self.recovering = False
        """True when resuming a run whose process died: unfinished calls may have run."""
        self.person = PersonEdits()
        """A person's edits of the state while the run goes on, until the model is told."""
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

    async def execute(self, *, parent_id: str | None = None, parent_call_id: str | None = None,
                      resumed: bool = False) -> None:
        """Run to the end or to a pause, emitting events; the last is `RunFinished`/`RunFailed`.

        The steps of its start and end are helpers it calls, not a coroutine around its loop:
        each coroutine a run has open is resumed again for every token the model streams."""
        span = _NO_SPAN if _tracing.on is None else _tracing.run_span(self, resumed)
        with executing(self.run_id), span:
            try:
                await self._start(parent_id, parent_call_id, resumed)
                paused = await self._loop()
            except StoppedForShutdown:
                self._send(RunFailed(SHUTDOWN))
            except Interrupted:
                await self._record_interrupt()
            except anyio.get_cancelled_exc_class():
                await self._record_cancel()
                raise
            except Exception as exc:  # a model's or store's error, or a bug: report, never raise
                await self._fail_inside(exc)
            else:
                self._finished(paused)

    async def _start(self, parent_id: str | None, parent_call_id: str | None,
                     resumed: bool) -> None:
        """Record the run's start (or its resume), save it, and tell it (`RunStarted`)."""
        conversation, journal = self.conversation, self.journal
        assert journal is not None
        conversation._start_run(parent_id, parent_call_id, run_id=self.run_id)
        journal.audit("run_resumed" if resumed else "run_started",
                      {"thread_id": conversation.id, "goal": journal.run.goal})
        await journal.save()
        model = None if isinstance(self.model, PlannerModel) else self.model.name
        self._send(RunStarted(self.run_id, conversation.id, self.access.shared.value,
                              model=model, started_at=int(time.time() * 1000)))
        if self.setup.reporters:
            await self.setup.report("on_run_start", self._context())

    async def _record_cancel(self) -> None:
        """Record a cancelled run as cancelled (a shutdown's: left as saved, for recovery)."""
        journal = self.journal
        assert journal is not None
        with anyio.CancelScope(shield=True):
            close_pending(self.conversation, journal, "cancelled: the run was stopped")
            if left_for_recovery(self.run_id):  # a shutdown: the record stays as saved
                return
            self.conversation._fail_run("cancelled")
            journal.stop(StopReason.CANCELLED, "the run was cancelled")
            with contextlib.suppress(StoreError):  # nobody to tell: the record stays as was
                await journal.save()

    async def _record_interrupt(self) -> None:
        """End a run a newer message interrupted, at a step boundary: "cancelled", every step
        it finished kept (the newer message's run goes on from them)."""
        journal = self.journal
        assert journal is not None
        journal.stop(StopReason.CANCELLED, "a newer message interrupted the run after its "
                                           "last step")
        await journal.save()
        self._send(RunFinished(answer=None, state=self.access.shared.value, usage=self.usage,
                               stopped=self.conversation.stopped, outcome="cancelled"))

    async def _fail_inside(self, exc: Exception) -> None:
        """End the run failed by `exc`, raised inside it: a model's or store's error by its
        code, anything else as an internal error, logged with its details."""
        cause = ungrouped(exc)
        if isinstance(cause, ModelError | StoreError):
            await self._fail(run_error(cause, self.run_id))
        else:  # the details: in the server's log, and in the run's record
            await self._fail(internal_error(cause, self.run_id))

    def _finished(self, paused: ApprovalRequest | None) -> None:
        """Tell the run's end: the request it paused for, if any, then `RunFinished`."""
        if paused is not None:
            self._send(ApprovalRequested(paused))
        conversation = self.conversation
        self._send(RunFinished(answer=conversation.answer, state=self.access.shared.value,
                               usage=self.usage, stopped=conversation.stopped,
                               outcome="interrupt" if paused is not None else "success",
                               pending_call_ids=tuple(self.handed_over)))

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

    async def _loop(self) -> ApprovalRequest | None:
        """Steps until the run ends; the request it paused for, if it did."""
        journal = self.journal
        assert journal is not None
        step = 0
        while True:
            if await run_over(self.conversation, journal, self.setup.limits):
                return None
            if stopping(self.run_id):
                raise StoppedForShutdown
            if interrupting(self.run_id):
                raise Interrupted
            self._step = step
            self._send(StepStarted(step))
            idempotent = {name: tool.idempotent for name, tool in self.setup.tools.items()}
            if self.conversation.pending_calls:  # a step left open (a resume): finish it first
                journal.adopt(self.conversation.pending_calls, idempotent)
            else:
                reply = await self.think()
                journal.decide(reply.tool_calls, reply.usage, idempotent)
                if not reply.tool_calls:
                    self._step = None
                    self._send(StepFinished(step))
                    await run_over(self.conversation, journal, self.setup.limits)
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

    # -- one model decision --------------------------------------------------------------------

    async def think(self) -> Reply:
        """Ask the model (or planner) for the next decision and record it in the conversation."""
        conversation = self.conversation
        conversation._check_can_run()
        setup = self.setup  # a context only for those who read it (held while the model streams)
        ctx = self._context() if setup.reporters or callable(setup.instructions) else None
        await setup.report("on_think_start", ctx)
        messages = (*await system_messages(ctx, setup.instructions, self.context),
                    *conversation.messages, *self.person.note(setup.state_note))
        tools = (*(t.spec for t in setup.tools.values()), *self.client_tools.values())
        conversation._begin_think(len(messages), [t.name for t in tools])
        try:
            reply = await self.complete(ModelRequest(messages, tools))
            conversation._end_think(reply)
        except BaseException as exc:
            conversation._fail_think(request_failure(exc))
            raise
        if isinstance(self.model, PlannerModel) and self.model.answer is not None:
            conversation.finish(self.model.answer.value)  # keep a planner's answer as it is
            self.model.answer = None
        self.usage = self.usage + reply.usage
        await setup.report("on_think_end", ctx, reply)
        return reply

    def complete(self, request: ModelRequest) -> Coroutine[Any, Any, Reply]:
        """The model's reply to `request`, streamed as events (used by ask and compact too):
        `_stream_reply` itself when tracing is off (no coroutine around it to resume per
        token), else inside the request's span."""
        if _tracing.on is None:
            return self._stream_reply(request)
        return self._traced_reply(request)

    async def _traced_reply(self, request: ModelRequest) -> Reply:
        with _tracing.chat_span(self.model.name, request, self.conversation.id) as span:
            reply = await self._stream_reply(request)
            span.replied(reply)
        return reply

    async def _stream_reply(self, request: ModelRequest) -> Reply:
        self._stream = stream = ReplyStream(self.emit, {
            name: tool.predict_state for name, tool in self.setup.tools.items()},
            self._reply_id(), taken=self._used_call_ids)
        add = stream.add
        async for chunk in self.model.stream(request):
            add(chunk)
        reply = stream.finish()
        self._stream = None
        return reply

    def edit_state(self, ops: Sequence[Op], base_version: int) -> Commit | None:
        """Commit a person's edit (`RunHandle.edit_state`, `PersonEdits.commit`)."""
        return self.person.commit(self.access.shared, ops, base_version, self._show_edit)

    def _show_edit(self, event: StateChanged) -> None:
        """Show a person's edit once every version before it is shown (`InOrder`)."""
        self.access.in_order.show(event.version, self.emit, [event])

    def text_of(self, message_id: str) -> Callable[[], str] | None:
        """The text of this run's reply `message_id` so far, while it streams (a function
        that keeps giving it, all of it once the reply ended); None for any other message."""
        stream = self._stream
        if stream is None or stream.message_id != message_id:
            return None
        return stream.text_so_far()

    def share_call_ids(self, outer: Runner) -> None:
        """Give calls ids apart from those of `outer`'s stream, which this run's events go into
        (a subagent's run inside its parent's call): one set of ids, which both runs' replies
        add theirs to."""
        taken = outer._used_call_ids()
        taken.update(self._used_call_ids())
        self._call_ids = taken

    def _used_call_ids(self) -> set[str]:
        """The call ids the conversation has used (`ReplyStream`): read once a run, then kept
        by the replies that add theirs."""
        if self._call_ids is None:
            conversation = self.conversation
            with conversation._lock:
                self._call_ids = used_call_ids(conversation._history)
        return self._call_ids

    def _reply_id(self) -> str | None:
        """The id of the reply to the model request just recorded (None: no request was)."""
        conversation = self.conversation
        with conversation._lock:  # the entries as they are: no snapshot of the whole history
            history = conversation._history
            if not history or history[-1].kind != "model_request":
                return None
            return self._reply_ids.of(history, len(history) - 1)

    # -- helpers -------------------------------------------------------------------------------

    def _context(self) -> RunContext:
        return RunContext(run_id=self.run_id, conversation=self.conversation,
                          state=self.access.shared.value, denied=self.access.denied, run=self,
                          forwarded_props=self.forwarded_props)

    async def save_conversation(self) -> None:
        """Save the conversation's new entries (custom loops: after each turn)."""
        store = self.setup.store
        if store is not None:
            self.conversation._bind_store(store)
            await store.asave(self.conversation)

    def _send(self, event: RuntimeEvent) -> None:
        if type(event) in _ENDS:
            self.person.ended = True
        self.emit([event])  # a list of its own: a reader may keep it as it is (no copy)

    async def _fail(self, error: AgentError) -> None:
        """Close whatever is open, record the failure, then end the run with `RunFailed`."""
        if self._stream is not None:
            self._stream.cut()
            self._stream = None
        if self._step is not None:
            self._send(StepFinished(self._step))
            self._step = None
        close_pending(self.conversation, self.journal,  # the thread's words: public
                      f"the run failed: {error.public_message}")
        self.conversation._fail_run(error.public_message)
        if self.journal is not None:
            self.journal.fail(error)
            try:
                await self.journal.save()
            except StoreError as exc:
                error = AgentError(error.code, f"{error.message}; {exc}",
                                   f"{error.public_message}; {exc.public_message}")
        self._send(RunFailed(error))
