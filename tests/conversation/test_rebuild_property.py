"""Property: whatever happens to a State, its history rebuilds it and every entry round-trips.

An `Op` is interpreted against the State as it is (its `pick` chooses a pending call, a snapshot
to restore, a keep_last), so every random sequence is meaningful. An op the State refuses must
raise ValueError and change nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from pyox_agents.state.conversation import State, StateSnapshot, StoppedByLimit
from pyox_agents.state.history import entry_from_json
from pyox_agents.state.messages import Message, Reply, ToolCall, Usage

ACTIONS = (
    "add_message", "add_notice", "think", "think_with_calls", "think_holding", "fail_think",
    "tool_result", "edit_extra_data", "compact", "clear_tool_results", "finish", "restore",
    "fork", "stop", "start_run", "state_change", "snapshot",
)


@dataclass(frozen=True)
class Op:
    action: str
    pick: int
    text: str


OPS = st.builds(Op, action=st.sampled_from(ACTIONS), pick=st.integers(0, 9),
                text=st.text(max_size=6))


class Driver:
    """Does one `Op` on the current State the way a loop, a tool or a user would."""

    def __init__(self) -> None:
        self.state = State(messages=[Message.user("start")], extra_data={"n": 0})
        self.snapshots: list[StateSnapshot] = [self.state.snapshot()]

    def do(self, op: Op) -> None:
        before = self.state.snapshot()
        try:
            getattr(self, op.action)(op)
        except ValueError:
            assert self.state.snapshot() == before, f"{op} was refused but changed the State"

    def add_message(self, op: Op) -> None:
        self.state.add_message(Message.user(op.text or "hi"))

    def add_notice(self, op: Op) -> None:
        self.state.add_message(Message.notice(op.text))

    def _think(self, calls: tuple[ToolCall, ...], op: Op) -> None:
        self.state._begin_think(len(self.state.messages), [c.name for c in calls])
        self.state._end_think(Reply(op.text, calls, usage=Usage(op.pick, 1, 1, op.pick / 4)))

    def think(self, op: Op) -> None:
        self._think((), op)

    def think_with_calls(self, op: Op) -> None:
        calls = tuple(ToolCall(f"tool{i}", {"i": i, "t": (op.text,)})
                      for i in range(op.pick % 3 + 1))
        self._think(calls, op)

    def think_holding(self, op: Op) -> None:
        self.state._begin_think(len(self.state.messages), [])
        self.state.add_message(Message.user("held"))
        self.state._end_think(Reply(op.text))

    def fail_think(self, op: Op) -> None:
        self.state._begin_think(len(self.state.messages), [])
        self.state._fail_think(op.text)

    def tool_result(self, op: Op) -> None:
        pending = self.state.pending_calls
        if not pending:
            return
        call = pending[op.pick % len(pending)]
        outcome = ("ok", "error", "denied", "cancelled")[op.pick % 4]
        self.state._add_tool_result(call, outcome, {"text": op.text, "pick": (op.pick,)},
                                    is_error=outcome != "ok", child_ids=(f"c{op.pick}",),
                                    usage=Usage(1, 1, 1, 0.5))

    def edit_extra_data(self, op: Op) -> None:
        with self.state.edit_extra_data() as data:
            data["n"] = data.get("n", 0) + op.pick % 2
            data.setdefault("texts", []).append(op.text)

    def compact(self, op: Op) -> None:
        self.state.compact(op.text or "summary")

    def clear_tool_results(self, op: Op) -> None:
        self.state.clear_tool_results(op.pick % 3)

    def finish(self, op: Op) -> None:
        self.state.finish(None if op.pick % 3 == 0 else {"answer": op.text})

    def restore(self, op: Op) -> None:
        self.state.restore(self.snapshots[op.pick % len(self.snapshots)])

    def fork(self, op: Op) -> None:
        fork = self.state.fork()
        assert fork.snapshot() == self.state.snapshot()
        self.state = fork

    def stop(self, op: Op) -> None:
        self.state._stop(StoppedByLimit(op.pick))

    def start_run(self, op: Op) -> None:
        self.state._start_run()

    def state_change(self, op: Op) -> None:
        self.state._add_state_change("c", [{"op": "add", "path": "/x", "value": op.text}], 1)

    def snapshot(self, op: Op) -> None:
        self.snapshots.append(self.state.snapshot())


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(OPS, max_size=40))
def test_history_rebuilds_the_same_snapshot(ops: list[Op]) -> None:
    driver = Driver()
    for op in ops:
        driver.do(op)
    state = driver.state
    assert State(history=state.history).snapshot() == state.snapshot()
    for entry in state.history:
        assert entry_from_json(json.loads(json.dumps(entry.to_json()))) == entry
    loaded = State(history=[entry_from_json(e.to_json()) for e in state.history])
    assert loaded.snapshot() == state.snapshot()
