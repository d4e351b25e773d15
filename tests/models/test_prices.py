"""The price table: known models cost what it says, unknown ones nothing, users extend it."""

from __future__ import annotations

import pytest

from pyox_agents.models.prices import PRICES, cost_of, price_of, register_price


def test_a_registered_price_prices_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pyox_agents.models.prices.PRICES", dict(PRICES))
    register_price("my-model", 1.0, 4.0)
    assert cost_of("my-model", 1_000_000, 500_000) == pytest.approx(3.0)


def test_a_dated_snapshot_is_priced_as_its_family() -> None:
    assert price_of("gpt-5-mini-2025-08-07") == PRICES["gpt-5-mini"]
    assert price_of("gpt-5-2025-08-07") == PRICES["gpt-5"]  # not gpt-5-mini's


def test_an_unknown_model_costs_nothing() -> None:
    assert price_of("llama3.2") is None
    assert cost_of("llama3.2", 10_000, 10_000) == 0.0


def test_a_negative_price_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot be negative"):
        register_price("my-model", -1.0, 4.0)
