"""A person's answer to a paused run, checked before the run resumes: an answer for the
request it waits for, for the arguments it was asked about, that its tool accepts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyox_agents.state._schemas import answer_problems
from pyox_agents.state.frozen import freeze
from pyox_agents.state.run import RunState
from pyox_agents.tools import Tool, ToolArgumentsError

__all__ = ["check_answer"]


def check_answer(run: RunState, tools: Mapping[str, Tool], approve: bool | None, answer: Any,
                 edited: Mapping[str, Any] | None, request_id: str | None,
                 hash_: str | None) -> None:
    """Check that `run` can resume with this answer (`Agent.resume`'s arguments).

    Raises:
        ValueError: the run has ended; it waits for a person and `approve` is missing, or it
            does not and `approve` is given; the request id or argument hash is not the
            pending request's; the edited arguments do not fit the tool; `answer` is not JSON,
            or (approved) does not match the schema of the question it answers.
    """
    if run.done:
        raise ValueError(
            f"run {run.run_id[:12]} has ended ({run.status.value}); start a new run on its "
            "conversation instead")
    request = run.pending
    if request is None:
        if approve is not None:
            raise ValueError(f"run {run.run_id[:12]} is not waiting for a person; resume it "
                             "without approve=")
    else:
        if approve is None:
            raise ValueError(
                f"run {run.run_id[:12]} waits for a person ({request.prompt!r}): resume it with "
                "approve=True or approve=False (and answer=... if asked a question)")
        if request_id is not None and request_id != request.id:
            raise ValueError(
                f"approval {request_id!r} was not issued for run {run.run_id[:12]}: its pending "
                f"request is {request.id!r}")
        if hash_ is not None and hash_ != request.arguments_hash:
            raise ValueError(
                f"the arguments hash does not match the pending request {request.id!r} of "
                f"run {run.run_id[:12]}: the approval was for other arguments")
        if edited is not None:
            tool = tools.get(request.tool)
            if tool is None:
                raise ValueError(f"run {run.run_id[:12]} waits on tool {request.tool!r}, which "
                                 "this Agent does not have")
            try:
                tool.validate(edited)
            except ToolArgumentsError as exc:
                raise ValueError(f"edited_arguments: {exc}") from None
        freeze(answer, "answer")
        if approve and request.schema is not None:
            problems = answer_problems(answer, request.schema)
            if problems:
                raise ValueError(f"the answer to {request.prompt!r} does not match its schema: "
                                 f"{'; '.join(problems)}; send an answer that does")
