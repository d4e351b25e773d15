"""A `StepRecord` checked and turned into JSON text before a backend writes it, and the checks
and errors every backend shares (an append that does not continue the thread, a missing id)."""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyox_agents.stores._records import StepRecord, StoreConflict


@dataclass(frozen=True, slots=True)
class EncodedRecord:
    """A `StepRecord` checked and turned into JSON text, before a backend touches anything.

    Both backends encode first, so a record that is not JSON, or has audit records without a
    run, fails the same way everywhere and changes nothing.
    """

    record: StepRecord
    entries: tuple[str, ...]
    run_id: str | None
    run: str | None
    audit: tuple[tuple[int, str], ...]
    shared_state: str | None
    created_at: str | None
    updated_at: str | None


def encode(record: StepRecord) -> EncodedRecord:
    """Check `record` and give the JSON text of each part.

    Raises:
        TypeError: a part is not JSON (a set, an object, a non-string key); the message says
            which part.
        ValueError: a part holds NaN or an infinity, the run has no `run_id`, audit records
            come without a run, or their `seq` values are not consecutive integers.
    """
    where = f"the step record of thread {record.thread_id!r}"
    entries = tuple(
        dumps(entry, f"{where}: entries[{i}]") for i, entry in enumerate(record.entries)
    )
    run_id = run = None
    if record.run is not None:
        run_id = record.run.get("run_id")
        if not isinstance(run_id, str) or not run_id:
            raise ValueError(f"{where}: its run has no run_id (got {run_id!r}); pass "
                             "RunState.to_dict()")
        run = dumps(record.run, f"{where}: run {run_id[:12]}")
    if record.audit and run_id is None:
        raise ValueError(f"{where}: it has audit records but no run; audit records belong to "
                         "a run, so pass the run's record with them")
    audit: list[tuple[int, str]] = []
    for i, item in enumerate(record.audit):
        seq = item.get("seq")
        if type(seq) is not int or (audit and seq != audit[-1][0] + 1):
            raise ValueError(f"{where}: audit[{i}] has seq {seq!r}; the audit records of one "
                             "step must have consecutive integer seq values, oldest first")
        audit.append((seq, dumps(item, f"{where}: audit[{i}]")))
    shared = None
    if record.shared_version is not None:
        shared = dumps(record.shared_state, f"{where}: shared state")
    return EncodedRecord(
        record=record,
        entries=entries,
        run_id=run_id,
        run=run,
        audit=tuple(audit),
        shared_state=shared,
        created_at=_at(record.entries[0]) if record.entries else None,
        updated_at=_at(record.entries[-1]) if record.entries else None,
    )


_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: Any, what: str) -> str:
    """`value` as compact JSON text; TypeError/ValueError naming `what` if it is not JSON.

    The text is UTF-8 (a lone surrogate in a string is written as its `\\udxxx` escape), so
    every backend stores what `MemoryStore` keeps, and loads it back the same.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        if not text.isascii() and _SURROGATE.search(text) is not None:
            # not UTF-8: written escaped, it loads back the same
            text = json.dumps(value, separators=(",", ":"), allow_nan=False)
        return text
    except TypeError as exc:
        raise TypeError(f"{what} is not JSON ({exc}): store only dicts, lists, str, int, "
                        "float, bool and None") from exc
    except ValueError as exc:
        raise ValueError(f"{what} is not JSON ({exc}): NaN and infinities have no JSON form; "
                         "store None or a string instead") from exc


def _at(entry: Mapping[str, Any]) -> str | None:
    at = entry.get("at")
    return at if isinstance(at, str) else None


def parse_time(text: str | None) -> datetime.datetime | None:
    """The datetime of an entry's saved `at` text, or None."""
    return datetime.datetime.fromisoformat(text) if text is not None else None


def check_append(held: int, record: StepRecord) -> None:
    """Refuse `record` unless its entries continue exactly what the store holds for the thread."""
    if record.first_seq != held:
        raise StoreConflict(
            f"thread {record.thread_id!r} has {held} saved history entries, but this write "
            f"continues from entry {record.first_seq}: another State with this id was saved "
            "meanwhile. Continue a saved State with store.load(id), not with a new State of the "
            "same id"
        )


def check_audit(next_seq: int, encoded: EncodedRecord) -> None:
    """Refuse `encoded` unless its audit records continue the run's saved ones at `next_seq`."""
    if encoded.audit and encoded.audit[0][0] != next_seq:
        raise StoreConflict(
            f"run {encoded.run_id!r} has {next_seq} saved audit records, but this write's first "
            f"audit record has seq {encoded.audit[0][0]}: another writer added to this run's "
            "audit log meanwhile, or the run was resumed from an old record; load the run again "
            "with load_run(run_id)"
        )


def step_refusal(encoded: EncodedRecord, fence: tuple[str, int] | None, outcome: str,
                 held: str) -> StoreConflict | None:
    """The StoreConflict a backend's refusal of a step stands for (it changed nothing):
    `outcome` names the check that failed ("entries", "audit", "fence" for a write fenced by
    the lease `fence`) and `held` what the store holds; None for any other outcome."""
    try:
        if outcome == "entries":
            check_append(int(held), encoded.record)
        elif outcome == "audit":
            check_audit(int(held), encoded)
    except StoreConflict as conflict:
        return conflict
    if outcome == "fence" and fence is not None:
        return StoreConflict(
            f"the lease of thread {fence[0]!r} is held by {_holder(held)}, not by token "
            f"{fence[1]}: another process may be running this thread, so this write was "
            "refused; stop this run, or acquire the lease again and reload the thread"
        )
    return None


def _holder(held: str) -> str:
    """Who holds a lease whose token is `held` ("" when it expired)."""
    return f"token {held}" if held else "nobody (it expired)"


def missing_thread(thread_id: str, where: str) -> LookupError:
    """The error of a load of a thread that is not saved."""
    return LookupError(f"no thread {thread_id!r} in {where}: save a State under this id first "
                       "(store.save(state)), or check the id with store.list_threads()")


def missing_run(run_id: str, where: str) -> LookupError:
    """The error of a load of a run that is not saved."""
    return LookupError(f"no run {run_id!r} in {where}: a run is saved with its first step; "
                       "check the run id (64 hexadecimal digits)")


def run_record(run_id: str, text: str | bytes | None, where: str) -> Mapping[str, Any]:
    """The run record a store kept as JSON `text`; LookupError when it has none (None)."""
    if text is None:
        raise missing_run(run_id, where)
    loaded: Mapping[str, Any] = json.loads(text)
    return loaded


def stale_keeper(thread_id: str, token: int, held: str) -> StoreConflict:
    """The refusal of a kept-state write whose lease token is not the holder's (`held`, or ""
    when the lease expired): the thread passed on to another process, whose state stands."""
    return StoreConflict(
        f"the lease of thread {thread_id!r} is held by {_holder(held)}, not by token {token}: "
        "another process may have taken this thread over, so its kept state was left as that "
        "process wrote it; this process's run of it is stale"
    )


def no_leases(store: object, token: int | None) -> None:
    """Refuse a lease `token` given to a store that has no leases (nothing to fence with)."""
    if token is not None:
        raise NotImplementedError(
            f"{type(store).__name__} has no leases, so it cannot fence a kept-state write by "
            f"token {token}; call write_kept_state without a token, or share runs through a "
            "store with leases (RedisStore, PostgresStore)")


def milliseconds(seconds: float, name: str) -> int:
    """`seconds` in whole milliseconds (at least 1)."""
    if not seconds > 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {seconds!r}")
    return max(1, round(seconds * 1000))
