"""A run's audit log: records chained by SHA-256, so any edit, deletion or reordering shows.

Each record is `{seq, at, kind, data, prev, digest}` where `digest = sha256(prev + canonical JSON
of the record without its digest)` and `prev` is the digest of the record before (64 zeros for
the first). The run's `RunState.audit_head = {"seq", "digest"}` names the last record, so a log
cut short is caught too, and a resumed run continues the same chain.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Mapping, Sequence
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any, Protocol

from pyox_agents._errors import PyoxError

__all__ = [
    "GENESIS",
    "AuditError",
    "audit_record",
    "canonical_json",
    "verify_audit",
    "verify_chain",
]

GENESIS = "0" * 64
"""The `prev` of a run's first audit record."""


class AuditError(PyoxError, ValueError):
    """The audit log of a run was edited, cut short, reordered, or has records missing."""


def canonical_json(value: Any) -> str:
    """The one JSON text of `value` that digests are computed over (sorted keys, no spaces)."""
    if _C_CANONICAL is None:
        return _CANONICAL.encode(value)
    return "".join(_C_CANONICAL(value, 0))


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                              allow_nan=False)
"""`json.dumps` with these options, built once rather than per record."""

_C_CANONICAL: Any = None if c_make_encoder is None else c_make_encoder(
    None, _CANONICAL.default, encode_basestring, None, ":", ",", True, False, False)
"""The same encoder's C core, built once: `JSONEncoder.encode` builds one per call, with a dict
for cycle checks (a cycle here ends in RecursionError instead, as JSON values have none)."""


def _digest(prev: str, body: Mapping[str, Any]) -> str:
    return hashlib.sha256((prev + canonical_json(body)).encode()).hexdigest()


def audit_record(head: Mapping[str, Any] | None, kind: str, data: Any,
                 at: datetime.datetime | None = None) -> dict[str, Any]:
    """The record that follows `head` (a run's `audit_head`, or None for the first)."""
    when = (at or datetime.datetime.now(datetime.UTC)).isoformat()
    prev = str(head["digest"]) if head else GENESIS
    body = {"seq": int(head["seq"]) + 1 if head else 0, "at": when, "kind": kind, "data": data,
            "prev": prev}
    return {**body, "digest": _digest(prev, body)}


def verify_chain(run_id: str, records: Sequence[Mapping[str, Any]], head: Mapping[str, Any] | None
                 ) -> None:
    """Check `records` (in stored order) against each other and against the run's `head`.

    Raises:
        AuditError: naming the first bad record and what is wrong with it.
    """
    prev = GENESIS
    for position, record in enumerate(records):
        where = f"audit record {position} of run {run_id[:12]}"
        seq = record.get("seq")
        if seq != position:
            raise AuditError(
                f"{where} has seq {seq}: a record before it was deleted, or the records were "
                "reordered")
        if record.get("prev") != prev:
            raise AuditError(f"{where} does not follow the record before it (prev differs)")
        body = {key: value for key, value in record.items() if key != "digest"}
        if record.get("digest") != _digest(prev, body):
            raise AuditError(f"{where} was edited: its digest does not match its content")
        prev = str(record["digest"])
    if head is None:
        if records:
            raise AuditError(f"run {run_id[:12]} has audit records but no audit_head")
        return
    last_seq = len(records) - 1
    if head.get("seq") != last_seq or head.get("digest") != (prev if records else None):
        raise AuditError(
            f"the audit log of run {run_id[:12]} ends at record {last_seq}, but the run's "
            f"audit_head names record {head.get('seq')}: records were removed from the end "
            "(or the head was changed)")


class _AuditSource(Protocol):
    def load_run_record(self, run_id: str) -> Mapping[str, Any]: ...

    def load_audit(self, run_id: str) -> list[Mapping[str, Any]]: ...


def verify_audit(store: _AuditSource, run_id: str) -> None:
    """Verify the audit log of run `run_id` in `store`, end to end.

    Raises:
        AuditError: the first record that is edited, missing, out of order, or a log cut short.
        LookupError: the store has no run `run_id`.
    """
    run = store.load_run_record(run_id)
    verify_chain(run_id, store.load_audit(run_id), run.get("audit_head"))
