"""What every history entry shares: when it was recorded (`utc_now`, a checked UTC `at`),
its JSON row, and the words of a request's purpose and a tool call's outcome."""

from __future__ import annotations

import datetime
from typing import Literal, cast, get_args

from pyox_agents.state.frozen import JSON

Purpose = Literal["think", "ask", "compact"]
"""Why a model request was made: a think (a turn), an `agent.ask`, or an `agent.compact`."""
PURPOSES = get_args(Purpose)


Outcome = Literal["ok", "error", "denied", "cancelled"]
"""How a tool call closed."""
OUTCOMES = get_args(Outcome)


def utc_now() -> datetime.datetime:
    """The current time, timezone-aware in UTC: the `at` of a new entry."""
    return datetime.datetime.now(datetime.UTC)


def check_at(entry: object) -> None:
    at = getattr(entry, "at", None)
    if not isinstance(at, datetime.datetime) or at.tzinfo is None:
        raise ValueError(f"a history entry's at must be a timezone-aware datetime, got {at!r}; "
                         f"use datetime.now(UTC)")
    if at.utcoffset() != datetime.timedelta(0) or at.tzinfo is not datetime.UTC:
        object.__setattr__(entry, "at", at.astimezone(datetime.UTC))


def entry_row(kind: str, at: datetime.datetime, content: object, **more: object) -> dict[str, JSON]:
    return cast(dict[str, JSON], {"kind": kind, "at": at.isoformat(), "content": content, **more})
