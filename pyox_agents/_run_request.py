"""What a client asks for, in the runtime's terms: the `RunRequest` a protocol adapter makes of a
request, and the `RequestError` that refuses one before any stream (an HTTP status and the field).

Below both the adapters (which make these) and the service (which runs them): plain data, and
`run_tag`, the run's name in the ids a reader resumes after.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, get_args

from pyox_agents._errors import PyoxError
from pyox_agents.models.base import ToolSpec
from pyox_agents.state.messages import Message

__all__ = ["Busy", "Decision", "RequestError", "RunRequest", "ToolOutput", "run_tag"]


def run_tag(run_id: str) -> str:
    """The tag of run `run_id` in its streams' SSE ids (8 hex digits, the same on every process):
    an id a reader comes back with names the run it was reading, so it never resumes another
    run of the thread at that index."""
    return hashlib.blake2b(run_id.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()


class RequestError(PyoxError, ValueError):
    """A request the server refuses before any stream: `status` and a message naming the field."""

    def __init__(self, status: int, message: str, field: str | None = None,
                 headers: Mapping[str, str] | None = None,
                 details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.field = field
        self.headers = dict(headers or {})
        self.details = dict(details or {})
        """More of the refusal as JSON (a refused edit: the thread's current version)."""


class Busy(RequestError):
    """A run is already active on the thread (HTTP 409)."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(409, f"a run is already active on thread {thread_id!r}; wait for it to "
                              f"finish, or stop it (POST /agents/<name>/ag-ui/{thread_id}/stop, "
                              f"or .../ai-sdk/{thread_id}/stop)")


DoubleTexting: TypeAlias = Literal["reject", "enqueue", "interrupt"]
"""What a message does that comes while a run is going on its thread: wait for the run's end
("enqueue"), be refused ("reject", 409), or stop the run at its next step ("interrupt")."""


def read_double_texting(value: Any, where: str) -> DoubleTexting | None:
    """A request's double-texting choice (`where` names its field), or None when it has none.

    Raises:
        RequestError: 422 naming `where`, for a value that is none of the three.
    """
    if value is None:
        return None
    if value not in get_args(DoubleTexting):
        raise RequestError(422, f"{where} is {value!r}: send \"reject\", \"enqueue\" or "
                                "\"interrupt\" (what a message does while a run is going)",
                           where)
    return value  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """The client's result for a call of one of its own tools."""

    call_id: str
    content: Any
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Decision:
    """A person's answer to an approval request the server issued (`request_id`).

    `dismissed` is a request set aside unanswered (AG-UI's resume status "cancelled", sent by a
    page that regenerates, edits or types over it), as opposed to a person's explicit "no"."""

    request_id: str
    approve: bool
    answer: Any = None
    arguments: Mapping[str, Any] | None = None
    dismissed: bool = False


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What a client asks for, in the runtime's terms.

    `messages` is what the client sent of its conversation (each user message with the
    client's id, `Message.id`); it starts the thread when the server has no record of it, and
    is otherwise placed in the thread by the service's rule (appended, or a branch for an edit
    or a regenerate). `state` is the client's shared state (None: it sent none); `state_seen`
    the state the client says it last received from the server, when its protocol echoes it
    (the AI SDK's `data-state` part), else None; `saw_thread` whether the client has received
    this thread's state before (a fresh page has not: its `{}` means "nothing yet", not
    "cleared"). `part_paths` names where each image and file of `messages` was in the request
    ((message index, "images" or "files", index) -> "messages[2].content[1]"), for errors.
    `double_texting` is what the request does if a run is going on its thread ("reject",
    "enqueue", "interrupt"; None: the agent's choice). `state_version` is the number of the
    version the client's state was made on, when it says (the AI SDK's `data-state-version`
    part, AG-UI's `forwardedProps.stateVersion`): its edits are taken against exactly that
    version, with no guess.
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
    forwarded_props: Any = None
    part_paths: Mapping[tuple[int, str, int], str] = field(default_factory=dict)
    double_texting: DoubleTexting | None = None
    state_version: int | None = None
