"""The 1.0-only fields go only to clients that declare `protocolVersion` >= 1.0.

`@ag-ui/client` 0.0.59 (bundled by `@copilotkit/react-core` 1.74 and `@copilotkit/runtime` 1.75)
sends no `protocolVersion` and parses every event with strict schemas: a success outcome with
`pendingToolCallIds`, or a `{type: "cancelled"}` outcome, fails its run in the browser.
"""

from __future__ import annotations

import pytest

from pyox_agents.adapters.ag_ui._events import declares_1_0
from pyox_agents.events import (
    ApprovalRequested,
    RunFinished,
    RunStarted,
    StepStarted,
    TextDelta,
    TextStarted,
    ToolCallStarted,
)
from pyox_agents.state.frozen import freeze
from tests.ag_ui.helpers import THREAD, run_input, translated, types
from tests.ag_ui.test_translate import approval, call
from tests.ag_ui.verify import check_stream

pytestmark = pytest.mark.anyio

START = RunStarted("a" * 64, THREAD, freeze({"todos": []}))
OLD = run_input(protocolVersion=None)


@pytest.mark.parametrize(("version", "declared"), [
    (None, False), ("", False), ("0.0.59", False), ("0.9", False), ("1.0", True),
    ("1.0.0", True), ("1.2", True), ("2.0", True), (" 1.0 ", True), ("v1", False),
])
def test_only_a_protocol_version_of_1_0_or_later_declares_1_0(version: str | None,
                                                              declared: bool) -> None:
    assert declares_1_0(run_input(protocolVersion=version)) is declared


async def test_a_client_without_protocol_version_gets_none_on_run_started() -> None:
    out = await translated([START, RunFinished("ok", freeze({}))], OLD)
    assert "protocolVersion" not in out[0]
    check_stream(out, client="0.0")


async def test_a_frontend_tool_run_ends_as_a_plain_success_for_a_0_0_client() -> None:
    """A 0.0.x client finds the calls without results itself: `{type: "success"}` only."""
    out = await translated([START, *call("c1", "pick_color", "m1"),
                            RunFinished(None, freeze({}), pending_call_ids=("c1",))], OLD)
    assert out[-1]["outcome"] == {"type": "success"}
    assert [e["toolCallId"] for e in out if e["type"] == "TOOL_CALL_END"] == ["c1"]
    check_stream(out, client="0.0")


async def test_a_frontend_tool_run_names_its_pending_calls_to_a_1_0_client() -> None:
    out = await translated([START, *call("c1", "pick_color", "m1"),
                            RunFinished(None, freeze({}), pending_call_ids=("c1",))],
                           run_input(protocolVersion="1.2"))
    assert out[-1]["outcome"] == {"type": "success", "pendingToolCallIds": ["c1"]}


async def test_a_cancelled_run_ends_with_a_bare_run_finished_for_a_0_0_client() -> None:
    out = await translated([START, StepStarted(0), TextStarted("m1"), TextDelta("m1", "par"),
                            ToolCallStarted("c1", "t", "m1"),
                            RunFinished(None, freeze({}), outcome="cancelled")], OLD)
    assert "outcome" not in out[-1] and "result" not in out[-1]
    assert types(out)[-5:] == ["TEXT_MESSAGE_END", "TOOL_CALL_END", "STEP_FINISHED",
                               "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    check_stream(out, client="0.0")


async def test_an_interrupt_reaches_a_0_0_client_as_an_interrupt() -> None:
    """0.0.59's schema has the interrupt outcome (its e2e test answers one)."""
    out = await translated([START, *call("c1", "delete", "m1"), ApprovalRequested(approval()),
                            RunFinished(None, freeze({}), outcome="interrupt")], OLD)
    assert out[-1]["outcome"]["type"] == "interrupt"
    check_stream(out, client="0.0")
