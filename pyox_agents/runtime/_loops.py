"""`@loop`: run one turn's body again and again until the conversation should stop.

    @loop(until=waiting_for_user, limit=20)
    def work(agent, state):
        agent.think(state)
        if state.pending_calls:
            agent.use_tools(state)

    work(agent, state)

Before every turn the loop checks, in order: the State is finished or `stopped` is set (by
`finish`, a permission), then each `until` function (true: `StoppedByUntil(name)`), then
`limit` (reached: `StoppedByLimit(limit)`). A call starts by clearing `stopped`, as a run does,
so calling the loop again continues the conversation for another `limit` turns.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from pyox_agents.state.conversation import State
from pyox_agents.state.stopped import StoppedByLimit, StoppedByUntil

__all__ = ["loop"]

Body = TypeVar("Body", bound=Callable[..., Any])
Until = Callable[[State], bool]


def loop(body: Body | None = None, /, *, until: Until | Sequence[Until] | None = None,
         limit: int | None = None) -> Any:
    """Decorate `body(agent, state)`, one turn; calling the result runs turns until a stop.

    `body` may be sync or async (then the loop is async too).

    Raises:
        TypeError: `until` is not a callable or a list of callables.
        ValueError: `limit` is not an integer >= 1.
    """
    untils = _untils(until)
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise ValueError(f"loop(limit=...) must be an integer >= 1, got {limit!r}")

    def decorate(fn: Body) -> Body:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(agent: Any, state: State, *args: Any, **kwargs: Any) -> None:
                for _ in _turns(state, untils, limit):
                    await fn(agent, state, *args, **kwargs)

            return run_async  # type: ignore[return-value]

        @functools.wraps(fn)
        def run(agent: Any, state: State, *args: Any, **kwargs: Any) -> None:
            for _ in _turns(state, untils, limit):
                fn(agent, state, *args, **kwargs)

        return run  # type: ignore[return-value]

    if body is not None:
        return decorate(body)
    return decorate


def _untils(until: Until | Sequence[Until] | None) -> tuple[Until, ...]:
    if until is None:
        return ()
    items = (until,) if callable(until) else tuple(until)
    for item in items:
        if not callable(item):
            raise TypeError(f"loop(until=...) takes functions of the State, got {item!r}")
    return items


def _turns(state: State, untils: tuple[Until, ...], limit: int | None) -> Iterator[None]:
    """Begin a call of the loop on `state`, then yield before each turn until a stop."""
    if not isinstance(state, State):
        raise TypeError(f"a @loop body is called as body(agent, state) with a State, got {state!r}")
    if not state.finished:
        state._start_run(state.parent_id, state.parent_call_id)
    turns = 0
    while not _should_stop(state, untils, limit, turns):
        yield
        turns += 1


def _should_stop(state: State, untils: tuple[Until, ...], limit: int | None, turns: int) -> bool:
    if state.finished or state.stopped is not None:
        return True
    for until in untils:
        if until(state):
            state._stop(StoppedByUntil(getattr(until, "__name__", repr(until))))
            return True
    if limit is not None and turns >= limit:
        state._stop(StoppedByLimit(limit))
        return True
    return False
