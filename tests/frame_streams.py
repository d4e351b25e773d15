"""What the frame streams' tests (AG-UI's `frame_batches`, the AI SDK's) feed them: runtime
events of every kind a stream writes directly or translates, owned by the run or by a subagent,
with hostile texts; and a live run's follower whose reader waits, which hands them on at once."""

from __future__ import annotations

from hypothesis import strategies as st

from pyox_agents.events import (
    ReasoningDelta,
    ReasoningEnded,
    ReasoningStarted,
    RunFailed,
    RunFinished,
    StateChanged,
    StepFinished,
    StepStarted,
    SubagentFinished,
    SubagentStarted,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
)
from pyox_agents.state.messages import Usage
from pyox_agents.state.run import AgentError

__all__ = ["EVENTS", "IDS", "TEXTS"]

TEXTS = st.text(st.characters(codec="utf-8"), max_size=6) | st.sampled_from(
    ["", 'a "quoted" word', "line\nbreak", "\\", "é🙂", "\u2028", "nul\x00", "</script>"])
"""A delta's text: any UTF-8 text, JSON's special characters, U+2028, NUL."""
IDS = st.sampled_from(["m1", "m2", 'm"3'])
_OWNERS = st.sampled_from([None, None, None, "sub-1"])
_CALLS = st.sampled_from(["c1", "c2", 'c"3'])
_RESULTS = st.one_of(st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
                     st.dictionaries(TEXTS, st.integers(), max_size=2), st.none())
"""A tool's result: numbers past 64 bits, floats, objects with any keys, nothing."""
_OPS = st.builds(lambda path, value: {"op": "add", "path": path, "value": value},
                 st.sampled_from(["/items/-", "/a~1b", '/"q"']), _RESULTS | TEXTS)
"""An RFC 6902 operation of a state change, its value any JSON (big integers too)."""

EVENTS = st.one_of(
    st.builds(TextStarted, IDS, run_id=_OWNERS),
    st.builds(TextDelta, IDS, TEXTS, run_id=_OWNERS),
    st.builds(TextDelta, IDS, TEXTS),
    st.builds(TextEnded, IDS, TEXTS, run_id=_OWNERS),
    st.builds(ReasoningStarted, IDS, run_id=_OWNERS),
    st.builds(ReasoningDelta, IDS, TEXTS, run_id=_OWNERS),
    st.builds(ReasoningDelta, IDS, TEXTS),
    st.builds(ReasoningEnded, IDS, TEXTS, run_id=_OWNERS),
    st.builds(ToolCallStarted, _CALLS, st.sampled_from(["look", "add"]), IDS, run_id=_OWNERS),
    st.builds(ToolCallArgsDelta, _CALLS, TEXTS, run_id=_OWNERS),
    st.builds(ToolCallArgsDelta, _CALLS, TEXTS),
    st.builds(ToolCallEnded, _CALLS, st.just("look"), st.just({"q": 1}), run_id=_OWNERS),
    st.builds(ToolResult, _CALLS, st.just("look"), st.one_of(TEXTS, _RESULTS), run_id=_OWNERS),
    st.builds(ToolResult, _CALLS, st.just("look"), error=TEXTS, run_id=_OWNERS),
    st.builds(StateChanged, st.lists(_OPS, max_size=3), st.just({}), _CALLS, st.just(1),
              run_id=_OWNERS),
    st.builds(StepStarted, st.integers(0, 2), run_id=_OWNERS),
    st.builds(StepFinished, st.integers(0, 2), run_id=_OWNERS),
    st.just(SubagentStarted("sub-1", "c1", "helper", "t")),
    st.just(SubagentFinished("sub-1", "done", None)),
    st.just(RunFinished(answer="ok", state={"n": 1})),
    st.builds(RunFinished, st.one_of(_RESULTS, TEXTS), st.just({}),
              st.builds(Usage, st.integers(0, 9), st.integers(0, 9), st.integers(0, 2)),
              outcome=st.sampled_from(["success", "success", "cancelled"]),
              pending_call_ids=st.sampled_from([(), ("c1", 'c"3')])),
    st.just(RunFailed(AgentError("boom", "it broke"))),
)
"""One runtime event of a stream, the run's own or a subagent's ("sub-1")."""
