"""A pydantic `ValidationError` as the problems a person (or a model) reads: `where: what`.

Every place that validates input against a pydantic type (a tool's arguments, `state_type`, an
`ask(returns=...)` answer, a request body) words its errors through here, so they read alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pydantic

__all__ = ["describe_problems", "dotted", "validation_problems"]


def dotted(loc: Sequence[int | str]) -> str:
    """A pydantic error location as a dotted path: `todos.2.text` (`''` for the value itself)."""
    return ".".join(str(part) for part in loc)


def validation_problems(exc: pydantic.ValidationError, *, root: str,
                        location: Callable[[Sequence[int | str]], str] = dotted,
                        say: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """Each error of `exc` as `(where, what)`, in pydantic's order.

    `where` is `location(loc)`, or `root` (such as "state", "arguments") when that is empty;
    `what` is pydantic's message, or `say[type]` where the caller words an error type itself
    (a tool says "no such argument" for `extra_forbidden`).
    """
    words = say or {}
    return [
        (location(error["loc"]) or root, words.get(error["type"], error["msg"]))
        for error in exc.errors()
    ]


def describe_problems(exc: pydantic.ValidationError, *, root: str,
                      say: Mapping[str, str] | None = None) -> str:
    """The errors of `exc` as one line: `where: what; where: what` (see `validation_problems`)."""
    problems = validation_problems(exc, root=root, say=say)
    return "; ".join(f"{where}: {what}" for where, what in problems)
