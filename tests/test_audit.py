"""The audit log: a SHA-256 chain whose every break is caught and named."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyox_agents.state.audit import (
    AuditError,
    audit_record,
    canonical_json,
    verify_audit,
    verify_chain,
)
from pyox_agents.state.run import RunState
from pyox_agents.stores import MemoryStore, SQLiteStore, StepRecord, Store

RUN_ID = "cd" * 32


def chain(length: int) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for i in range(length):
        head = {"seq": records[-1]["seq"], "digest": records[-1]["digest"]} if records else None
        records.append(audit_record(head, "step", {"n": i}))
    return records


def head_of(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {"seq": records[-1]["seq"], "digest": records[-1]["digest"]}


def test_an_intact_chain_verifies() -> None:
    records = chain(4)
    verify_chain(RUN_ID, records, head_of(records))
    verify_chain(RUN_ID, [], None)


def test_an_edited_record_is_caught() -> None:
    records = chain(4)
    records[2] = {**records[2], "data": {"n": 99}}
    with pytest.raises(AuditError, match=r"audit record 2 .* was edited"):
        verify_chain(RUN_ID, records, head_of(records))


def test_a_deleted_record_is_caught() -> None:
    records = chain(4)
    del records[1]
    with pytest.raises(AuditError, match=r"audit record 1 .* has seq 2: a record before it was"):
        verify_chain(RUN_ID, records, head_of(records))


def test_reordered_records_are_caught() -> None:
    records = chain(4)
    records[1], records[2] = records[2], records[1]
    with pytest.raises(AuditError, match=r"audit record 1 .* has seq 2"):
        verify_chain(RUN_ID, records, head_of(records))


def test_a_truncated_log_is_caught_through_the_audit_head() -> None:
    records = chain(4)
    head = head_of(records)
    with pytest.raises(
        AuditError, match="ends at record 2, but the run's audit_head names record 3"
    ):
        verify_chain(RUN_ID, records[:3], head)


def test_a_rehashed_forgery_does_not_follow_the_chain() -> None:
    records = chain(3)
    forged = audit_record(None, "step", {"n": "forged"})
    forged["seq"] = 1
    records[1] = forged
    with pytest.raises(AuditError, match=r"audit record 1 .* does not follow"):
        verify_chain(RUN_ID, records, head_of(records))


@pytest.mark.parametrize("make_store", [MemoryStore, lambda: SQLiteStore(":memory:")])
def test_verify_audit_reads_the_run_and_its_records_from_a_store(make_store: Any) -> None:
    store: Store = make_store()
    records = chain(3)
    run = RunState(RUN_ID, "g", audit_head=head_of(records))
    store.write(StepRecord("t1", 0, run=run.to_dict(), audit=tuple(records)))
    verify_audit(store, RUN_ID)
    truncated = RunState(RUN_ID, "g", audit_head={"seq": 5, "digest": "x"})
    store.write(StepRecord("t1", 0, run=truncated.to_dict()))
    with pytest.raises(AuditError, match="audit_head names record 5"):
        verify_audit(store, RUN_ID)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(), lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


@given(_JSON)
def test_the_canonical_json_of_a_record_is_json_dumps_with_sorted_keys(value: Any) -> None:
    """Digests are over "the one JSON text of `value` ... (sorted keys, no spaces)": the
    encoder built once gives exactly what `json.dumps` with those options gives."""
    assert canonical_json(value) == json.dumps(value, sort_keys=True, separators=(",", ":"),
                                               ensure_ascii=False, allow_nan=False)


def test_canonical_json_refuses_what_json_has_no_text_for() -> None:
    for value in (float("nan"), {"a": [float("inf")]}, {"a": object()}):
        with pytest.raises((ValueError, TypeError)):
            canonical_json(value)
