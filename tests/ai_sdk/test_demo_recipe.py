"""The demo agent's slow tool over the AI SDK stream: live progress, a source, then the answer."""

from __future__ import annotations

import pytest

from pyox_agents.demo import _recipes, demo_agents

from .helpers import body, check_stream_rules, run_chunks, user

pytestmark = pytest.mark.anyio


async def test_find_a_recipe_shows_progress_cites_its_source_and_answers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_recipes, "STEP_SECONDS", 0)
    agent = demo_agents()["demo"]
    chunks, _ = await run_chunks(agent, body(user("find a recipe for pancakes"),
                                             state={"todos": [], "cart": [], "orders": []}))
    check_stream_rules(chunks)
    progress = [c for c in chunks if c["type"] == "data-search"]
    assert [p["data"]["done"] for p in progress] == [1, 2, 3]
    assert len({p["id"] for p in progress}) == 1
    (source,) = [c for c in chunks if c["type"] == "source-url"]
    assert source["url"] == "https://en.wikipedia.org/wiki/Pancakes"
    text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    assert text == "Here is a recipe for pancakes: flour, milk, eggs, butter."
