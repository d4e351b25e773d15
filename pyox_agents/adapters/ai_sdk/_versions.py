"""What each `ai` major accepts (the `uiMessageChunkSchema` of `ai` 5.0, 6.0 and 7.0): an
unknown chunk type, or an unknown `finishReason`, fails the whole request on the client.

- approval request: ai 6 and 7 `tool-approval-request` (7 adds `reason`, the request's
  prompt); ai 5, which has no approval parts, a persistent `data-approval-request` part whose
  id is the approval id, data `{approvalId, toolCallId, toolName, input, prompt}`, answered with
  the `approvals: [{id, approved, reason?}]` body field.
- a call a person refused: ai 6 and 7 `tool-output-denied`; ai 5 `tool-output-error`.
- a run stopped (server `stop`): `abort` (`reason` from ai 6), then finish `interrupted` on
  ai 7, `other` on 5 and 6.
- a run paused (approval, client tools to run): finish `tool-calls`; answered: `stop`; stopped
  by a limit or a permission: `other`; failed: a transient `data-run-error{code, message}`,
  `error{errorText: message}`, then finish `error` (the message and code AG-UI's RUN_ERROR has;
  an internal error's exception text stays in the server's log and the run's record).
- a tool's live parts: `data-<name>` (`id?`, `transient?`), `source-url`, `source-document`,
  `file`, `tool-output-available{preliminary: true}` and `messageMetadata` on `start` and
  `finish` are in all three majors (checked against each major's schema by the e2e tests).

`finishReason: "unknown"` (5 only) and the 7-only types (`reset-step`, `custom`,
`reasoning-file`, `steering-message`, `tool-approval-response`) are never written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyox_agents.events import RunFailed, RunFinished
from pyox_agents.state.run import ApprovalRequest
from pyox_agents.state.stopped import StoppedByFinish

__all__ = ["CHUNK_TYPES", "FINISH_REASONS", "STOPPED", "approval_request_part", "finish_reason"]

_COMMON = frozenset({
    "start", "start-step", "finish-step", "text-start", "text-delta", "text-end",
    "reasoning-start", "reasoning-delta", "reasoning-end", "tool-input-start", "tool-input-delta",
    "tool-input-available", "tool-input-error", "tool-output-available", "tool-output-error",
    "source-url", "source-document", "file", "error", "finish", "abort", "message-metadata",
})
_SIX = _COMMON | {"tool-approval-request", "tool-output-denied"}

CHUNK_TYPES: Mapping[int, frozenset[str]] = {
    5: _COMMON,
    6: _SIX,
    7: _SIX | {"tool-approval-response", "custom", "reasoning-file", "steering-message",
               "reset-step"},
}
"""Chunk types each `ai` major accepts (besides `data-*`); this adapter writes a subset."""

_REASONS = frozenset({"stop", "length", "content-filter", "tool-calls", "error", "other"})
FINISH_REASONS: Mapping[int, frozenset[str]] = {5: _REASONS | {"unknown"}, 6: _REASONS,
                                                7: _REASONS | {"interrupted"}}
"""`finish.finishReason` values each `ai` major accepts; "unknown" is never written."""

STOPPED = "the run was stopped"
"""The reason a stopped run's open parts and its `abort` carry."""


def finish_reason(event: RunFinished | RunFailed, sdk_version: int) -> str:
    """The `finishReason` of the `finish` chunk that ends a run, for an `ai` major."""
    if isinstance(event, RunFailed):
        return "error"
    if event.outcome == "cancelled":
        return "interrupted" if sdk_version >= 7 else "other"
    if event.outcome == "interrupt" or event.pending_call_ids:
        return "tool-calls"  # the client answers (approval) or runs the tools, then continues
    if event.stopped is not None and not isinstance(event.stopped, StoppedByFinish):
        return "other"
    return "stop"


def approval_request_part(request: ApprovalRequest) -> dict[str, Any]:
    """The `data-approval-request` part that asks an ai 5 client, which has no approval parts,
    to approve `request` (it answers with the `approvals` body field)."""
    return {"type": "data-approval-request", "id": request.id, "data": {
        "approvalId": request.id, "toolCallId": request.call_id, "toolName": request.tool,
        "input": dict(request.arguments), "prompt": request.prompt}}
