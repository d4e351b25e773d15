"""Runs served over HTTP, whatever the protocol: one active run per thread, apart from the socket.

A protocol adapter turns its request into a `RunRequest`; `RunService.start` checks it (raising
`RequestError` or `Busy` before anything runs), opens the thread's conversation (from the store,
or from the client's messages), and starts the run in a task of its own. The run's events are
kept in its `LiveRun` until it ends, so a connection can follow it from the first event, a
reloaded page can replay it, and a client that goes away does not stop it (unless asked to).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import re
import secrets
import socket
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic

from pyox_agents.agent import Agent
from pyox_agents.events import RunFailed, RunFinished, RunStarted, RuntimeEvent, StateChanged
from pyox_agents.models.base import ToolSpec
from pyox_agents.runtime._wakeup import Wakeup
from pyox_agents.service._event_json import event_from_json, event_to_json
from pyox_agents.service._thread_state import ThreadState, edit_running, json_equal, merge
from pyox_agents.state.conversation import State
from pyox_agents.state.frozen import MAX_DEPTH, lone_surrogate, python_path
from pyox_agents.state.history import RunStartEntry
from pyox_agents.state.messages import Message
from pyox_agents.state.patch import Conflict
from pyox_agents.state.run import AgentError
from pyox_agents.stores.base import StepRecord

__all__ = [
    "Busy",
    "Decision",
    "LiveRun",
    "RequestError",
    "RunRequest",
    "RunService",
    "ServerLimits",
    "ToolOutput",
    "read_json",
]


class RequestError(ValueError):
    """A request the server refuses before any stream: `status` and a message naming the field."""

    def __init__(self, status: int, message: str, field: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.field = field
        self.headers = dict(headers or {})


class Busy(RequestError):
    """A run is already active on the thread (HTTP 409)."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(
            409,
            f"a run is already active on thread {thread_id!r}; wait for it to finish, or stop it",
        )


ENVELOPE_DEPTH = 8
"""How many levels a protocol's own fields may add around a value (the AI SDK's `data-state` and
tool parts sit at `messages[i].parts[j].data`): a body may nest `MAX_DEPTH` + this, so every state
and tool input the server sent, nested up to `MAX_DEPTH` itself, fits when a client sends it back.
The values inside are then held to `MAX_DEPTH` where they enter a run, with their path."""


def read_json(body: bytes | str, what: str) -> Any:
    """The JSON of a request body, or `RequestError(400)` saying what is wrong with it.

    Refuses what would fail later, after a stream opened: text that is not JSON, nesting past
    `MAX_DEPTH` + `ENVELOPE_DEPTH` (a parser's recursion, a serializer's depth limit), and
    strings with lone surrogates (not UTF-8, so no store or client can take them).
    """
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RequestError(400, f"the body is not JSON ({exc}); send {what}") from None
    except RecursionError:
        raise RequestError(400, f"the body nests too deeply (the limit is {MAX_DEPTH} levels "
                                f"in a value, {_BODY_DEPTH} in the whole body); send {what}"
                           ) from None
    if _depth(data, _BODY_DEPTH) > _BODY_DEPTH:
        raise RequestError(400, f"the body nests deeper than {_BODY_DEPTH} levels at "
                                f"{python_path('body', _deep_path(data, _BODY_DEPTH))} (the limit "
                                f"is {MAX_DEPTH} levels in a value, {_BODY_DEPTH} in the whole "
                                f"body); send {what}")
    if _may_hold_surrogates(body):  # the check encodes the whole body: only when it may fail
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            where = python_path("body", _surrogate_path(data))
            raise RequestError(400, f"the body has a string with a lone surrogate (\\ud800-"
                                    f"\\udfff) at {where}, which is not text; send UTF-8 text"
                               ) from None
    return data


_BODY_DEPTH = MAX_DEPTH + ENVELOPE_DEPTH


def _may_hold_surrogates(body: bytes | str) -> bool:
    """Whether `json.loads(body)` may hold a lone surrogate: only a \\uD800-\\uDFFF escape,
    non-ASCII text (json.loads lets encoded surrogates through) or another encoding than UTF-8
    (NUL bytes) can put one in."""
    if isinstance(body, str):
        return not body.isascii() or _SURROGATE_ESCAPE.search(body) is not None
    return (not body.isascii() or b"\x00" in body
            or _SURROGATE_ESCAPE_BYTES.search(body) is not None)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def _surrogate_path(value: Any) -> list[str | int]:
    """The path to a string (or the key) holding a lone surrogate in `value`, for an error."""
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str) and lone_surrogate(item) is not None:
            return path
        if isinstance(item, dict):
            for key, child in item.items():
                if lone_surrogate(key) is not None:
                    return path
                stack.append((child, [*path, key]))
        elif isinstance(item, list):
            stack.extend((child, [*path, index]) for index, child in enumerate(item))
    return []


def _depth(value: Any, limit: int) -> int:
    """The nesting depth of a JSON value (a scalar is 1), counting no further than `limit` + 1."""
    depth, level = 0, [value]
    while level and depth <= limit:
        depth += 1
        level = [child for item in level if isinstance(item, dict | list)
                 for child in (item.values() if isinstance(item, dict) else item)]
    return depth


def _deep_path(value: Any, limit: int) -> list[str | int]:
    """The path to a value at level `limit` + 1 of `value` (which has one), for an error."""
    path: list[str | int] = []
    while len(path) < limit:
        children = value.items() if isinstance(value, dict) else enumerate(value)
        need = limit - len(path) - 1
        for key, child in children:
            if _depth(child, need) > need:
                path.append(key)
                value = child
                break
        else:
            raise AssertionError("no value that deep")  # pragma: no cover
    return path


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """What one server lets a request or a run take; None means no limit.

    `state_bytes` and `messages` bound what a request may carry (413 beyond); `state_bytes`
    also bounds what a run's tools may make of the state (a commit past it is refused with an
    error result), so a state the server sent is always accepted back; `run_seconds` is
    a hard deadline (the run is stopped and fails with code "run_timeout"); `runs_total` and
    `runs_per_principal` bound concurrent runs (429 with Retry-After beyond).
    """

    state_bytes: int | None = 1_000_000
    messages: int | None = 1_000
    run_seconds: float | None = 600.0
    runs_total: int | None = 1_000
    runs_per_principal: int | None = 50
    retry_after: int = 2


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """The client's result for a call of one of its own tools."""

    call_id: str
    content: Any
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Decision:
    """A person's answer to an approval request the server issued (`request_id`)."""

    request_id: str
    approve: bool
    answer: Any = None
    arguments: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What a client asks for, in the runtime's terms.

    `messages` is the client's whole conversation; it starts the thread when the server has no
    record of it, and otherwise only its new user messages are added. `state` is the client's
    shared state (None: it sent none); `state_seen` the state the client says it last received
    from the server, when its protocol echoes it (the AI SDK's `data-state` part), else None;
    `saw_thread` whether the client has received this thread's state before (a fresh page has
    not: its `{}` means "nothing yet", not "cleared"). `regenerate` replaces the last reply of
    the thread.
    """

    thread_id: str
    messages: tuple[Message, ...] = ()
    state: Any = None
    state_seen: Any = None
    saw_thread: bool = False
    tool_outputs: tuple[ToolOutput, ...] = ()
    decisions: tuple[Decision, ...] = ()
    client_tools: tuple[ToolSpec, ...] = ()
    context: tuple[str, ...] = ()
    regenerate: bool = False


@dataclass
class LiveRun:
    """One run as the server serves it: its events so far, and whether it has ended."""

    thread_id: str
    agent_name: str
    principal: str | None = None
    events: list[RuntimeEvent] = field(default_factory=list)
    done: bool = False
    task: asyncio.Task[None] | None = None
    lease: int | None = None
    run_key: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    """What the protocol adapter that started the run keeps to translate it again on replay."""
    kept: ThreadState | None = None
    """The thread's kept shared state when the run started (servers that keep it)."""
    start: list[Any] = field(default_factory=list)
    """The state the server chose for the run to start from (none for a resumed run)."""
    _more: Wakeup = field(default_factory=Wakeup)

    @property
    def run_id(self) -> str | None:
        """The runtime's id of this run, once it has started."""
        first = self.events[0] if self.events else None
        return first.run_id if isinstance(first, RunStarted) else None

    def add(self, events: Sequence[RuntimeEvent]) -> None:
        """Keep `events` and wake whoever follows."""
        self.events.extend(events)
        self._more.notify()

    def end(self) -> None:
        """No more events will come."""
        self.done = True
        self._more.notify()

    async def follow(self, start: int = 0) -> AsyncIterator[RuntimeEvent]:
        """Every event from number `start` on: those kept, then the live ones until the end."""
        async for batch in self.follow_batches(start):
            for event in batch:
                yield event

    async def follow_batches(self, start: int = 0) -> AsyncIterator[list[RuntimeEvent]]:
        """Like `follow`, but all the events there are at once in one list (fewer writes)."""
        index = start
        while True:
            if index < len(self.events):
                batch = self.events[index:]
                index += len(batch)
                yield batch
                continue
            if self.done:
                return
            await self._more.wait()

    def last_state(self) -> Any:
        """The shared state as the latest event gave it."""
        for event in reversed(self.events):
            if isinstance(event, StateChanged | RunStarted | RunFinished):
                return event.state
        return None


class RunService:
    """Starts, tracks and stops the runs of a server's agents.

    With a store that has leases and event logs (`RedisStore`), several server processes share
    the work: a run takes the thread's lease first (another process answers 409 while it holds
    it; a holder that died loses it after `lease_ttl` seconds), its step writes are fenced by the
    lease's token, and its events go to the store, so any process can replay and follow it.

    With `keep_state` (and a store), it keeps each thread's latest shared state between runs
    (`pyox_agents.service`): a client that sends none (or a fresh page's `{}`) gets it, and
    a client's state is merged in as the person's edits on top of the version it last saw.
    Without it, a run starts from the client's state, or `{}`.
    """

    def __init__(
        self,
        store: Any = None,
        *,
        lease_ttl: float = 30.0,
        owner: str | None = None,
        limits: ServerLimits | None = None,
        keep_state: bool = False,
    ) -> None:
        self.store = store
        self.keep_state = keep_state and store is not None
        """Whether the thread's latest shared state is kept between runs (needs a store)."""
        self.limits = limits or ServerLimits()
        self._owners: dict[str, str | None] = {}  # threads seen without a store: their owner
        self.shared = store is not None and hasattr(store, "aacquire_lease")
        """Whether runs are shared with other processes through the store."""
        self.lease_ttl = lease_ttl
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._active: dict[str, LiveRun] = {}
        self._runs_of: collections.Counter[str | None] = collections.Counter()
        """How many active runs each principal has (the per-principal limit, in O(1))."""

    def active(self, thread_id: str) -> LiveRun | None:
        """The run active on `thread_id` in this process, or None."""
        return self._active.get(thread_id)

    async def follow(
        self, thread_id: str
    ) -> tuple[AsyncIterator[RuntimeEvent], dict[str, Any]] | None:
        """The events of the run active on `thread_id`, from its first, and its adapter meta.

        Looks in this process, then (shared runs) in the store's event log, so a run another
        process executes can be replayed and followed. None when nothing runs on the thread.
        """
        live = self._active.get(thread_id)
        if live is not None:
            return live.follow(), live.meta
        if not self.shared:
            return None
        run_key = await self.store.aget_active(thread_id)
        if run_key is None:
            return None
        meta_rows = await self.store.aread_events(f"{run_key}:meta")
        meta = json.loads(meta_rows[0][1]) if meta_rows else {}
        return self._remote(thread_id, run_key), meta

    async def _remote(self, thread_id: str, run_key: str) -> AsyncIterator[RuntimeEvent]:
        """The events of a run another process executes, read from the store until it ends.

        If that process dies (the thread's active run is no longer this one and the log was
        never closed), the stream ends with `RunFailed(code="run_lost")` instead of waiting on.
        """
        after = "0"
        while True:
            rows = await self.store.aread_events(run_key, after)
            for row_id, text in rows:
                after = row_id
                event = event_from_json(json.loads(text))
                yield event
                if isinstance(event, RunFinished | RunFailed):
                    return
            if rows:
                continue
            if await self.store.ais_done(run_key):
                if not await self.store.aread_events(run_key, after):
                    return
                continue
            if await self.store.aget_active(thread_id) != run_key:
                yield RunFailed(AgentError("run_lost", "the server process running this run "
                                                       "stopped; send the message again"))
                return
            await anyio.sleep(0.1)

    async def start(self, agent: Agent, request: RunRequest, *, name: str = "",
                    principal: str | None = None) -> LiveRun:
        """Check `request` and start its run for `principal`; the `LiveRun` fills as it goes.

        Raises:
            Busy: a run is already active on the thread.
            RequestError: the request cannot run (404 for another principal's thread, 413 over
                a size limit, 422 with the field, 429 over a concurrency limit).
        """
        self._check_limits(request, principal)
        if not _ID.fullmatch(request.thread_id):
            raise RequestError(422, f"thread id {request.thread_id[:40]!r} must be 1 to 128 "
                                    "letters, digits, '_' or '-'", "threadId")
        await self.check_owner(request.thread_id, principal)  # others' threads: 404, not 409
        if request.thread_id in self._active:
            raise Busy(request.thread_id)
        live = LiveRun(request.thread_id, name, principal)
        self._add_active(live)  # taken before any await: no two starts race
        try:
            if self.shared:
                token = await self.store.aacquire_lease(
                    request.thread_id, self.owner, self.lease_ttl
                )
                if token is None:
                    raise Busy(request.thread_id)
                live.lease = token
            batches = await self._open(agent, request, live, principal)
        except BaseException:
            self._remove_active(live)
            if live.lease is not None:
                await self.store.arelease_lease(request.thread_id, self.owner, live.lease)
            raise
        if self.shared:
            live.run_key = secrets.token_hex(16)
            await self.store.aset_active(request.thread_id, live.run_key, self.lease_ttl)
        self._owners.setdefault(request.thread_id, principal)
        live.task = asyncio.create_task(self._pump(live, batches), name=f"serve {name}")
        return live

    def _check_limits(self, request: RunRequest, principal: str | None) -> None:
        limits = self.limits
        if limits.messages is not None and len(request.messages) > limits.messages:
            raise RequestError(413, f"the request has {len(request.messages)} messages; the "
                                    f"limit is {limits.messages}", "messages")
        if limits.state_bytes is not None and request.state is not None:
            size = len(json.dumps(request.state, separators=(",", ":")))
            if size > limits.state_bytes:
                raise RequestError(413, f"the shared state is {size} bytes of JSON; the limit "
                                        f"is {limits.state_bytes}", "state")
        retry = {"Retry-After": str(limits.retry_after)}
        if limits.runs_total is not None and len(self._active) >= limits.runs_total:
            raise RequestError(429, f"the server runs {len(self._active)} runs, its limit; try "
                                    "again shortly", headers=retry)
        if limits.runs_per_principal is not None:
            mine = self._runs_of[principal]
            if mine >= limits.runs_per_principal:
                raise RequestError(429, f"you have {mine} runs going, the limit per user; try "
                                        "again when one ends", headers=retry)

    async def check_owner(self, thread_id: str, principal: str | None) -> None:
        """404 unless `thread_id` is new or belongs to `principal` (others' threads are not
        there, as far as a principal can tell)."""
        owner = await self._owner(thread_id)
        if owner is not _NOBODY and owner != principal:
            raise RequestError(404, f"no thread {thread_id!r}")

    async def _owner(self, thread_id: str) -> Any:
        if thread_id in self._owners:
            return self._owners[thread_id]
        live = self._active.get(thread_id)
        if live is not None:
            return live.principal
        if self.store is not None:
            try:
                loaded = await self.store.aload_thread(thread_id)
            except LookupError:
                return _NOBODY
            return loaded.owner
        return _NOBODY

    async def publish_meta(self, live: LiveRun, meta: Mapping[str, Any]) -> None:
        """Share what an adapter keeps of a run (`meta`, JSON) with other processes."""
        if self.shared and live.run_key is not None:
            await self.store.aappend_events(f"{live.run_key}:meta", [json.dumps(dict(meta))])

    async def stop(self, thread_id: str) -> bool:
        """Cancel the run active on `thread_id`; False if none was. What it committed stays."""
        live = self._active.get(thread_id)
        if live is None or live.task is None:
            return False
        live.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait([live.task])
        return True

    async def close(self) -> None:
        """Cancel every active run (the server is shutting down)."""
        for thread_id in list(self._active):
            await self.stop(thread_id)

    def _add_active(self, live: LiveRun) -> None:
        self._active[live.thread_id] = live
        self._runs_of[live.principal] += 1

    def _remove_active(self, live: LiveRun) -> None:
        if self._active.get(live.thread_id) is live:
            del self._active[live.thread_id]
            self._runs_of[live.principal] -= 1
            if not self._runs_of[live.principal]:
                del self._runs_of[live.principal]

    async def _pump(self, live: LiveRun, batches: AsyncIterator[list[RuntimeEvent]]) -> None:
        deadline = self.limits.run_seconds
        keeper = None
        if live.run_key is not None:  # the lease is kept while the process lives, events or not
            keeper = asyncio.create_task(self._keep_lease(live), name="keep lease")
        try:
            with anyio.fail_after(deadline):
                await self._drain(live, batches)
        except TimeoutError:
            failed = RunFailed(AgentError("run_timeout", f"the run took longer than {deadline:g} "
                                          "s, the server's limit, and was stopped"))
            await self._keep(live, ())
            live.add((failed,))
            if live.run_key is not None:
                with anyio.CancelScope(shield=True):
                    await self._share(live, failed)
        finally:
            if keeper is not None:
                keeper.cancel()
            self._remove_active(live)
            if live.run_key is not None:  # free the thread before the client hears the end
                with anyio.CancelScope(shield=True):
                    await self._release(live)
            live.end()

    async def _keep(self, live: LiveRun, last: Sequence[RuntimeEvent]) -> None:
        """Keep the versions of the shared state the run went through (its start, its events,
        then `last`) as the thread's: before its end is told, so the client's next request
        finds them. The write is not interrupted by a cancel, and may be asked for again."""
        if live.kept is None:
            return
        kept = live.kept.copy()
        for state in live.start:  # kept even when the run ended before it announced it
            kept.add(state)
        for event in (*live.events, *last):
            if isinstance(event, RunStarted | StateChanged):
                kept.add(event.state)
        if kept.version != live.kept.version:
            await asyncio.shield(self.store.awrite_kept_state(live.thread_id, kept.to_json()))
        live.kept = None  # kept: once per run

    async def kept_state(self, thread_id: str) -> ThreadState:
        """The thread's kept shared state (version 0 when none is kept).

        What a run that has not ended (paused, or cut off by a crash, maybe in another process)
        committed is its latest version: its record keeps that state until it ends.
        """
        if not self.keep_state:
            return ThreadState()
        data = await self.store.aload_kept_state(thread_id)
        kept = ThreadState() if data is None else ThreadState.from_json(data)
        with contextlib.suppress(LookupError):
            loaded = await self.store.aload_thread(thread_id)
            if loaded.shared_version is not None and loaded.shared_state is not None:
                kept.add(loaded.shared_state)
        return kept

    async def _keep_lease(self, live: LiveRun) -> None:
        """Renew the run's lease every third of its time to live, until the run ends."""
        while True:
            await anyio.sleep(self.lease_ttl / 3)
            await self._renew(live)

    async def _drain(self, live: LiveRun, batches: AsyncIterator[list[RuntimeEvent]]) -> None:
        """Keep the run's events (and share them) until it ends; a cancel ends it "cancelled"."""
        last: Sequence[RuntimeEvent] = ()
        try:
            async with contextlib.aclosing(batches):  # type: ignore[type-var]
                async for batch in batches:
                    if isinstance(batch[-1], RunFinished | RunFailed):  # the run's last events
                        last = batch
                        await self._keep(live, batch)
                        if live.run_key is None:  # its thread is free once the client hears so
                            self._remove_active(live)
                    live.add(batch)
                    if live.run_key is not None:
                        await self._share(live, *batch)
        except asyncio.CancelledError:
            if not live.events or not isinstance(live.events[-1], RunFinished | RunFailed):
                final = RunFinished(answer=None, state=live.last_state(), outcome="cancelled")
                await self._keep(live, last)
                live.add((final,))
                if live.run_key is not None:
                    with anyio.CancelScope(shield=True):
                        await self._share(live, final)
            raise

    async def _share(self, live: LiveRun, *events: RuntimeEvent) -> None:
        assert live.run_key is not None
        await self.store.aappend_events(live.run_key,
                                        [json.dumps(event_to_json(event)) for event in events])

    async def _renew(self, live: LiveRun) -> None:
        assert live.run_key is not None and live.lease is not None
        await self.store.arenew_lease(live.thread_id, self.owner, live.lease, self.lease_ttl)
        await self.store.aset_active(live.thread_id, live.run_key, self.lease_ttl)

    async def _release(self, live: LiveRun) -> None:
        assert live.run_key is not None and live.lease is not None
        await self.store.amark_done(live.run_key)
        await self.store.aclear_active(live.thread_id, live.run_key)
        await self.store.arelease_lease(live.thread_id, self.owner, live.lease)

    async def _open(
        self, agent: Agent, request: RunRequest, live: LiveRun, principal: str | None
    ) -> AsyncIterator[list[RuntimeEvent]]:
        lease = live.lease
        fence = (request.thread_id, lease) if lease is not None else None
        if self.keep_state:
            live.kept = await self.kept_state(request.thread_id)
        if request.decisions:
            return await self._resume(agent, request, fence)
        conversation = await self._conversation(agent, request)
        start = _start_state(request, live.kept)
        live.start.append(start)
        try:
            return agent._stream_batches(
                conversation,
                state=start,
                client_tools=request.client_tools,
                context=request.context,
                fence=fence,
                owner=principal,
                state_bytes=self.limits.state_bytes,
            )
        except pydantic.ValidationError as exc:
            raise RequestError(422, _validation_message(exc), "state") from None
        except TypeError as exc:
            raise RequestError(422, str(exc), "state") from None
        except ValueError as exc:
            raise RequestError(409, str(exc)) from None

    async def _conversation(self, agent: Agent, request: RunRequest) -> State:
        thread_id = request.thread_id
        store = agent.store
        conversation: State | None = None
        if store is not None:
            with contextlib.suppress(LookupError):
                conversation = await store.aload(thread_id)
        if conversation is None:
            try:
                return State(id=thread_id, messages=list(request.messages))
            except ValueError as exc:
                raise RequestError(422, f"thread id: {exc}", "threadId") from None
            except TypeError as exc:  # a value in a message that is not JSON (too deep)
                raise RequestError(422, str(exc), "messages") from None
        if request.regenerate:
            _undo_last_reply(conversation)
        _add_outputs(conversation, request.tool_outputs)
        known = sum(1 for m in conversation.messages if m.role == "user")
        sent = [m for m in request.messages if m.role == "user"]
        for message in sent[known:]:
            conversation.add_message(message)
        return conversation

    async def _resume(
        self, agent: Agent, request: RunRequest, fence: tuple[str, int] | None
    ) -> AsyncIterator[list[RuntimeEvent]]:
        run_id = await self._paused_run(agent, request.thread_id)
        run = await agent.load_run(run_id)
        pending = run.pending
        assert pending is not None
        chosen = [d for d in request.decisions if d.request_id == pending.id]
        unknown = [d.request_id for d in request.decisions if d.request_id != pending.id]
        if unknown or not chosen:
            missing = "" if chosen else f"; the open request is {pending.id!r}"
            raise RequestError(
                422,
                f"resume answers request(s) {unknown or [d.request_id for d in request.decisions]}"
                f" that thread {request.thread_id!r} does not have open{missing}",
                "resume",
            )
        decision = chosen[0]
        await self._edit_paused(agent, request, run_id, fence)
        try:
            return await agent._resume_batches(
                run_id,
                approve=decision.approve,
                answer=decision.answer,
                edited_arguments=decision.arguments,
                request_id=decision.request_id,
                fence=fence,
                state_bytes=self.limits.state_bytes,
            )
        except (ValueError, LookupError) as exc:
            raise RequestError(422, str(exc), "resume") from None

    async def _edit_paused(self, agent: Agent, request: RunRequest, run_id: str,
                           fence: tuple[str, int] | None) -> None:
        """Commit the person's edits of the state (the client's, against the version it saw)
        into the paused run's record before it resumes, as a tool's would be: onto what the
        run committed since that version, refused (409) where they write the same place."""
        client = request.state
        if client is None or not request.saw_thread:
            return
        store = agent.store
        thread = request.thread_id
        if store is None:
            if run_id not in agent._paused_state:
                return
            paused = agent._paused_state[run_id]
        else:
            loaded = await store.aload_thread(thread)
            if loaded.shared_version is None or loaded.shared_state is None:
                return
            paused = loaded.shared_state
        versions = await self.kept_state(thread)
        versions.add(paused)
        seen = request.state_seen
        try:
            edited = edit_running(versions, client, client if seen is None else seen)
        except Conflict as conflict:
            raise RequestError(409, f"the shared state changed at {conflict.path or '/'} while "
                                    "you edited it, in the paused run; reload the thread's state "
                                    "(GET /threads/{id}) and edit it again", "state") from None
        if edited is None:
            return
        if store is None:
            agent._paused_state[run_id] = edited
            return
        record = StepRecord(thread_id=thread, first_seq=await store.aentry_count(thread),
                            shared_state=edited, shared_version=0)
        if fence is not None:
            await anyio.to_thread.run_sync(store.write_fenced, record, *fence)
        else:
            await store.awrite(record)

    async def _paused_run(self, agent: Agent, thread_id: str) -> str:
        """The id of the run on `thread_id` that waits for a person."""
        conversation = None
        if agent.store is not None:
            with contextlib.suppress(LookupError):
                conversation = await agent.store.aload(thread_id)
        run_ids = [
            paused_id for paused_id, (_, state) in agent._paused.items() if state.id == thread_id
        ]
        if conversation is not None:
            starts = [e.content for e in conversation.history if isinstance(e, RunStartEntry)]
            run_ids = [str(starts[-1])] if starts and starts[-1] else []
        for run_id in run_ids:
            with contextlib.suppress(LookupError):
                if (await agent.load_run(run_id)).pending is not None:
                    return run_id
        raise RequestError(422, f"thread {thread_id!r} has no run waiting for an answer", "resume")


def _start_state(request: RunRequest, kept: ThreadState | None) -> Any:
    """The state a new run starts from: the client's, merged with the thread's kept state.

    No state from the client (or `{}` from one that never received this thread's state, e.g. a
    reloaded page): the kept state. Otherwise the client's edits on top of the version it last
    saw, rebased onto the kept state's latest version (`thread_state.merge`).
    """
    client = request.state
    fresh = client is None or (not request.saw_thread and json_equal(client, {}))
    if kept is None or not kept.version:
        return {} if client is None else client
    if fresh:
        return kept.frozen()
    seen = request.state_seen
    if seen is None and isinstance(client, dict | list) and not client:
        seen = kept.frozen()  # cleared: what it cleared is all it had, the latest at best
    return merge(kept, client, client if seen is None else seen)


def _add_outputs(conversation: State, outputs: Sequence[ToolOutput]) -> None:
    """Give the conversation's pending client-tool calls the client's results."""
    pending = {call.id: call for call in conversation.pending_calls}
    for output in outputs:
        call = pending.get(output.call_id)
        if call is None:
            continue  # already answered, or not ours: the client restates its history
        text = output.content if isinstance(output.content, str) else None
        conversation._add_tool_result(
            call,
            "error" if output.is_error else "ok",
            output.content,
            is_error=output.is_error,
            text=text,
        )


def _undo_last_reply(conversation: State) -> None:
    """Go back to before the last reply (the client asked to regenerate it).

    Not while calls of that reply have no result (its run was cut by a crash): they may have
    run, so the run goes on first and settles them (in recovery), and the reply stays.
    """
    if conversation.pending_calls:
        return
    history = conversation.history
    for index in range(len(history) - 1, -1, -1):
        if history[index].kind in ("user_message", "import"):
            snapshot = State(history=history[: index + 1]).snapshot()
            if not snapshot.pending_calls:
                conversation.restore(snapshot)
            return


def _validation_message(exc: pydantic.ValidationError) -> str:
    parts = [f"{'.'.join(map(str, e['loc'])) or 'state'}: {e['msg']}" for e in exc.errors()]
    return "state does not match the agent's state type: " + "; ".join(parts)


_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_NOBODY = object()
"""The owner of a thread nobody has yet."""
