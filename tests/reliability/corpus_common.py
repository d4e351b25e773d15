"""The shape of a corpus case (data only; the test in test_bad_requests.py runs them)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

INTERRUPT = "@INTERRUPT@"
"""Stands, in a body, for the id of the approval the seeded thread `ann-paused` waits for."""

TOKENS = {"tok-ann": "ann", "tok-bob": "bob"}
MAX_BODY = 64_000
STATE_BYTES = 4_000
MESSAGES = 50
RUNS_PER_PRINCIPAL = 2

BUGS = {
    "recursion": (
        "library bug: a deeply nested body makes json.loads raise RecursionError in "
        "parse_request (adapters/ag_ui_request.py and ai_sdk_request.py), which is not caught: 500"
    ),
    "surrogate_id": (
        "library bug: a lone surrogate escape (\\ud800) in the thread id reaches "
        "SQLiteStore.load_thread via RunService._owner; sqlite3 raises UnicodeEncodeError: 500"
    ),
    "surrogate_text": (
        "library bug: a lone surrogate escape (\\ud800) in a message is accepted; the run then "
        "fails to save it (UnicodeEncodeError) and the stream opens with RUN_ERROR/error "
        "instead of a 400 before any stream"
    ),
    "deep_state": (
        "library bug: a state nested ~300 levels deep is accepted and the run persisted, then "
        "ag_ui.encode_event cannot serialise STATE_SNAPSHOT (pydantic max depth) and the "
        "stream is cut with no terminal event"
    ),
}


@dataclass(frozen=True)
class Case:
    """One request, what it checks, and the status the server must answer."""

    id: str
    checks: str
    status: int
    body: bytes = b""
    token: str | None = "tok-ann"
    headers: dict[str, str] = field(default_factory=dict)
    method: str = "POST"
    path: str = ""
    """Defaults to the endpoint of the corpus (`/agents/todo/ag-ui` or `/agents/todo/ai-sdk`)."""
    setup: str = ""
    """"busy": a run of ann's holds thread `ann-busy`; "busy2": and another `ann-busy2`."""
    field: str | None = None
    """The `field` an AG-UI error body must name (None: not checked)."""
    bug: str | None = None
    """A key of BUGS: the case exposes a library bug and is an expected failure."""


def dumps(value: Any) -> bytes:
    """JSON bytes, as a client would send them (lone surrogates escaped, not encoded)."""
    return json.dumps(value).encode()


def nested(depth: int, leaf: str = "1") -> str:
    """JSON text of `depth` nested arrays around `leaf`."""
    return "[" * depth + leaf + "]" * depth
