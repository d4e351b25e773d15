"""The root of the library's errors, `PyoxError` (catch it to catch any of them, as one catches
`httpx.HTTPError`), and `ToolError`: the one kind of exception whose text a tool call shows the
model and the person.

Every other exception a tool raises is shown by its type only; its text (a connection string, a
file path, a key) goes to the server's log and the run's record. The library's own refusals
inside a tool (arguments that do not fit, a value that is not JSON, a state the tool may not
change, a misused `ctx`) are `ToolError`s too, their messages written to be read. Here, below
every layer, so that each of them can raise one; `pyox_agents.ToolError` is this class. Each of
the library's errors keeps the builtin class it always had as a second base (`StoreConflict` is a
`ValueError` too), so an `except ValueError` written for it still catches it.
"""

from __future__ import annotations

__all__ = ["PyoxError", "ToolError", "ungrouped"]


class PyoxError(Exception):
    """The base of every error pyox-agents raises on purpose (a refused request, a store that is
    away, a model that failed, a tool's own error, a state conflict...): `except PyoxError`
    catches any of them, and lets bugs through."""


class ToolError(PyoxError):
    """Raise it in a tool with a message meant for the model and the person: that message is
    shown as is (the model reads it as the call's result, the person sees it as the tool's
    error, the thread keeps it).

    Any other exception a tool raises is shown only by its type ("the tool failed with an
    unexpected ValueError; the server's log has the details"): its text may quote a
    connection string, a file path or a key, so it goes to the server's log and the run's
    record only. `raise ToolError("no flight on 3 May; ask for another date")`.

    With `public_message`, that is shown instead and `message` stays on the server (the log,
    the run's record): for an error whose words must not reach a browser.
    """

    def __init__(self, message: str, *, public_message: str | None = None) -> None:
        super().__init__(message)
        self.public_message = message if public_message is None else public_message
        """What the model and the person read."""


def ungrouped(exc: BaseException) -> BaseException:
    """The exception behind task groups' exception groups (the first of each), or `exc`."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
