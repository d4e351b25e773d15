"""What a failure becomes for each who reads it: its whole account (secrets hidden) for the
server's log and the run's record, a public text for the model, the client and the thread.

- A model's or a store's error ends the run: `run_error` gives the run's `AgentError`, its
  `message` the error's own words, its `public` what a client reads (no URL, no driver text).
- A bug (in a hook or in pyox-agents) ends the run with `internal_error`: logged with its
  traceback; clients read a fixed message.
- A tool's exception becomes the call's error result: `tool_failure` gives the text the model
  and the client read and the detail the run's record keeps. A `ToolError` (the tool's own,
  or the library's refusals: arguments that do not fit, a value that is not JSON, a state the
  tool may not change) is shown by its `public_message`; any other exception by its type only,
  its text and traceback logged; so is a `SystemExit` or a `KeyboardInterrupt` a tool raises,
  which fails that call, not the process.
"""

from __future__ import annotations

import logging
import traceback

from pyox_agents._errors import PyoxError
from pyox_agents._redact import redact_text
from pyox_agents.models.base import ModelError
from pyox_agents.runtime._replies import valid_text
from pyox_agents.state.run import AgentError
from pyox_agents.tools import ToolError

__all__ = ["StoreError", "internal_error", "request_failure", "run_error", "tool_failure"]

_log = logging.getLogger(__name__)


class StoreError(PyoxError, RuntimeError):
    """Saving a run's record failed (the disk, the database); the run cannot go on safely.

    `code` is the run's error code: "store_unavailable" when the store could not be reached
    or written (`StoreUnavailable`: try again later), else "store_error". The message quotes
    the store's own (its secrets hidden) for the server's log and the run's record; a client
    reads `public_message`, which names no store.
    """

    def __init__(self, message: str, code: str = "store_error") -> None:
        super().__init__(redact_text(message))
        self.code = code

    @property
    def public_message(self) -> str:
        """What a client is shown: that the record was not saved, and what to do."""
        if self.code == "store_unavailable":
            return ("the run's record could not be saved: the store is unreachable; try again "
                    "in a few seconds")
        return "the run's record could not be saved; the server's log has the details"


def run_error(exc: ModelError | StoreError, run_id: str) -> AgentError:
    """The error of a run that `exc` ended: its words for the record, logged, and the public
    message for clients."""
    message, public = redact_text(str(exc)), exc.public_message
    if public == message:
        return AgentError(exc.code, message)
    _log.warning("run %s failed (%s): %s", run_id, exc.code, message)
    return AgentError(exc.code, message, public)


def internal_error(exc: BaseException, run_id: str) -> AgentError:
    """The error of a run a bug (in a hook or in pyox-agents) ended: logged with its traceback,
    its text (secrets hidden) for the run's record; a client reads a fixed message."""
    _log.error("run %s failed with an internal error", run_id, exc_info=exc)
    return AgentError("internal_error", redact_text(f"{type(exc).__name__}: {exc}"))


def request_failure(exc: BaseException) -> str:
    """What a conversation keeps of a model request that failed: a model's public message,
    else the exception's type only (its text is in the run's record and the log)."""
    if isinstance(exc, ModelError):
        return f"{type(exc).__name__}: {exc.public_message}"
    return type(exc).__name__ if str(exc) else "cancelled"


def tool_failure(exc: BaseException, tool: str, call_id: str) -> tuple[str, str]:
    """(What the model and the client read, what the run's record keeps) of the exception a
    tool raised. What is not shown is logged: an unexpected exception with its traceback; one
    that is not an `Exception` (`SystemExit`, `KeyboardInterrupt`) as an error, since it
    would have ended the process."""
    if isinstance(exc, ToolError):
        public, detail = exc.public_message, redact_text(str(exc))
        told = detail if public != str(exc) else None
    else:
        public = (f"the tool failed with an unexpected {type(exc).__name__}; the server's log "
                  "has the details")
        detail = redact_text(f"{type(exc).__name__}: {exc}")
        told = redact_text("".join(traceback.format_exception(exc)))
    if told is not None and not isinstance(exc, Exception):
        _log.error("tool %s (call %s) raised %s, which would have ended the process; it "
                   "failed that call instead: %s", tool, call_id, type(exc).__name__,
                   valid_text(told))
    elif told is not None:
        _log.warning("tool %s (call %s) failed: %s", tool, call_id, valid_text(told))
    return valid_text(public), valid_text(detail)
