"""A subagent's run as one tool call of its parent's: a child conversation, its events inside
the parent's stream, its pause the parent's pause."""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pyox_agents.events import (
    ApprovalRequested,
    RunFailed,
    RunFinished,
    RunStarted,
    RuntimeEvent,
    StateChanged,
    SubagentFinished,
    SubagentStarted,
)
from pyox_agents.runtime._journal import Journal
from pyox_agents.runtime._paused import Paused, PausedRuns
from pyox_agents.runtime._runner import Runner
from pyox_agents.runtime._setup import NO_ACCESS, Access, Setup, SubagentPaused
from pyox_agents.runtime._toolsets import toolsets_opened
from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message
from pyox_agents.state.patch import Op
from pyox_agents.state.run import AgentError, RunState, RunStatus
from pyox_agents.stores.base import Store
from pyox_agents.tools import RunContext, Tool, ToolError
from pyox_agents.toolsets import Toolset

__all__ = ["run_subagent"]


async def run_subagent(ctx: RunContext, setup_for: Callable[[Store | None], Setup],
                       paused: PausedRuns, task: str, name: str,
                       mode: Literal["read", "write"] | None,
                       tools: tuple[Mapping[str, Tool], Sequence[Toolset]]) -> Any:
    """Run a subagent (`setup_for(store)` sets up its runs; `paused` keeps its paused runs
    without a store; `tools` are its own tools and toolsets) on `task` as a child of the run
    behind `ctx`; return its answer.

    A subagent run that pauses for a person raises `SubagentPaused`, which pauses the parent
    with the same request; when the parent is resumed, this call runs again and resumes the
    subagent's run in place with the person's answer.
    """
    parent = ctx._run
    assert isinstance(parent, Runner), "a subagent runs inside a tool call of a run"
    call_id = ctx.call_id or ""
    access = parent.access
    denied = access.denied if access.denied is not None else (NO_ACCESS if mode is None else None)
    writes = access.writable and mode == "write"
    undo = ([] if access.undo is None else access.undo) if writes else None
    child_access = Access(access.shared, access.owner, writes, denied, undo, access.in_order)
    first = len(undo) if undo is not None else 0
    setup = setup_for(parent.setup.store)
    link = parent.journal.subagent_link(call_id) if parent.journal is not None else None
    cut = False  # whether the subagent's run was cut by a crash (its calls may have run)
    if link is None:
        child = State(messages=[Message.user(task)])
        journal = Journal(RunState(secrets.token_hex(32), task), child, access.shared, setup.store)
    else:
        child, journal, cut = await _paused_subagent(paused, parent, link, setup.store)
    run_id = journal.run.run_id
    parent.conversation._register_child(child)
    ctx.child_ids.append(child.id)
    if journal.run.done:  # its run ended meanwhile (resumed on its own): its end is the result
        ctx.child_usage, ctx.child_spent = ctx.child_usage + child.usage, journal.run.spent
        return _subagent_outcome(journal.run, name)
    failure: list[AgentError] = []
    forward = _forwarder(parent, run_id, call_id, name, child.id, failure)
    runner = Runner(setup, child, child_access, journal=journal, emit=forward)
    runner.share_call_ids(parent)  # its calls are streamed beside the parent's
    runner.recovering = cut
    try:
        async with toolsets_opened(*tools, runner):  # the subagent's toolsets, for its run
            await runner.execute(parent_id=parent.conversation.id, parent_call_id=call_id,
                                 resumed=link is not None)
    finally:
        ctx.child_usage = ctx.child_usage + child.usage
        ctx.child_spent = journal.run.spent
    if failure:
        raise _failed(parent, call_id, name, failure[0], undo, first)
    pending = journal.run.pending
    if pending is not None:
        if setup.store is None:  # kept in memory, as a paused run of a store-less agent is
            paused.keep(Paused(journal.run, child))
        raise SubagentPaused(pending, {"thread_id": child.id, "run_id": run_id,
                                       "call_id": pending.call_id})
    return child.answer


def _failed(parent: Runner, call_id: str, name: str, error: AgentError,
            undo: list[tuple[int, list[Op]]] | None, first: int) -> ToolError:
    """The error of a subagent's call that failed, once what it changed is taken back."""
    taken = ""
    if undo is not None:
        taken = _take_back(parent, call_id, undo[first:])
        del undo[first:]
    return ToolError(f"the subagent {name} failed: {error.message}{taken}",
                     public_message=f"the subagent {name} failed: {error.public_message}{taken}")


def _take_back(parent: Runner, call_id: str, undo: list[tuple[int, list[Op]]]) -> str:
    """Take back a failed "write" subagent's commits (`undo`, in order), as one new version
    the page sees (a `StateChanged` of the subagent's call): a tool that fails changes nothing.
    Only when nothing else committed since its first change: another tool's change made on
    top of them could not be kept apart from them, so then they stay, and the words say so."""
    if not undo:
        return ""
    shared = parent.access.shared
    if shared.version - undo[0][0] + 1 != len(undo):
        return "; its changes to the shared state stay (another tool changed it meanwhile)"
    ops = [op for _, back in reversed(undo) for op in back]
    commit = shared.commit_edit(ops, shared.version)
    if commit is not None:
        parent.access.in_order.show(commit.version, parent.emit, [
            StateChanged(commit.delta, commit.state, call_id, commit.version)])
    return "; its changes to the shared state were taken back"


def _forwarder(parent: Runner, run_id: str, call_id: str, name: str, child_id: str,
               failure: list[AgentError]) -> Callable[[Sequence[RuntimeEvent]], None]:
    """Where a subagent's events go: into the parent's stream, its start and end as
    `SubagentStarted` / `SubagentFinished`, each event with the subagent's run id; its failure
    error into `failure`; its approval requests nowhere (the parent pauses and says so)."""

    def forward(events: Sequence[RuntimeEvent]) -> None:
        out: list[RuntimeEvent] = []
        for event in events:
            if isinstance(event, RunStarted):
                out.append(SubagentStarted(run_id, call_id, name, child_id))
            elif isinstance(event, RunFinished):
                out.append(SubagentFinished(run_id, call_id, answer=event.answer))
            elif isinstance(event, RunFailed):
                failure.append(event.error)
                out.append(SubagentFinished(run_id, call_id, error=event.error.public_message))
            elif isinstance(event, ApprovalRequested):
                continue
            elif getattr(event, "run_id", "") is None:
                out.append(dataclasses.replace(event, run_id=run_id))
            else:
                out.append(event)
        parent.emit(out)

    return forward


async def _paused_subagent(paused: PausedRuns, parent: Runner, link: Mapping[str, str],
                           store: Store | None) -> tuple[State, Journal, bool]:
    """The subagent run the parent's call waits on, answered with the parent's gate for it;
    and whether that run was cut by a crash instead (running, with calls in flight)."""
    state_id, run_id = link["thread_id"], link["run_id"]
    child = parent.conversation._children.get(state_id)
    if store is not None:
        run = await store.aload_run(run_id)
        if child is None:
            child = await store.aload(state_id)
    else:
        kept = paused.pop(run_id)
        if kept is None:
            raise LookupError(f"the subagent run {run_id[:12]} this call waits on is not in "
                              "memory: it ran without a store, in another process, or waited "
                              "longer than paused runs are kept; give Agent(store=...) to "
                              "resume subagents across processes")
        run = kept.run
        child = child if child is not None else kept.conversation
    assert parent.journal is not None
    cut = run.status is RunStatus.RUNNING and run.in_flight is not None
    journal = Journal(run, child, parent.access.shared, store)
    gate = parent.journal.gate(link["call_id"])
    if run.pending is not None and gate is not None:
        journal.answered(run.pending, bool(gate["approved"]), gate["answer"], gate["arguments"])
    return child, journal, cut


def _subagent_outcome(run: RunState, name: str) -> Any:
    """The answer of a subagent run that has ended, or the error it ended with."""
    if run.status is RunStatus.COMPLETED:
        return run.answer
    if run.error is None:
        raise ToolError(f"the subagent {name} ended without an answer: {run.status.value}")
    raise ToolError(f"the subagent {name} ended without an answer: {run.error.message}",
                    public_message=f"the subagent {name} ended without an answer "
                                   f"({run.error.code})")
