"""Every method is thread-safe: tools call add_message and edit_extra_data from worker threads."""

from __future__ import annotations

import threading

from pyox_agents.state.conversation import State
from pyox_agents.state.messages import Message, Reply, ToolCall

THREADS = 16
ROUNDS = 50


def test_sixteen_threads_lose_no_message_and_no_increment() -> None:
    state = State(messages=[Message.user("start")])
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            barrier.wait(10)
            for round_ in range(ROUNDS):
                state.add_message(Message.user(f"{worker}-{round_}"))
                with state.edit_extra_data() as data:
                    data["n"] = data.get("n", 0) + 1
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert state.extra_data == {"n": THREADS * ROUNDS}
    added = [m.content for m in state.messages[1:]]
    assert sorted(added) == sorted(f"{w}-{r}" for w in range(THREADS) for r in range(ROUNDS))
    assert State(history=state.history).snapshot() == state.snapshot()


def test_messages_added_from_threads_while_calls_are_pending_follow_the_results() -> None:
    state = State(messages=[Message.user("start")])
    calls = tuple(ToolCall(f"tool{i}", {}) for i in range(THREADS))
    state._begin_think(1, [c.name for c in calls])
    state._end_think(Reply("", calls))

    def tool(call: ToolCall) -> None:
        state.add_message(Message.notice(f"from {call.name}"))
        state._add_tool_result(call, "ok", call.name, is_error=False)

    threads = [threading.Thread(target=tool, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    after_reply = state.messages[2:]
    assert [m.content for m in after_reply[:THREADS]] == [c.name for c in calls]
    assert sorted(m.content for m in after_reply[THREADS:]) == sorted(
        f"[notice] from {c.name}" for c in calls)
