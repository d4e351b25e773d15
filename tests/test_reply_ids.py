"""The ids of a thread's replies (`ReplyIds`): found going forward, each entry looked at once,
and the same as the rule says: a request's scope is the latest run started before it."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pyox_agents.runtime._replies import ReplyIds, reply_message_id

_ENTRY = st.one_of(
    st.builds(lambda run: SimpleNamespace(kind="run_start", content=run),
              st.sampled_from(["run-a", "run-b", "", None])),
    st.just(SimpleNamespace(kind="model_request", content=None)),
    st.just(SimpleNamespace(kind="user_message", content="hi")),
)


def _by_the_rule(thread_id: str, history: list[Any], request: int) -> str:
    scope = thread_id
    for entry in reversed(history[:request]):
        if entry.kind == "run_start":
            scope = entry.content or thread_id
            break
    return "msg_" + hashlib.sha256(f"{scope}\n{request}".encode()).hexdigest()[:16]


@given(st.lists(_ENTRY, max_size=40), st.lists(st.integers(0, 39), max_size=20))
def test_reply_ids_are_those_of_the_latest_run_started_before_each_request(
        history: list[Any], asked: list[int]) -> None:
    """Rule: the id of the reply to request `i` is that of the latest run started before `i`
    (else the thread's), whatever order the requests are asked in and as the history grows."""
    ids = ReplyIds("thread-1")
    grown: list[Any] = []
    for entry, request in zip(history, [*asked, *range(len(history))], strict=False):
        grown.append(entry)  # the same list, growing, as a run's history does
        at = min(request, len(grown) - 1)
        assert ids.of(grown, at) == _by_the_rule("thread-1", grown, at)
    other = list(history)  # another history: looked at from its start
    for at in range(len(other)):
        assert ids.of(other, at) == _by_the_rule("thread-1", other, at)


def test_a_reply_id_is_its_scope_and_place() -> None:
    """Rule: the id depends on the run and the request's place only (any process derives it)."""
    assert reply_message_id("run-a", 3) == reply_message_id("run-a", 3)
    assert reply_message_id("run-a", 3) != reply_message_id("run-b", 3)
    assert reply_message_id("run-a", 3) != reply_message_id("run-a", 4)
