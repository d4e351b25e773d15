"""The demo's offline model can take as long as a real one: a person edits while it works."""

from __future__ import annotations

import argparse
import time

import pytest

from pyox_agents.demo import demo_agents
from pyox_agents.models import DemoModel
from pyox_agents.models.base import ModelRequest, TextChunk
from pyox_agents.server._cli_values import pace_of
from pyox_agents.state.messages import Message

pytestmark = pytest.mark.anyio


async def _first_and_last(model: DemoModel) -> tuple[float, float, int]:
    started = time.perf_counter()
    first, words = None, 0
    async for chunk in model.stream(ModelRequest([Message.user("hello")], [])):
        if isinstance(chunk, TextChunk):
            words += 1
            first = first if first is not None else time.perf_counter() - started
    assert first is not None
    return first, time.perf_counter() - started, words


async def test_a_paced_reply_thinks_then_spreads_its_words() -> None:
    """Rule: `DemoModel(pace=s)` waits two thirds of `s` before its first word and spreads
    the rest over its words (sleeps are lower bounds: the reply never comes sooner)."""
    first, whole, words = await _first_and_last(DemoModel(pace=0.3))
    assert words > 3 and first >= 0.2 and whole >= 0.3


async def test_the_default_model_answers_at_once_and_the_demo_command_paces_it() -> None:
    """Rule: the library's DemoModel and `demo_agents()` answer at once (tests); the `demo`
    command paces its model (1.5 s by default, `--pace 0` at once)."""
    assert DemoModel().pace == 0 and demo_agents()["demo"].model.pace == 0  # type: ignore[union-attr]
    paced = demo_agents(pace=1.5)
    assert {agent.model.pace for agent in paced.values()  # type: ignore[union-attr]
            if isinstance(agent.model, DemoModel)} == {1.5}
    assert pace_of("0") == 0 and pace_of("2.5") == 2.5
    for bad in ("-1", "x", "61"):
        with pytest.raises(argparse.ArgumentTypeError, match=r"--pace 1\.5"):
            pace_of(bad)
    with pytest.raises(ValueError, match="from 0"):
        DemoModel(pace=-1)
