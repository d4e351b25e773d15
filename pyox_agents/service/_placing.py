"""Where a request's messages go in the thread it is for: one rule for both protocols.

The kept conversation is the truth. A client's user messages are matched to the thread's by id
(each protocol gives every message one; the thread keeps the ids its clients gave). Then:

- what follows the last user message both share is new, and is appended (a client that sends
  its whole history, or only its newest message as the AI SDK's persistence guide does, or a
  second tab that missed another tab's exchange: it is appended after that exchange, never in
  its place);
- a known user message with other text is an edit: the thread branches just before it, and the
  edited message (and anything the client sent after it) follows;
- a history that stops at a user message the thread has answered is a regenerate: the thread
  branches right after that message, and the run answers it again.

A message typed while an approval or a question waited declined it: the history holds that
result after the message (the resumed run recorded it), and the model read it before the
message. A branch at such a message keeps the result with it: a regenerate goes back to just
after the result, an edit puts it back before the edited message. Neither asks again.

A branch goes back with `State.restore`: the history keeps every entry (the old branch stays
reachable there), and what the model reads next is the branch. Assistant and tool messages are
the server's own (their ids are the ones it streamed): a client's copy of them may be changed
(an approval answered in place, a tool result spliced in), so they are not matched by content;
the adapters read the client's tool outputs and answers apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pyox_agents._run_request import RequestError
from pyox_agents.state._shown_ids import user_message_id
from pyox_agents.state.conversation import State
from pyox_agents.state.history import (
    ContextChangeEntry,
    ImportEntry,
    Restored,
    ToolResultEntry,
    UserMessageEntry,
)
from pyox_agents.state.messages import NOTICE_PREFIX, Message

__all__ = ["MAX_MESSAGE_ID", "Placement", "check_message_ids", "place"]

MAX_MESSAGE_ID = 256
"""The longest id a client may give a message (the clients' own are 16 to 36 characters)."""


@dataclass(frozen=True, slots=True)
class Placement:
    """What a request does to its thread's conversation.

    `rewind`: the length of history to go back to (a branch), or None to stay; `declined`:
    tool results to record again after going back (the declines of calls the edited message
    was typed over); `new`: the messages to add after that, in order; `branch`: "edit" or
    "regenerate" when it branches.
    """

    rewind: int | None = None
    new: tuple[Message, ...] = ()
    branch: str | None = None
    declined: tuple[ToolResultEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class _Turn:
    """A user message of the thread: its id, the message, and where it is in the history (the
    entry's index, its place among the entry's messages, and the messages before it there).
    `declines`: the results (and their indices) that follow it in the history, of calls it
    was typed over, which the model read before it."""

    id: str | None
    message: Message
    index: int
    before: tuple[Message, ...] = ()
    declines: list[tuple[int, ToolResultEntry]] = field(default_factory=list)

    def rewind_before(self) -> tuple[int, tuple[Message, ...]]:
        """The history length and the messages to add again, to stand just before this one."""
        return self.index, self.before

    def rewind_after(self, entry_messages: tuple[Message, ...]) -> tuple[int, tuple[Message, ...]]:
        """... to stand just after this one (its reply and all after it gone)."""
        if self.declines:  # the results it declined stay: the model read them before it
            return self.declines[-1][0] + 1, ()
        kept = (*self.before, self.message)
        if len(kept) == len(entry_messages):  # the last message of its entry
            return self.index + 1, ()
        return self.index, kept


def place(conversation: State, sent: Sequence[Message]) -> Placement:
    """Where `sent` (the request's messages, each with the client's id) goes in `conversation`.

    Raises:
        RequestError: 409 naming the message, for user messages the thread has in another
            order (the request cannot be placed on any branch of the thread).
    """
    users = [(message.id, message) for message in sent if message.role == "user"]
    if not users:
        return Placement()  # a continuation: tool outputs and answers only
    branch = _branch(conversation)
    turns = branch.turns
    known = {turn.id: at for at, turn in enumerate(turns) if turn.id is not None}
    first = next((n for n, (message_id, _) in enumerate(users) if message_id in known), None)
    if first is None:  # none of them is known: all new (a new thread, or only the newest sent)
        return Placement(new=tuple(message for _, message in users))
    start = known[users[first][0]]  # type: ignore[index]
    shared = 0
    for message_id, message in users[first:]:
        at = start + shared
        if at == len(turns) or turns[at].id != message_id:
            break
        if not _same(turns[at].message, message):  # an edit: branch just before it
            rewind, again = turns[at].rewind_before()
            rest = tuple(m for _, m in users[first + shared:])
            declined = tuple(entry for _, entry in turns[at].declines)
            return Placement(rewind, (*again, *rest), "edit", declined)
        shared += 1
    rest_sent = users[first + shared:]
    for message_id, _ in rest_sent:
        if message_id in known:
            raise RequestError(409, f"message {message_id!r} is in the thread, but not after "
                                    "the messages sent before it; send the thread's messages "
                                    "in its order (GET the thread to see them)", "messages")
    last = turns[start + shared - 1]
    answered = start + shared < len(turns) or branch.answered(last)
    if not rest_sent and answered and sent[-1].role == "user":
        rewind, again = last.rewind_after(branch.entries[last.index])
        return Placement(rewind, again, "regenerate")  # the run answers it again
    return Placement(new=tuple(message for _, message in rest_sent))


@dataclass
class _Branch:
    """The conversation's current branch: its user messages, oldest first; the messages of each
    history entry that holds some (by index); and the indices of the entries still in it."""

    turns: list[_Turn]
    entries: dict[int, tuple[Message, ...]]
    live: list[int]

    def answered(self, turn: _Turn) -> bool:
        """Whether the model said anything after `turn` in this branch."""
        after = self.entries.get(turn.index, ())[len(turn.before) + 1:]
        if any(message.role != "user" for message in after):
            return True
        declines = {index for index, _ in turn.declines}
        return any(index > turn.index and index not in self.entries and index not in declines
                   for index in self.live)


def _branch(conversation: State) -> _Branch:
    branch = _Branch([], {}, [])
    typed_over: _Turn | None = None  # the last user message, while only results follow it
    for index, entry in enumerate(conversation.history):
        if isinstance(entry, ContextChangeEntry) and isinstance(entry.content, Restored):
            length = entry.content.history_length
            branch.turns = [turn for turn in branch.turns if turn.index < length]
            branch.live = [at for at in branch.live if at < length]
            for turn in branch.turns:
                turn.declines[:] = [(at, e) for at, e in turn.declines if at < length]
            typed_over = None
            continue
        if isinstance(entry, ToolResultEntry) and typed_over is not None:
            typed_over.declines.append((index, entry))  # a call it was typed over, declined
        elif entry.kind not in ("run_start", "context_change"):
            typed_over = None
        if entry.kind in ("model_reply", "tool_result"):
            branch.live.append(index)
        elif isinstance(entry, ImportEntry):
            branch.entries[index] = entry.content
            branch.live.append(index)
            for n, message in enumerate(entry.content):
                if message.role == "user" and not message.content.startswith(NOTICE_PREFIX):
                    shown = user_message_id(conversation.id, message, index, n, "import")
                    branch.turns.append(_Turn(shown, message, index, entry.content[:n]))
        elif isinstance(entry, UserMessageEntry):  # (never a notice: that is a NoticeEntry)
            branch.entries[index] = (entry.content,)
            branch.live.append(index)
            shown = user_message_id(conversation.id, entry.content, index, 0, "user")
            branch.turns.append(_Turn(shown, entry.content, index))
            typed_over = branch.turns[-1]
    return branch


def check_message_ids(sent: Sequence[Message]) -> None:
    """Refuse user message ids a client cannot mean: longer than `MAX_MESSAGE_ID`, or given to
    two of the request's messages (clients merge the messages of one id into one).

    Raises:
        RequestError: 422 naming the id.
    """
    seen: set[str] = set()
    for message_id in (message.id for message in sent if message.role == "user"):
        if message_id is None:
            continue
        if len(message_id) > MAX_MESSAGE_ID:
            raise RequestError(422, f"a message id is {len(message_id):,} characters long; "
                                    f"give each message an id of at most {MAX_MESSAGE_ID}",
                               "messages")
        if message_id in seen:
            raise RequestError(422, f"message id {message_id!r} is the id of two of the "
                                    "request's messages: give each message an id of its own",
                               "messages")
        seen.add(message_id)


def _same(kept: Message, sent: Message) -> bool:
    """Whether a client's user message says what the kept one says (its text and attachments)."""
    return (kept.content, kept.images, kept.files) == (sent.content, sent.images, sent.files)
