"""Setting up a run's runner: a new run from a conversation and the state given, checked before
anything runs, or one turn of a conversation (`Agent.start`, `Agent.think`, ...); and what a
client's request brings a run besides its messages (`Client`), new or resumed."""

from __future__ import annotations

import secrets
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import pydantic

from pyox_agents._run_request import ToolOutput
from pyox_agents.models._inputs import check_inputs
from pyox_agents.models.base import ToolSpec
from pyox_agents.runtime._journal import Journal
from pyox_agents.runtime._parts import AgentParts
from pyox_agents.runtime._runner import Access, Runner
from pyox_agents.state.conversation import State
from pyox_agents.state.frozen import freeze
from pyox_agents.state.messages import Message
from pyox_agents.state.run import RunState
from pyox_agents.state.shared import SharedState

__all__ = ["NOT_GIVEN", "Client", "add_client_results", "prepare", "turn_runner"]


class _NotGiven:
    """The `state=` of a run that was given none (`None` is JSON, so it cannot say so)."""

    def __repr__(self) -> str:
        return "<no state given>"


NOT_GIVEN: Any = _NotGiven()


def prepare(agent: AgentParts, conversation: State | str, state: Any,
            client_tools: Sequence[ToolSpec] = (), context: Sequence[str] = (),
            forwarded_props: Any = None) -> Runner:
    """The runner of a new run of `conversation` (a State or a prompt) from `state`, checked."""
    if isinstance(conversation, str):
        conversation = State(messages=[Message.user(conversation)])
    elif not isinstance(conversation, State):
        raise TypeError(
            f"run a State or a prompt str, got {type(conversation).__name__}; for the shared "
            "state, pass state=...")
    conversation._check_can_run()
    setup = agent._setup()
    check_inputs(setup.model, conversation.messages)
    value = {} if state is NOT_GIVEN else state
    if agent.state_type is not None:
        if not isinstance(value, pydantic.BaseModel):  # JSON first, as an untyped run's is: a
            value = freeze(value, path="state")  # NaN under a key the model drops is no state
        value = agent.state_type.model_validate(value).model_dump(mode="json")
    shared = SharedState(value, state_type=agent.state_type)
    goal = next((m.content for m in reversed(conversation.messages) if m.role == "user"), "")
    journal = Journal(RunState(secrets.token_hex(32), goal), conversation, shared, setup.store)
    return Runner(setup, conversation, Access(shared, conversation), journal=journal,
                  client_tools=client_tools, context=context,
                  forwarded_props=None if forwarded_props is None else freeze(
                      forwarded_props, path="forwarded_props"))


@dataclass(frozen=True, slots=True)
class Client:
    """What a client's request brings a resumed run besides messages, as `prepare` takes it
    for a new one: the client's own tools, context lines and forwarded props (JSON), and its
    results for its tools' calls."""

    tools: Sequence[ToolSpec] = ()
    context: Sequence[str] = ()
    forwarded_props: Any = None
    results: Sequence[ToolOutput] = ()


def add_client_results(conversation: State, results: Sequence[ToolOutput],
                       not_of: Collection[str] = ()) -> None:
    """Give the conversation's pending calls the client's `results` for them, except calls of
    the tools `not_of` names (the agent's own: not the client's to answer). A result for a
    call that is not pending is left out: already answered, the client restates its history."""
    pending = {call.id: call for call in conversation.pending_calls if call.name not in not_of}
    for result in results:
        call = pending.get(result.call_id)
        if call is None:
            continue
        text = result.content if isinstance(result.content, str) else None
        conversation._add_tool_result(call, "error" if result.is_error else "ok",
                                      result.content, is_error=result.is_error, text=text)


def turn_runner(agent: AgentParts, conversation: State) -> Runner:
    """A runner for one turn (`think`, `use_tools`, ...): its tools see a state of `{}`, as
    a run given none (nothing is kept between runs)."""
    if not isinstance(conversation, State):
        raise TypeError(f"expected a State, got {type(conversation).__name__}")
    shared = SharedState({}, state_type=agent.state_type)
    setup = agent._setup()
    check_inputs(setup.model, conversation.messages)
    return Runner(setup, conversation, Access(shared, conversation))
