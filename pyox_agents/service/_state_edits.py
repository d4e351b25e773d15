"""A person's edit of a thread's shared state, committed at once, run or no run.

The edit is an RFC 6902 patch and the number of the version it was made on (every version a
client is shown has one). It is rebased onto the thread's latest version with the person's
rule (`rebase_edit`: disjoint changes all kept; where both wrote one place, the person's write
wins; an edit whose place is gone is refused), held to the limits of the state (depth, size,
the agent's `state_type`), and committed as the next version:

- while a run goes on in this process, through the run (`RunHandle.edit_state`): its tools that
  finish later rebase onto it, the model is told, and the run's stream shows it;
- otherwise into the kept state, holding the thread as a run would (fenced by its lease), and
  into the record of a run that waits for a person, so that it goes on from it;
- while another process runs the thread (a shared store), once that run ends: its edit is
  then rebased over the run's changes like any stale edit (the person's write wins).

Every follower of the thread sees it (`Feeds`). A refusal is a `RequestError` whose details
carry the thread's current version and state, so a page can show what is there now.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

import anyio.to_thread

from pyox_agents._run_request import Busy, RequestError
from pyox_agents.agent import Agent
from pyox_agents.runtime._handle import RunEnded
from pyox_agents.service._kept_writes import write_kept
from pyox_agents.service._live import LiveRun
from pyox_agents.service._runs import RunService
from pyox_agents.service._thread_state import ThreadState
from pyox_agents.state.frozen import thaw
from pyox_agents.state.patch import Op, parse_patch
from pyox_agents.state.rebase import Conflict, rebase_edit
from pyox_agents.state.shared import Refused, SharedState

__all__ = ["MAX_OPS", "TRIES", "edit_state", "thread_with_state"]

MAX_OPS = 1_000
"""The most operations one edit may carry (a person's edit is a few)."""

TRIES = 8
"""How many times an edit tries to take its thread, 10, 20, 40 ... ms apart, while another
process's run ends (its thread is free a moment after it tells its end)."""


async def edit_state(runs: RunService, agent: Agent, thread_id: str, principal: str | None,
                     base: int, patch: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Commit `patch`, made on version `base` of `thread_id`'s shared state, as its next version.
    Check the caller owns the thread first. `{version, delta}`: the version the edit made (or
    the latest, when it changed nothing) and the ops as applied to the one before.

    Raises:
        RequestError: 409 (with the current `version` and `state`) where a place the edit
            writes is gone, or `base` is not a version the server keeps; 422 for a patch that
            does not apply to version `base`, or a state past a limit (413 for its size); 409
            while the thread is held by another process's run.
    """
    if not runs.keep_state or runs.store is None:
        raise RequestError(422, "this server keeps no shared state between runs (create_app("
                                "..., keep_state=False) or no store): send the state with "
                                "the next run instead", "base")
    if len(patch) > MAX_OPS:
        raise RequestError(413, f"the patch has {len(patch):,} operations; an edit may have "
                                f"{MAX_OPS:,}", "patch")
    async with runs.edits.holding(thread_id):  # the edits before this one first
        for tries in range(TRIES):
            live = runs.active(thread_id)
            if live is not None and live.held:  # a rewind, an undo or a delete goes on
                raise Busy(thread_id)
            if live is not None:
                done = await _edit_running(live, base, patch)
                if done is not None:
                    return done
                await live.ended()  # it ended before it took the edit: edit the kept state
                continue
            if await runs.running_elsewhere(thread_id):
                await _run_ends_elsewhere(runs, thread_id)
            elif not runs.shared or tries == TRIES - 1:
                return await _edit_kept(runs, agent, thread_id, principal, base, patch)
            else:
                with contextlib.suppress(Busy):  # (its lease freed a moment after its end)
                    return await _edit_kept(runs, agent, thread_id, principal, base, patch)
            await anyio.sleep(0.01 * 2 ** tries)
    raise Busy(thread_id)


async def _run_ends_elsewhere(runs: RunService, thread_id: str) -> None:
    """Wait for the end of the run another process runs on the thread (its edit is then the
    kept state's: a finished run's changes, rebased under it with the person's rule), within
    the server's time limit of a run.

    Raises:
        RequestError: 409 when it has not ended by then.
    """
    followed = await runs.follow(thread_id)
    if followed is None:
        return
    events = followed[0]
    with anyio.move_on_after(runs.limits.run_seconds) as waited:
        async with contextlib.aclosing(events):
            async for _ in events:
                pass
    if waited.cancelled_caught:
        raise RequestError(409, f"a run of thread {thread_id!r} is going on another server "
                                "process; edit the state once it ends (its run_finished on "
                                "GET /threads/{id}/events)", "base")


async def thread_with_state(runs: RunService, thread_id: str) -> None:
    """404 unless the thread has a state to edit (a thread not started yet is not there, as
    another principal's is not: the same answer, so ids cannot be probed)."""
    if runs.keep_state and runs.active(thread_id) is None \
            and not (await runs.kept_state(thread_id)).version:
        raise RequestError(404, f"no thread {thread_id!r}")


async def _edit_kept(runs: RunService, agent: Agent, thread_id: str, principal: str | None,
                     base: int, patch: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Commit the edit into the kept state, holding the thread as a run would (and into the
    record of a run that waits for a person, which goes on from it)."""
    assert runs.store is not None
    async with runs.holding(thread_id, principal, remembers=True) as token:
        kept = await runs.kept_state(thread_id)
        ops = await _rebased(kept, base, patch, kept.version)
        shared = SharedState(kept.frozen(), state_type=agent.state_type,
                             max_bytes=runs.limits.state_bytes)
        commit = _committed(kept, lambda: shared.commit_edit(ops, 0))
        if commit is None or not commit.delta:
            return {"version": kept.version, "delta": []}
        kept.add(commit.state, ops=commit.ops)
        paused = await agent.apaused_run(thread_id)
        if paused is not None:  # it goes on from the person's version
            await agent.areplace_paused_state(paused.run_id, thread_id, commit.state,
                                              fence=None if token is None else (thread_id,
                                                                                token))
        await write_kept(runs.store, thread_id, kept, token)
        runs.kept_states.remember(thread_id, kept)
        # told while the thread is held: a run that starts next is told after it, in order
        runs.feeds.publish(thread_id, principal, [{
            "type": "state", "version": kept.version, "delta": commit.delta, "by": "person",
            "run_id": None}])
    return {"version": kept.version, "delta": commit.delta}


async def _edit_running(live: LiveRun, base: int, patch: Sequence[Mapping[str, Any]]
                        ) -> dict[str, Any] | None:
    """Commit the edit through the run going on: rebased onto the run's start (kept versions)
    when it was made before it, then by the run onto what it committed since. None when the
    run ended before it took the edit (it is then the kept state's to take)."""
    async for _ in live.read(-1):  # its start is shown: its versions have their numbers
        break
    handle, versions, start = live.handle, live.versions, live.base
    if handle is None or versions is None or start is None or live.done:
        return None
    latest = versions.version
    ops = await _rebased(versions, base, patch, start if base < start else base)
    try:
        commit = _committed(versions, lambda: handle.edit_state(ops, max(base, start) - start))
    except RunEnded:
        return None
    if commit is None:
        return {"version": latest, "delta": []}
    number = start + commit.version
    async for _ in live.read(-1):  # kept and shown, as every version is
        if live.versions is not None and live.versions.version >= number:
            break
    if live.versions is None or live.versions.version < number:
        raise RequestError(503, "the edit was committed to the run, but the store did not keep "
                                "it: send it again once the store is back", "patch",
                           headers={"Retry-After": "1"})
    return {"version": number, "delta": commit.delta}


async def _rebased(kept: ThreadState, base: int, patch: Sequence[Mapping[str, Any]],
                   onto: int) -> list[Op]:
    """The edit's ops, made on version `base`, rebased onto version `onto` (the latest, or the
    start of the run going on), in a worker thread: a patch applies in time that grows with
    the state's depth and the edit's size, a rebase with the changes since."""
    made_on = kept.at(base)
    if not kept.keeps(base):
        raise _conflict(kept, f"version {base} is not one this server keeps of the thread's "
                              f"state (the latest is {kept.version}; it keeps the "
                              f"{len(kept.back) + 1} latest): reload the state and edit it "
                              "again")
    def work() -> list[Op]:
        try:
            _, ops = parse_patch(made_on, patch)
        except (ValueError, TypeError) as exc:
            raise RequestError(422, f"the patch does not apply to version {base}: {exc}",
                               "patch") from None
        # moved past the changes committed since, as they were made (not a diff by place)
        return rebase_edit(ops, kept.changes(base, onto)) if onto > base else ops

    try:
        return await anyio.to_thread.run_sync(work)
    except Conflict as conflict:
        raise _conflict(kept, f"the shared state changed at {conflict.path or '/'} since "
                              f"version {base}: the place you edited is gone; nothing of "
                              "your edit was applied") from None


def _committed(kept: ThreadState, commit: Any) -> Any:
    """`commit()`, its refusals as the route's."""
    try:
        return commit()
    except Conflict as conflict:
        raise _conflict(kept, f"the shared state changed at {conflict.path or '/'} while "
                              "you edited it: the place you edited is gone; nothing of your "
                              "edit was applied") from None
    except Refused as refused:
        status = 413 if "max_state_bytes" in str(refused) else 422
        raise RequestError(status, f"{refused}; nothing of your edit was applied",
                           "patch") from None
    except LookupError as exc:
        raise _conflict(kept, f"{exc}: reload the state and edit it again") from None


def _conflict(kept: ThreadState, message: str) -> RequestError:
    return RequestError(409, message, "base",
                        details={"version": kept.version, "state": thaw(kept.frozen())})
