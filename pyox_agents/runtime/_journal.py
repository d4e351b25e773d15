"""A run's durable record as it happens: its `RunState`, its audit chain, and the store writes.

The unit of saving is the decision. When a decision is made, one write saves the conversation's
new entries, the `RunState` with `in_flight` describing every tool call of the decision, and the
audit records; when its calls have all closed, a second write saves their results, their steps
(in the order the calls were asked for) and the shared state. A call that changed the shared
state is saved as it closes, before its change is shown (`save_closed`). A process that dies
in between leaves a record that says which calls may have run, so `resume` can decide about
each.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any, cast

import anyio.to_thread

from pyox_agents.runtime._failures import StoreError
from pyox_agents.runtime._records import (
    ClosedCall,
    DecisionCall,
    Gate,
    InFlight,
    Saved,
    idempotency_key,
    spent_plus,
)
from pyox_agents.runtime._to_the_end import to_the_end
from pyox_agents.state.audit import audit_record
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import ToolCall, Usage
from pyox_agents.state.run import (
    AgentError,
    ApprovalRequest,
    RunState,
    RunStatus,
    Spent,
    Step,
    StopReason,
)
from pyox_agents.state.shared import SharedState
from pyox_agents.stores import StoreUnavailable
from pyox_agents.stores.base import StepRecord, Store

__all__ = ["Journal", "StoreError", "close_pending"]


def close_pending(conversation: State, journal: Journal | None, reason: str) -> None:
    """Give every call still pending a "cancelled" result (and, in a run, its step), so the
    conversation and the run's record can go on."""
    calls = conversation.pending_calls
    for call in calls:
        conversation._add_tool_result(call, "cancelled", reason, is_error=True, text=reason)
    if calls and journal is not None and journal.run.in_flight is not None:
        journal.close_calls(calls, reason)


class Journal:
    """Keeps one run's `RunState` and audit chain, and writes them with the conversation."""

    __slots__ = ("_audit", "_audited", "_awrite_lock", "_dropped", "_started", "_tickets",
                 "_write_lock", "_written", "before_end", "conversation", "fence", "owner", "run",
                 "shared", "store")

    def __init__(self, run: RunState, conversation: State, shared: SharedState,
                 store: Store | None) -> None:
        self.run = run
        self.conversation = conversation
        self.shared = shared
        self.store = store
        self._audit: list[dict[str, Any]] = []
        self._audited = 0  # audit records made
        self._dropped = 0  # of them, written (or dropped: no store)
        self._started = time.monotonic()
        self.fence: tuple[str, int] | None = None
        """(thread id, lease token) when the run holds a store lease: writes are fenced."""
        self._write_lock = threading.Lock()
        self._awrite_lock = asyncio.Lock()  # its waiters' deque is made only when one waits
        self._tickets = 0  # saves asked for
        self._written = 0  # the latest save written
        self.owner: str | None = None
        """The principal a server runs this for: a new thread is saved as theirs."""
        self.before_end: Callable[[], Awaitable[None]] | None = None
        """Awaited before a save of the ended run, which drops the shared state from its record
        (`RunHandle.batches(keep_pace=True)`: its reader is done with every version first)."""

    # -- what happened -------------------------------------------------------------------------

    def audit(self, kind: str, data: Any) -> None:
        """Append an audit record to the chain (written with the next save)."""
        record = audit_record(self.run.audit_head, kind, data)
        self.run.audit_head = {"seq": record["seq"], "digest": record["digest"]}
        self._audit.append(record)
        self._audited += 1

    def decide(self, calls: tuple[ToolCall, ...], usage: Usage, idempotent: Mapping[str, bool]
               ) -> None:
        """A decision was made: count it and its usage, and mark its calls in flight."""
        index = self.run.spent.steps
        self.run.spent = spent_plus(self.run.spent, usage, steps=1)
        described = self._described(calls, idempotent)
        self.audit("decision", {"index": index, "calls": described})
        self._mark_in_flight(described, index)

    def adopt(self, calls: tuple[ToolCall, ...], idempotent: Mapping[str, bool]) -> None:
        """Calls an earlier run of the thread left open (it was cut, or is paused, before they
        closed) that this run finishes: mark them in flight as a decision's are, without
        counting a decision, so a person's answer about them is kept and a crash is told."""
        if self.in_flight is not None or not calls:
            return
        described = self._described(calls, idempotent)
        self.audit("adopted", {"calls": described})
        self._mark_in_flight(described, max(self.run.spent.steps - 1, 0))

    def _described(self, calls: tuple[ToolCall, ...], idempotent: Mapping[str, bool]
                   ) -> list[DecisionCall]:
        first = len(self.run.steps)
        return [DecisionCall(call_id=call.id, tool=call.name, arguments=dict(call.arguments),
                             key=idempotency_key(self.run.run_id, first + position, call.id,
                                                 call.arguments),
                             idempotent=idempotent.get(call.name, False))
                for position, call in enumerate(calls)]

    def _mark_in_flight(self, described: list[DecisionCall], index: int) -> None:
        if described:
            first = described[0]
            self.run.in_flight = dict(InFlight(
                step=len(self.run.steps), key=first["key"], idempotent=first["idempotent"],
                attempt=1, decision={"index": index, "calls": described}, gates=[]))

    def call_key(self, call_id: str) -> str | None:
        """The idempotency key the in-flight decision gave `call_id`."""
        item = self._decision_call(call_id)
        return None if item is None else str(item["key"])

    @property
    def in_flight(self) -> InFlight | None:
        """The run's `in_flight` record, read through its shape."""
        return cast("InFlight | None", self.run.in_flight)

    def _decision_call(self, call_id: str) -> DecisionCall | None:
        """Call `call_id` of the decision in flight, as saved."""
        calls = [] if self.in_flight is None else self.in_flight["decision"]["calls"]
        return next((item for item in calls if item["call_id"] == call_id), None)

    def record_steps(self, closed: Mapping[str, ClosedCall], calls: tuple[ToolCall, ...],
                     child_spent: Spent | None = None) -> None:
        """Add a step for each closed call, in request order, and what its subagents spent."""
        run = self.run
        decision = self._decision_index()
        for call in calls:
            if call.id not in closed:
                continue
            outcome, result, error = closed[call.id]
            run.steps.append(Step(len(run.steps), decision, "tool", tool=call.name,
                                  arguments=dict(call.arguments), call_id=call.id,
                                  outcome=outcome, result=result, error=error))
            run.spent = spent_plus(run.spent, tool_calls=1)
            self.audit("tool_result", {"call_id": call.id, "tool": call.name,
                                       "outcome": outcome, "error": error.to_dict() if error
                                       else None})
        if child_spent is not None:
            run.spent = spent_plus(run.spent, child_spent)
        self._point_at_open_call()

    async def save_closed(self, closed: Mapping[str, ClosedCall], calls: tuple[ToolCall, ...],
                          last: bool) -> None:
        """Record the `closed` calls of `calls` and save them, before the last of them, which
        changed the shared state, is shown (`last`: it closes its decision). A server keeps a
        thread's state as its client is shown it: saved after, a process killed in between
        would leave a kept change whose call the record still has in flight, and the run
        that continues it would ask to run the call again and apply it twice."""
        self.record_steps(closed, calls)
        if last:
            self.decision_done()
        await self.save()

    def _point_at_open_call(self) -> None:
        """Keep `in_flight` about the next step: the first call of the decision still open."""
        in_flight = self.in_flight
        if in_flight is None:
            return
        decision = in_flight["decision"]
        index = decision["index"]
        recorded: set[str | None] = set()  # the decision's steps: the last (not all the run's)
        for step in reversed(self.run.steps):
            if step.decision != index:
                break
            recorded.add(step.call_id)
        for item in decision["calls"]:
            if item["call_id"] not in recorded:
                in_flight["step"] = len(self.run.steps)
                in_flight["key"], in_flight["idempotent"] = item["key"], item["idempotent"]
                return

    def link_subagent(self, call_id: str, link: Mapping[str, str]) -> None:
        """The call `call_id` waits on its subagent's paused run: keep where that run is
        (`{"thread_id", "run_id", "call_id"}`) with the decision, for the resume."""
        in_flight = self.in_flight
        assert in_flight is not None
        decision = in_flight["decision"]
        calls = [DecisionCall(**{**item, "subagent": dict(link)})
                 if item["call_id"] == call_id else item for item in decision["calls"]]
        in_flight["decision"] = {**decision, "calls": calls}  # the audit keeps the old

    def subagent_link(self, call_id: str) -> dict[str, str] | None:
        """Where the paused subagent run of `call_id` is, if the call waits on one."""
        item = self._decision_call(call_id)
        link = None if item is None else item.get("subagent")
        return dict(link) if isinstance(link, Mapping) else None

    def hand_over(self, calls: tuple[ToolCall, ...]) -> None:
        """Calls the client's own tools run: each gets a step with outcome "client", so the
        decision that asked for them is accounted for (their results come with the next run)."""
        decision = self._decision_index()
        for call in calls:
            self.run.steps.append(Step(len(self.run.steps), decision, "tool", tool=call.name,
                                       arguments=dict(call.arguments), call_id=call.id,
                                       outcome="client"))
            self.audit("handed_over", {"call_id": call.id, "tool": call.name})
        self._point_at_open_call()

    def _decision_index(self) -> int:
        if self.in_flight is not None:
            return self.in_flight["decision"]["index"]
        return self.run.spent.steps - 1

    def close_calls(self, calls: tuple[ToolCall, ...], reason: str) -> None:
        """Calls that will not run (the run failed or was cancelled): each gets its step."""
        error = AgentError("cancelled", reason)
        self.record_steps({call.id: ClosedCall("cancelled", None, error) for call in calls}, calls)
        self.decision_done()

    def decision_done(self) -> None:
        """Every call of the decision in flight has a result."""
        self.run.in_flight = None

    def answer(self, answer: Any) -> None:
        """The run completed with `answer` (the decision that gave it was counted already)."""
        run = self.run
        run.steps.append(Step(len(run.steps), run.spent.steps - 1, "answer", outcome="answer",
                              result=answer))
        run.answer = answer
        self._end(RunStatus.COMPLETED, StopReason.ANSWERED)

    def pause(self, request: ApprovalRequest) -> None:
        """The run waits for a person to answer `request`."""
        self.run.pending = replace(request, step=len(self.run.steps))
        self.run.status, self.run.stop_reason = RunStatus.PAUSED, StopReason.APPROVAL
        self.audit("approval_requested", {"id": request.id, "call_id": request.call_id,
                                          "tool": request.tool,
                                          "arguments_hash": request.arguments_hash,
                                          "prompt": request.prompt})

    def answered(self, request: ApprovalRequest, approve: bool, answer: Any,
                 edited: Mapping[str, Any] | None) -> None:
        """A person answered `request`: record it, and let the run go on."""
        in_flight = self.in_flight
        assert in_flight is not None
        gates = [g for g in in_flight["gates"] if g["call_id"] != request.call_id]
        gates.append(Gate(call_id=request.call_id, approved=approve, answer=answer,
                          arguments=dict(edited) if edited is not None else None))
        in_flight["gates"] = gates
        self.run.pending = None
        self.run.status, self.run.stop_reason = RunStatus.RUNNING, None
        self.audit("approval_answered", {"id": request.id, "approved": approve,
                                         "answer": answer, "edited_arguments":
                                         dict(edited) if edited is not None else None})

    def withdraw(self) -> None:
        """The pending request goes unanswered (a new message came instead); the run goes on
        and asks again whatever still needs a person."""
        request = self.run.pending
        assert request is not None
        self.run.pending = None
        self.run.status, self.run.stop_reason = RunStatus.RUNNING, None
        self.audit("approval_withdrawn", {"id": request.id})

    def gate(self, call_id: str) -> Gate | None:
        """A person's answer about `call_id` in this decision, if one was given."""
        if self.in_flight is None:
            return None
        for gate in self.in_flight["gates"]:
            if gate["call_id"] == call_id:  # a record of an earlier version may lack a key
                return Gate(call_id=call_id, approved=bool(gate.get("approved")),
                            answer=gate.get("answer"), arguments=gate.get("arguments"))
        return None

    def retry(self) -> None:
        """A crashed decision's calls are being run again: the next attempt."""
        in_flight = self.in_flight
        assert in_flight is not None
        in_flight["attempt"] += 1
        self.audit("retry", {"attempt": in_flight["attempt"]})

    def stop(self, reason: StopReason, message: str) -> None:
        """The run stopped (a limit, a permission, an until function, a cancel)."""
        self.run.error = AgentError(reason.value, message)
        self._end(RunStatus.STOPPED, reason)

    def fail(self, error: AgentError) -> None:
        """The run failed."""
        self.run.error = error
        self.run.in_flight = None
        self._end(RunStatus.FAILED, StopReason.ERROR)

    def _end(self, status: RunStatus, reason: StopReason) -> None:
        self.run.status, self.run.stop_reason = status, reason
        self.run.pending = None
        self.run.in_flight = None
        self.audit("run_end", {"status": status.value, "stop_reason": reason.value})

    # -- writing -------------------------------------------------------------------------------

    def elapsed(self) -> float:
        """Seconds spent by this run, across every process that ran it."""
        return self.run.spent.seconds + (time.monotonic() - self._started)

    async def save(self) -> None:
        """Write the conversation's new entries, the RunState and the new audit records."""
        now = time.monotonic()
        self.run.spent = replace(self.run.spent,
                                 seconds=self.run.spent.seconds + (now - self._started))
        self._started = now
        if self.store is None:
            self._dropped += len(self._audit)
            self._audit.clear()
            return
        if self.run.done and self.before_end is not None:
            await self.before_end()  # (its reader keeps the versions this drops: see there)
        shared = None if self.run.done else self.shared.value  # kept while the run can resume
        saved = Saved(self.run.to_dict(), shared, self.shared.version,
                       self.conversation._entry_count(), self._audited)
        self.conversation._bind_store(self.store)
        self._tickets += 1
        try:
            if inspect.unwrap(type(self.store).arecord_for) is not Store.arecord_for:
                await to_the_end(self._awrite(self._tickets, saved))  # no thread
            else:
                await anyio.to_thread.run_sync(self._write, self._tickets, saved)
        except Exception as exc:  # kept for the next save, which must carry them
            code = "store_unavailable" if isinstance(exc, StoreUnavailable) else "store_error"
            raise StoreError(f"the run's record could not be saved: "
                             f"{type(exc).__name__}: {exc}", code) from exc

    def _write(self, ticket: int, saved: Saved) -> None:
        """One store transaction: the conversation's new entries, the run, its audit records,
        as they were when the save was asked for (`saved`), so one write never holds a call's
        result without its step, or the other way round.

        In the worker thread, under a lock: the audit records a write takes are dropped once
        written, so a write that commits is accounted for even if the run was cancelled
        meanwhile, and a later save (the cancel's) waits for it and carries the rest.
        """
        assert self.store is not None
        with self._write_lock:
            if ticket < self._written:
                return  # a later save got the lock first, and wrote all this and more
            record, audit = self._record(self.store.record_for(self.conversation), saved)
            if self.fence is not None:
                self.store.write_fenced(record, *self.fence)
            else:
                self.store.write(record)
            self._wrote(ticket, audit)

    async def _awrite(self, ticket: int, saved: Saved) -> None:
        """`_write` on the event loop, for a store with async twins of its own (`RedisStore`)."""
        assert self.store is not None
        async with self._awrite_lock:
            if ticket < self._written:
                return
            base = await self.store.arecord_for(self.conversation)
            record, audit = self._record(base, saved)
            if self.fence is not None:
                await self.store.awrite_fenced(record, *self.fence)
            else:
                await self.store.awrite(record)
            self._wrote(ticket, audit)

    def _record(self, base: StepRecord, saved: Saved) -> tuple[StepRecord, int]:
        """The record of `saved` (on `base`, the entries the store lacks now), and how many
        audit records it carries."""
        audit = tuple(self._audit[: saved.audited - self._dropped])
        entries = base.entries[: max(saved.entries - base.first_seq, 0)]
        return replace(base, entries=entries, run=saved.run, audit=audit,
                       shared_state=saved.shared, shared_version=saved.version,
                       owner=self.owner), len(audit)

    def _wrote(self, ticket: int, audit: int) -> None:
        del self._audit[:audit]
        self._dropped += audit
        self._written = ticket
