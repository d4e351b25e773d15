"""What model tokens cost: a small price table the providers use to fill `Usage.cost`.

Prices are US dollars per million tokens, (input, output), as the providers list them for
standard (non-batch, uncached) use. They change: check the provider's pricing page and use
`register_price` for your models, your negotiated prices, or models missing here. A model with no
price costs 0, so local models (Ollama, vLLM, llama.cpp) are free by default.
"""

from __future__ import annotations

from pyox_agents.state.messages import Usage

__all__ = ["PRICES", "cost_of", "price_of", "priced_usage", "register_price"]

PRICES: dict[str, tuple[float, float]] = {
    # OpenAI
    "gpt-5": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.0),
    "gpt-4o-mini": (0.15, 0.60),
    "o3": (2.0, 8.0),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    # Anthropic
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.80, 4.0),
}
"""Model name → (input $ per million tokens, output $ per million tokens). Edit freely."""


def register_price(model: str, input: float, output: float) -> None:
    """Set what `model` costs, in $ per million input and output tokens.

    The name is matched exactly, or as the start of a longer name ("gpt-5-mini" prices
    "gpt-5-mini-2025-08-07"); the longest match wins.

    Raises:
        ValueError: a price is negative.
    """
    if input < 0 or output < 0:
        raise ValueError(
            f"register_price({model!r}, {input}, {output}): prices are $ per million tokens "
            "and cannot be negative")
    PRICES[model] = (float(input), float(output))


def price_of(model: str) -> tuple[float, float] | None:
    """The (input, output) price of `model` per million tokens, or None when unknown."""
    if model in PRICES:
        return PRICES[model]
    longest = max((known for known in PRICES if model.startswith(known + "-")), key=len,
                  default=None)
    return PRICES[longest] if longest is not None else None


def cost_of(model: str, input_tokens: int, output_tokens: int) -> float:
    """What `input_tokens` and `output_tokens` of `model` cost in dollars; 0 when unpriced."""
    price = price_of(model)
    if price is None:
        return 0.0
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


def priced_usage(model: str, input_tokens: int, output_tokens: int) -> Usage:
    """One request's `Usage`, with its cost from the price table."""
    return Usage(input_tokens=input_tokens, output_tokens=output_tokens, requests=1,
                 cost=cost_of(model, input_tokens, output_tokens))
