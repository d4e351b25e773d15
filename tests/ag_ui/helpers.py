"""Building inputs and reading outputs of the AG-UI adapter in tests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import anyio
from ag_ui.core import RunAgentInput

from pyox_agents.adapters.ag_ui import encode_event, translate
from pyox_agents.events import RuntimeEvent
from pyox_agents.models.base import ModelChunk, TextChunk

THREAD = "thread-1"
RUN = "client-run-1"


def run_input(**fields: Any) -> RunAgentInput:
    """A RunAgentInput with one user message, overridable field by field (wire names); it
    declares protocolVersion 1.0, as `@ag-ui/client` 1.0 does (`protocolVersion=None`: none)."""
    body: dict[str, Any] = {
        "threadId": THREAD,
        "runId": RUN,
        "protocolVersion": "1.0",
        "messages": [{"id": "u1", "role": "user", "content": "hello"}],
    }
    body.update(fields)
    body = {key: value for key, value in body.items() if value is not None}
    return RunAgentInput.model_validate(body)


async def _iterate(events: Iterable[RuntimeEvent]) -> AsyncIterator[RuntimeEvent]:
    for event in events:
        yield event


async def translated(events: Sequence[RuntimeEvent], given: RunAgentInput | None = None
                     ) -> list[dict[str, Any]]:
    """The AG-UI events (as the JSON the client receives) for hand-made runtime events."""
    return [json.loads(encode_event(event))
            async for event in translate(given or run_input(), _iterate(events))]


def types(events: Sequence[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def of_type(events: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in events if event["type"] == kind]


class GatedModel:
    """Streams "first ", waits for `gate`, then streams "second"."""

    name = "gated"

    def __init__(self, gate: anyio.Event) -> None:
        self.gate = gate

    async def stream(self, request: Any) -> AsyncIterator[ModelChunk]:
        yield TextChunk("first ")
        await self.gate.wait()
        yield TextChunk("second")
