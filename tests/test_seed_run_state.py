"""The run record as seed 003 words it: every record the runtime saves passes `check()`, and
`from_dict` refuses what `to_dict` would not write."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyox_agents import Agent, RunContext, RunFinished, RunStarted, ToolCallStarted, tool
from pyox_agents.models import ScriptedModel, ToolCall
from pyox_agents.models.base import ToolSpec
from pyox_agents.runtime._limits import Limits
from pyox_agents.runtime._permissions import Deny
from pyox_agents.state.run import RunState, RunStatus, StateError, StopReason
from pyox_agents.stores import MemoryStore, SQLiteStore

UPPER_ID = "AB" * 32
ENDINGS = ("answer", "finish", "stop", "limit", "approval", "subagent_approval", "client_tools",
           "failure", "cancel", "crash")


def as_run_state(saved: Mapping[str, Any] | RunState) -> RunState:
    """What `store.load_run` gave, as a `RunState` (a store may give its dict form)."""
    return saved if isinstance(saved, RunState) else RunState.from_dict(saved)


def test_from_dict_refuses_a_run_id_that_is_not_64_hex_digits() -> None:
    """Seed 003: run_id is "64 hexadecimal digits"; from_dict "raises ... if a field is
    malformed"."""
    data = RunState("ab" * 32, "g").to_dict()
    for bad in ("abc", "zz" * 32, "ab" * 33, 7):
        with pytest.raises(StateError, match="run_id"):
            RunState.from_dict(data | {"run_id": bad})


def test_from_dict_refuses_a_schema_version_that_only_equals_it() -> None:
    """Seed 003: from_dict raises if "the schema version is not SCHEMA_VERSION": `true` is not
    the integer 1, nor is 1.0."""
    data = RunState("ab" * 32, "g").to_dict()
    for bad in (True, 1.0, "1"):
        with pytest.raises(StateError, match="schema_version"):
            RunState.from_dict(data | {"schema_version": bad})


def test_upper_case_hexadecimal_run_ids_are_accepted() -> None:
    """Seed 003: run_id is "64 hexadecimal digits", in either case."""
    run = RunState(UPPER_ID, "g")
    run.check()
    assert RunState.from_dict(run.to_dict()).run_id == UPPER_ID


def test_a_run_handing_its_calls_to_the_client_saves_a_record_that_passes_check() -> None:
    """Seed 003: check() refuses a record where "spent.steps is not the number of decisions the
    steps account for"; the runtime itself must never save one."""
    store = MemoryStore()
    agent = Agent(model=ScriptedModel([ToolCall("confirm", {"text": "ok?"})]), store=store)
    spec = ToolSpec("confirm", "Ask the user", {"type": "object", "properties": {}})

    async def main() -> tuple[RunStarted, RunFinished]:
        events = [e async for e in agent.stream("go", client_tools=[spec])]
        assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)
        return events[0], events[-1]

    started, finished = anyio.run(main)
    assert finished.pending_call_ids
    run = as_run_state(store.load_run(started.run_id))
    run.check()
    assert run.stop_reason is StopReason.CLIENT_TOOLS
    assert [(s.tool, s.outcome) for s in run.steps] == [("confirm", "client")]


async def _run_ending(
    ending: str, tool_steps: int, parallel: int, store: Any, in_flight: list[RunState]
) -> str:
    """Run an agent that does `tool_steps` steps of `parallel` calls, then ends as `ending`;
    return its run id."""
    @tool
    def note(ctx: RunContext, n: int) -> int:
        """Note a number."""
        if n == -3:  # the record a crash now would leave behind
            in_flight.append(as_run_state(store.load_run(ctx.run_id)))
        return n

    @tool
    def done(ctx: RunContext) -> str:
        """Finish."""
        ctx.conversation.finish("finished")
        return "ok"

    @tool(approval=True)
    def pay(amount: int) -> str:
        """Pay."""
        return "paid"

    @tool
    async def wait_forever() -> str:
        """Never returns."""
        await anyio.sleep_forever()
        return "never"

    helper = Agent(ScriptedModel([ToolCall("pay", {"amount": 4}), "helped"]), tools=[pay],
                   name="helper").as_tool(state="write")
    calls = [[ToolCall("note", {"n": i * 10 + j}) for j in range(parallel)]
             for i in range(tool_steps)]
    last: list[Any] = {
        "answer": ["the answer"],
        "finish": [ToolCall("done", {})],
        "stop": [ToolCall("note", {"n": -1})],
        "limit": [ToolCall("note", {"n": -2}), "never reached"],
        "approval": [ToolCall("pay", {"amount": 3})],
        "subagent_approval": [ToolCall("helper", {"task": "pay 4"})],
        "client_tools": [ToolCall("confirm", {})],
        "failure": [],  # the script runs out: the run fails
        "cancel": [ToolCall("wait_forever", {})],
        "crash": [ToolCall("note", {"n": -3}), "after"],
    }[ending]
    permissions = []
    if ending == "stop":
        permissions = [lambda call, ctx: Deny("no", stop=True) if call.arguments.get("n") == -1
                       else True]
    limits = Limits(steps=tool_steps + 1) if ending == "limit" else None
    agent = Agent(model=ScriptedModel([*calls, *last]),
                  tools=[note, done, pay, wait_forever, helper],
                  store=store, permissions=permissions, limits=limits)
    spec = ToolSpec("confirm", "Ask the user", {"type": "object", "properties": {}})
    run_id = ""
    stream = agent.stream("go", client_tools=[spec] if ending == "client_tools" else ())
    async for event in stream:
        run_id = run_id or getattr(event, "run_id", "") or ""
        if ending == "cancel" and isinstance(event, ToolCallStarted) and \
                event.name == "wait_forever":
            break
    await stream.aclose()  # type: ignore[attr-defined]
    return run_id


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ending=st.sampled_from(ENDINGS),
    tool_steps=st.integers(0, 2),
    parallel=st.integers(1, 2),
    sqlite=st.booleans(),
)
def test_every_record_the_runtime_saves_passes_check(
    ending: str, tool_steps: int, parallel: int, sqlite: bool
) -> None:
    """Seed 003: the RunState is "saved after every step", and `check()` says whether "the
    state is one a run can be in": every saved record, however the run ended, is one."""
    with tempfile.TemporaryDirectory() as tmp:
        store: Any = SQLiteStore(Path(tmp) / "runs.db") if sqlite else MemoryStore()
        in_flight: list[RunState] = []
        run_id = anyio.run(_run_ending, ending, tool_steps, parallel, store, in_flight)
        run = as_run_state(store.load_run(run_id))
        run.check()
        for saved in in_flight:
            saved.check()
        expected = {
            "answer": RunStatus.COMPLETED, "finish": RunStatus.COMPLETED,
            "stop": RunStatus.STOPPED, "limit": RunStatus.STOPPED,
            "approval": RunStatus.PAUSED, "subagent_approval": RunStatus.PAUSED,
            "client_tools": RunStatus.STOPPED,
            "failure": RunStatus.FAILED, "cancel": RunStatus.STOPPED,
            "crash": RunStatus.COMPLETED,
        }[ending]
        assert run.status is expected
        if ending == "crash":  # the record read while a call ran: a crash would leave it
            assert [saved.in_flight is not None for saved in in_flight] == [True]
