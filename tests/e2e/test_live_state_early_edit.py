"""A person's edit made while the page's agent connects to its thread, or before the thread's
feed has brought its first version, is kept, on the real `@ag-ui/client` (1.0.0, and 0.0.59:
the one CopilotKit 1.74 bundles) with the live-state client's `connectingAgent` and
`followAgent`, on a slow network (a connect's answer reaches the page 600 ms late, the feed's
1.2 s; `tests/e2e/node/early_edit.mjs` says what the page does).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from pyox_agents.server import create_app
from pyox_agents.stores import MemoryStore
from tests.e2e.test_live_state_e2e import todo_agent

Serve = Callable[[Any], str]
RunNode = Callable[..., dict[str, Any]]


def texts(state: dict[str, Any]) -> list[str]:
    return [todo["text"] for todo in state.get("todos", [])]


@pytest.mark.parametrize("client", ["@ag-ui/client", "agui0059"])
def test_an_edit_made_while_the_page_connects_is_kept(serve: Serve, run_node: RunNode,
                                                      client: str) -> None:
    """Rule: what the connect brings does not replace the person's edit made meanwhile, and an
    edit made during a run or a connect before the thread's feed has a version reaches the
    server once it has one. A new thread's connect leaves the page's state alone (the server
    keeps none for it), and the first run starts the thread with the edit; an edit made during
    that run, before the feed's first version, is made again on the state the run ends with and
    sent with that version; a reloaded page's edit, made before the thread came back, is made
    again on the state the connect brings and sent once the feed has a version."""
    base = serve(create_app({"todo": todo_agent(pause=0.1)}, store=MemoryStore()))
    out = run_node("early_edit.mjs", base,
                   {"threadId": f"t-{uuid.uuid4().hex[:12]}", "client": client, "lag": 600},
                   timeout=60)
    assert out["errors"] == []
    assert texts(out["newThread"]["afterConnect"]) == ["Call mom"]
    assert out["newThread"]["versionAtEdit"] is None  # (the case the rule is about)
    assert "Call dad" in texts(out["reload"]["afterConnect"])
    assert out["reload"]["versionAfterConnect"] is None
    assert sorted(texts(out["server"])) == ["Call dad", "Call mom", "Call sis", "milk"]
    assert out["reload"]["quiet"] == out["reload"]["thread"] == out["server"]
