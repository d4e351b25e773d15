"""Resuming a run: finding the run that waits for a person, the shared state it keeps, and
preparing its runner with the person's answer (`Agent.resume`, `paused_run`, ...)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from pyox_agents.runtime._answers import check_answer
from pyox_agents.runtime._journal import Journal, close_pending
from pyox_agents.runtime._parts import AgentParts
from pyox_agents.runtime._recovery import last_run_id
from pyox_agents.runtime._runner import Access, Runner
from pyox_agents.runtime._starting import Client, add_client_results
from pyox_agents.state.conversation import State
from pyox_agents.state.frozen import freeze
from pyox_agents.state.messages import Message
from pyox_agents.state.run import RunState, StopReason
from pyox_agents.state.shared import SharedState
from pyox_agents.stores.base import StepRecord

__all__ = ["cancel_paused", "kept_state", "load", "paused_run", "paused_state",
           "prepare_resume", "replace_paused_state"]


def paused_run(agent: AgentParts, thread_id: str) -> RunState | None:
    """The run of thread `thread_id` that waits for a person, or None (see `Agent.paused_run`)."""
    if agent.store is None:
        paused = agent._paused.of_thread(thread_id)
        return paused.run if paused is not None and paused.run.pending is not None else None
    try:
        run_id = last_run_id(agent.store.load(thread_id))
        latest: RunState | None = agent.store.load_run(run_id) if run_id else None
    except LookupError:
        return None
    return latest if latest is not None and latest.pending is not None else None


async def paused_state(agent: AgentParts, run_id: str, thread_id: str) -> Any:
    """The shared state that run `run_id` of `thread_id`, paused, keeps until it resumes.

    Raises:
        LookupError: it keeps none (it is not paused, or it ended).
    """
    if agent.store is None:
        paused = agent._paused.get(run_id)
        if paused is None:
            raise LookupError(f"no paused run {run_id!r} in this Agent")
        return paused.state
    loaded = await agent.store.aload_thread(thread_id)
    if loaded.shared_version is None or loaded.shared_state is None:
        raise LookupError(f"thread {thread_id!r} keeps no state of a paused run")
    return loaded.shared_state


async def replace_paused_state(agent: AgentParts, run_id: str, thread_id: str, state: Any, *,
                               fence: tuple[str, int] | None = None) -> None:
    """Replace the shared state paused run `run_id` keeps; `fence` as in `Agent.start`."""
    if agent.store is None:
        paused = agent._paused.get(run_id)
        if paused is not None:
            paused.state = state
        return
    store = agent.store
    record = StepRecord(thread_id=thread_id, first_seq=await store.aentry_count(thread_id),
                        shared_state=state, shared_version=0)
    if fence is not None:
        await anyio.to_thread.run_sync(store.write_fenced, record, *fence)
    else:
        await store.awrite(record)


async def load(agent: AgentParts, run_id: str) -> tuple[RunState, State]:
    """Run `run_id` and its conversation, from the store or the agent's paused runs.

    Raises:
        LookupError: no such run.
    """
    if agent.store is None:
        paused = agent._paused.get(run_id)
        if paused is None:
            raise LookupError(
                f"no paused run {run_id!r} in this Agent: without a store, only runs paused "
                f"for a person in this process, the latest {agent._paused.limit} for "
                f"{agent._paused.seconds:g} s, can be resumed; give Agent(store=...) to keep "
                "every run")
        return paused.run, paused.conversation
    run = await agent.store.aload_run(run_id)
    thread_id = await anyio.to_thread.run_sync(agent.store.run_thread, run_id)
    return run, await agent.store.aload(thread_id)


async def prepare_resume(agent: AgentParts, run_id: str, approve: bool | None, answer: Any,
                         edited: Mapping[str, Any] | None, request_id: str | None,
                         hash_: str | None, messages: Sequence[Message] = (), *,
                         client: Client | None = None) -> Runner:
    """The runner that continues run `run_id` with a person's answer, checked (see
    `Agent.stream_resume`), and with what the answering request brought of its `client`."""
    client = client or Client()
    props = client.forwarded_props
    props = None if props is None else freeze(props, path="forwarded_props")
    run, conversation = await load(agent, run_id)
    tools = await agent._tools_for(run.pending.tool if run.pending and edited else None)
    check_answer(run, tools, approve, answer, edited, request_id, hash_)
    add_client_results(conversation, client.results, not_of=agent.tools)
    for message in messages:  # held until the calls the run waits on have their results
        conversation.add_message(message)
    request = run.pending
    shared = SharedState(await kept_state(agent, run_id, conversation),
                         state_type=agent.state_type)
    journal = Journal(run, conversation, shared, agent.store)
    if request is not None:
        journal.answered(request, bool(approve), answer, edited)
    runner = Runner(agent._setup(), conversation, Access(shared, conversation),
                    journal=journal, client_tools=client.tools, context=client.context,
                    forwarded_props=props)
    if request is None:  # nobody was asked: a run cut by a crash, or one to go on
        runner.continue_run(run)
    return runner


async def kept_state(agent: AgentParts, run_id: str, conversation: State) -> Any:
    """The shared state run `run_id` had when it paused or was cut off, to resume it.

    A run keeps it only while it can be resumed: with a store, in the thread's record
    (written with each step, emptied when the run ends); without one, in the agent.
    """
    if agent.store is None:
        paused = agent._paused.pop(run_id)
        return {} if paused is None else paused.state
    loaded = await agent.store.aload_thread(conversation.id)
    return {} if loaded.shared_version is None else loaded.shared_state


async def cancel_paused(agent: AgentParts, run_id: str, reason: str) -> None:
    """End run `run_id`, which waits for a person, as cancelled: its open calls get a
    "cancelled" result (`reason`), its record says so, and it can no longer be answered.

    Raises:
        LookupError: no such run (without a store: no such paused run in this Agent).
        ValueError: the run does not wait for a person.
    """
    run, conversation = await load(agent, run_id)
    if run.pending is None or run.done:
        raise ValueError(f"run {run_id[:12]} does not wait for a person ({run.status.value}); "
                         "only a paused run is cancelled so")
    shared = SharedState(await kept_state(agent, run_id, conversation),
                         state_type=agent.state_type)
    journal = Journal(run, conversation, shared, agent.store)
    close_pending(conversation, journal, reason)
    journal.stop(StopReason.CANCELLED, reason)
    await journal.save()
