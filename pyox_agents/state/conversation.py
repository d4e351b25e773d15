"""`State`: one conversation's record, the messages the model sees and everything that happened.

A State keeps an append-only history and the value folded from it (`StateSnapshot`); every
property is a pure function of history, so `State(history=s.history).snapshot() == s.snapshot()`.
Its methods are the only way to change it, and every one is thread-safe.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Never

from pyox_agents.state._message_entries import frozen_extra_data
from pyox_agents.state._state_checks import (
    NO_MESSAGES,
    REMOVED,
    check_id,
    check_messages,
    new_id,
)
from pyox_agents.state._state_reads import StateReads
from pyox_agents.state.frozen import thaw
from pyox_agents.state.history import (
    ClearedToolResults,
    Compacted,
    ContextChangeEntry,
    ExtraDataEntry,
    FinishEntry,
    HistoryEntry,
    ImportEntry,
    NoticeEntry,
    Restored,
    UserMessageEntry,
    utc_now,
)
from pyox_agents.state.jsonvalue import json_equal
from pyox_agents.state.messages import NOTICE_PREFIX, File, Image, Message
from pyox_agents.state.snapshot import Fold, StateSnapshot, cleared, replay
from pyox_agents.state.stopped import (
    Stopped,
    StoppedByFinish,
    StoppedByLimit,
    StoppedByPermission,
    StoppedByUntil,
)

__all__ = [
    "State",
    "StateSnapshot",
    "Stopped",
    "StoppedByFinish",
    "StoppedByLimit",
    "StoppedByPermission",
    "StoppedByUntil",
]

class State(StateReads):
    """One conversation's record: the messages the model sees (`messages`) and what happened.

    Create it with the messages to start from, pass it to `agent.run` to keep it after the run,
    or to continue it after Ctrl+C. Its methods are the only way to change it, and every one is
    thread-safe, so tools may call them from worker threads. Read values with the properties, or
    take `snapshot()` for several values that must belong together.

    Raises:
        TypeError: a positional argument, an unknown keyword (0.4's `task=`, `context=`, `data=`
            name their replacement), `messages` that is not a list of Message, an `extra_data`
            value that is not JSON, a `history` item that is not an entry, or `history` together
            with `messages` or `extra_data`.
        ValueError: `id` has other characters, or `history` is inconsistent (the message gives
            the index of the entry that cannot follow the ones before it).
    """

    def __init__(self, *args: Never, id: str | None = None,
                 messages: Iterable[Message] = NO_MESSAGES,
                 extra_data: Mapping[str, Any] | None = None,
                 history: Iterable[HistoryEntry] | None = None, **kwargs: Never) -> None:
        if args:
            raise TypeError(f"State() takes keyword arguments only, got {len(args)} positional: "
                            f"write State(messages=[Message.user(text)], extra_data={{...}})")
        for name in kwargs:
            if name in REMOVED:
                raise TypeError(REMOVED[name])
            raise TypeError(f"State() got an unexpected keyword argument {name!r}: it takes id, "
                            f"messages, extra_data and history")
        self._setup(check_id(id), Fold(), [], {}, None)
        if history is not None:
            if messages is not NO_MESSAGES or extra_data is not None:
                raise TypeError("State(history=...) cannot be combined with messages or "
                                "extra_data: the history already holds them")
            if isinstance(history, str | bytes | Mapping) or not isinstance(history, Iterable):
                raise TypeError(f"history must be an iterable of history entries (other.history, "
                                f"or what a store loaded), got {type(history).__name__}")
            entries = list(history)
            self._fold = replay(entries)
            self._history = entries
            return
        start = check_messages(messages)
        data = None
        if extra_data is not None:
            if not isinstance(extra_data, Mapping):
                raise TypeError(f"extra_data must be a dict, got {type(extra_data).__name__}")
            data = frozen_extra_data(extra_data)  # checked before anything is recorded
        if start:
            self._record(ImportEntry(at=utc_now(), content=start), "import")
        if data:  # stamped after the import: history is oldest first
            self._record(ExtraDataEntry(at=utc_now(), content=data), "set extra_data")

    def __repr__(self) -> str:
        with self._lock:
            return (f"State(id={self._id!r}, turn={self._fold.turn}, "
                    f"messages={len(self._fold.messages)}, entries={len(self._history)}, "
                    f"finished={self._fold.finished})")

    # --- public methods -------------------------------------------------------------------------

    def add_message(self, message: Message) -> None:
        """Add a user message or a notice (`Message.notice(text)`) to the conversation.

        While tool calls are pending, or while think waits on the model, the message is held and
        goes into messages right after the results or the reply.

        Raises:
            TypeError: `message` is not a Message.
            ValueError: not a user message, blocks other than text, images and files, or no
                text, no image and no file.
        """
        if not isinstance(message, Message):
            raise TypeError(f"add_message() takes a Message, got {type(message).__name__}: write "
                            f"state.add_message(Message.user(text))")
        if message.role != "user":
            raise ValueError(f"add_message() takes a user message or a notice, got a "
                             f"{message.role} message: use Message.user(text) or "
                             f"Message.notice(text)")
        if message.tool_calls or message.call_id is not None or message.name is not None or (
                message.is_error):
            raise ValueError("add_message() takes a message of text and images only (and "
                             "files); this one has tool calls or tool-result fields: use "
                             "Message.user(text, *images)")
        if not isinstance(message.content, str):
            raise ValueError(f"add_message() got a message whose text is a "
                             f"{type(message.content).__name__}, not a str: write "
                             f"Message.user('text'), with '' for an image-only message")
        images = message.images if isinstance(message.images, tuple | list) else [message.images]
        for index, image in enumerate(images):
            if not isinstance(image, Image):
                raise ValueError(f"add_message() got a message whose images[{index}] is a "
                                 f"{type(image).__name__}, not an Image: a user message holds "
                                 f"text and Image blocks only, e.g. Message.user(text, "
                                 f"Image(url=...))")
        files = message.files if isinstance(message.files, tuple | list) else [message.files]
        for index, file in enumerate(files):
            if not isinstance(file, File):
                raise ValueError(f"add_message() got a message whose files[{index}] is a "
                                 f"{type(file).__name__}, not a File: write Message.user(text, "
                                 f"File(url=..., media_type=...))")
        if not message.content.strip() and not message.images and not message.files:
            raise ValueError("add_message() got a message with no text and no image: give it "
                             "some text, e.g. Message.user('Now fix it')")
        if message.content.startswith(NOTICE_PREFIX):
            self._record(NoticeEntry(at=utc_now(), content=message), "add a notice")
        else:
            self._record(UserMessageEntry(at=utc_now(), content=message), "add a message")

    def finish(self, answer: Any = None) -> None:
        """End the run: stopped becomes StoppedByFinish right away; the State cannot run again.

        Tools may call it, even while other calls are pending. The last answer given wins;
        `None` keeps an earlier one. Only restore to an earlier snapshot takes it back.

        Raises:
            TypeError: `answer` cannot be turned into JSON (a set, Path, datetime, Enum, bytes).
        """
        self._record(FinishEntry(at=utc_now(), content=answer), "finish")

    def compact(self, summary: str) -> None:
        """Replace the messages with the first user message and `summary`. History keeps all.

        Raises:
            TypeError: `summary` is not a string.
            ValueError: tool calls are pending, or `summary` is empty or whitespace only.
        """
        if not isinstance(summary, str):
            raise TypeError(f"compact() takes the summary as a str, got {type(summary).__name__}")
        if not summary.strip():
            raise ValueError("compact() got an empty summary: say what the model should know "
                             "about the work so far")
        self._record(ContextChangeEntry(at=utc_now(), content=Compacted(summary)), "compact")

    def clear_tool_results(self, keep_last: int = 5) -> None:
        """Blank every tool result in messages except the last `keep_last`; history keeps them.

        A cleared result reads "(cleared: kept in history)", its images gone too; results already
        cleared still count toward keep_last. Nothing is recorded when nothing changes.

        Raises:
            ValueError: tool calls are pending, or `keep_last` is not an integer >= 0.
        """
        if type(keep_last) is not int or keep_last < 0:
            raise ValueError(f"keep_last must be an integer >= 0, got {keep_last!r}")
        with self._lock:
            if self._fold.calls:
                raise ValueError("cannot clear tool results: "
                                 + self._fold.pending_text("the context changes"))
            if cleared(self._fold.messages, keep_last) == self._fold.messages:
                return
            entry = ContextChangeEntry(at=utc_now(), content=ClearedToolResults(keep_last))
            self._record(entry, "clear tool results")

    @contextmanager
    def edit_extra_data(self) -> Iterator[dict[str, Any]]:
        """Change extra_data in a with block: you get an editable copy; a normal end records it.

        A lock held for the whole block makes edits from several threads take turns. If the
        block raises, nothing changes; if nothing changed, nothing is recorded.

        Raises:
            TypeError: at the end of the block, a value is not JSON (the message names the key).
            RuntimeError: an edit_extra_data() block inside another one on this State.
        """
        with self._lock:
            if self._editing:
                raise RuntimeError("edit_extra_data() blocks cannot nest on one State: finish "
                                   "the outer block, or edit in it")
            self._editing = True
            try:
                data = thaw(self._fold.extra_data)
                assert isinstance(data, dict)
                yield data
                entry = ExtraDataEntry(at=utc_now(), content=frozen_extra_data(data))
                if not json_equal(entry.content, self._fold.extra_data):
                    self._record(entry, "edit extra_data")
            finally:
                self._editing = False

    def fork(self) -> State:
        """A new State with the same history and content, a new id, and nothing shared.

        No store and no running Agent come along; it shares only the subagent States this
        one ran, which its `child` opens too. `fork().snapshot() == state.snapshot()`.

        Raises:
            ValueError: the model is being waited on (fork before think, or after it returns).
        """
        with self._lock:
            if self._fold.request is not None:
                raise ValueError(f"cannot fork: the model is being waited on (a "
                                 f"{self._fold.request} request has no reply yet), so no "
                                 f"think() is behind a copy: fork before think, or after it "
                                 f"returns (e.g. in Reporter.on_think_end)")
            other = State.__new__(State)
            other._setup(new_id(), self._fold.copy(), list(self._history), self._children,
                         self._child_store)
            other._cache = self._cache
            return other

    def child(self, child_id: str) -> State:
        """The subagent State `child_id` that a tool call of this State started.

        The very object while it is in memory; otherwise loaded (not cached) from the bound store.

        Raises:
            KeyError: `child_id` is not a child of this State (a grandchild is not either).
            ValueError: not in memory, and no store is bound to this State.
            TypeError: The store works only asynchronously. Use `achild`.
            LookupError: the store has no State with this id.
        """
        found, store = self._find_child(child_id)
        if found is not None:
            return found
        load = getattr(store, "load", None)
        if getattr(store, "async_only", False) or load is None or inspect.iscoroutinefunction(
                load):
            raise TypeError("The store works only asynchronously. Use `achild`.")
        return self._loaded(child_id, lambda: load(child_id))

    async def achild(self, child_id: str) -> State:
        """The async version of child: a child not in memory is loaded with `await store.aload`.

        Raises: the same as child, except that an async-only store works.
        """
        found, store = self._find_child(child_id)
        if found is not None:
            return found
        aload = getattr(store, "aload", None)
        if aload is None:
            return self._loaded(child_id, lambda: store.load(child_id))  # type: ignore[attr-defined]
        try:
            loaded = await aload(child_id)
        except LookupError:
            loaded = None
        return self._loaded(child_id, lambda: loaded)

    def restore(self, snapshot: StateSnapshot) -> None:
        """Go back to `snapshot`, taken earlier from this State between turns.

        Every value goes back (messages, turn, extra_data, finished, answer, stopped) except
        usage, which stays cumulative, and history, which gets one context_change entry.

        Raises:
            TypeError: `snapshot` is not a StateSnapshot.
            ValueError: not from this State, tool calls are pending, the model is being waited
                on, a compaction is under way, or the snapshot was taken while the model was
                being waited on.
        """
        if not isinstance(snapshot, StateSnapshot):
            raise TypeError(f"restore() takes a StateSnapshot (from state.snapshot()), got "
                            f"{type(snapshot).__name__}")
        with self._lock:
            length = len(snapshot.history)
            mine = self._history[:length]
            if len(mine) < length or any(
                    a is not b and a != b for a, b in zip(snapshot.history, mine, strict=True)):
                raise ValueError(f"cannot restore: the snapshot is not from this State (its "
                                 f"history is not the start of State {self._id!r}'s history): "
                                 f"restore a snapshot taken with this State's snapshot()")
            entry = ContextChangeEntry(at=utc_now(), content=Restored(length))
            self._record(entry, "restore")

    def _register_child(self, state: State) -> None:
        """Internal: keep a subagent State in memory by id (shared with forks) for `child`."""
        if not isinstance(state, State):
            raise TypeError(f"_register_child() takes a State, got {type(state).__name__}")
        self._children[state.id] = state

    # --- helpers --------------------------------------------------------------------------------

    def _find_child(self, child_id: str) -> tuple[State | None, object]:
        with self._lock:
            known = child_id in self._fold.child_ids
            store = self._child_store
        if not known:
            raise KeyError(f"{child_id!r} is not a child of State {self._id!r}: a child is one "
                           f"of the child_ids of its tool_result entries (open a grandchild "
                           f"with state.child(a).child(b))")
        found = self._children.get(child_id)
        if found is None and store is None:
            raise ValueError(f"State {child_id!r} is a child of {self._id!r}, but it is not in "
                             f"memory and no store is bound to this State: open it with the "
                             f"store's load({child_id!r})")
        return found, store

    def _loaded(self, child_id: str, load: Callable[[], object]) -> State:
        try:
            loaded = load()
        except LookupError:
            loaded = None
        if loaded is None:
            raise LookupError(f"the store bound to State {self._id!r} has no State "
                              f"{child_id!r}: a subagent whose Agent has a store of its own is "
                              f"saved there; open it with that store's load({child_id!r})")
        if not isinstance(loaded, State):
            raise TypeError(f"the store's load({child_id!r}) returned a "
                            f"{type(loaded).__name__}, not a State")
        return loaded
