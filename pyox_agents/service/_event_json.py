"""Runtime events as JSON and back: how a run's events travel between server processes.

`event_to_json(event)` gives `{"type": "<class name>", ...fields}` with every value in JSON form;
`event_from_json(row)` rebuilds an equal event (a change's `NOT_KEPT` state is left out of the
row, and read back so). A process that follows a run another process executes (through a
store's event log) reads them back with this.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pyox_agents import events
from pyox_agents.state.frozen import freeze, thaw
from pyox_agents.state.messages import Usage
from pyox_agents.state.run import AgentError, ApprovalRequest
from pyox_agents.state.stopped import stopped_from_json, stopped_to_json

__all__ = ["event_from_json", "event_to_json"]

_TYPES: dict[str, type[Any]] = {
    name: kind for name in events.__all__ if isinstance(kind := getattr(events, name), type)
}


def event_to_json(event: events.RuntimeEvent) -> dict[str, Any]:
    """The JSON form of `event`: its class name as "type", then its fields."""
    row: dict[str, Any] = {"type": type(event).__name__}
    for item in dataclasses.fields(event):
        value = getattr(event, item.name)
        if value is events.NOT_KEPT:
            continue  # (a change logged as its delta alone: read back as NOT_KEPT)
        if isinstance(value, Usage | AgentError | ApprovalRequest):
            value = _plain(dataclasses.asdict(value))
        elif item.name == "stopped" and value is not None:
            value = thaw(stopped_to_json(value))
        elif isinstance(value, tuple):
            value = list(value)
        else:
            value = _plain(value)
        row[item.name] = value
    return row


def event_from_json(row: Mapping[str, Any]) -> events.RuntimeEvent:
    """The event `event_to_json` wrote as `row`.

    Raises:
        ValueError: `row` has an unknown "type" or fields that do not fit it.
    """
    kind = _TYPES.get(str(row.get("type")))
    if kind is None:
        raise ValueError(f"not a runtime event: type {row.get('type')!r}")
    values = {key: value for key, value in row.items() if key != "type"}
    if "usage" in values:
        values["usage"] = Usage(**values["usage"])
    if "error" in values and isinstance(values["error"], Mapping):
        values["error"] = AgentError(**values["error"])
    if "request" in values:
        values["request"] = ApprovalRequest(**values["request"])
    if values.get("stopped") is not None:
        values["stopped"] = stopped_from_json(values["stopped"])
    if "pending_call_ids" in values:
        values["pending_call_ids"] = tuple(values["pending_call_ids"])
    if "state" in values:
        values["state"] = freeze(values["state"])
    if kind is events.StateChanged and "state" not in values:
        values["state"] = events.NOT_KEPT
    try:
        event: events.RuntimeEvent = kind(**values)
    except TypeError as exc:
        raise ValueError(f"a {kind.__name__} event does not fit {sorted(values)}: {exc}") from None
    return event


def _plain(value: Any) -> Any:
    """A JSON-ready copy (frozen containers and mappings become plain dicts and lists)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
