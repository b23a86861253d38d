"""What a model call costs: one table of vendor list prices for the agent's runs and the judge's calls alike.

A model missing from the table has an unknown cost (None), never a guessed one. Stored runs and verdicts keep
the cost they recorded when the table changes.
"""

from __future__ import annotations

__all__ = ["PRICES_USD_PER_MTOK", "cost_usd", "price_of"]

PRICES_USD_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "gemini-3-pro": (2.0, 12.0),
    "gemini-2.5-pro": (1.25, 10.0),
    "gemini-2.5-flash-lite": (0.1, 0.4),
    "gemini-2.5-flash": (0.3, 2.5),
    "gemini-2.0-flash": (0.1, 0.4),
}
"""(input, output) list prices in USD per million tokens, keyed by model id prefix; the longest prefix wins."""


def price_of(model: str) -> tuple[float, float] | None:
    matches = [prefix for prefix in PRICES_USD_PER_MTOK if model.startswith(prefix)]
    return PRICES_USD_PER_MTOK[max(matches, key=len)] if matches else None


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    price = price_of(model)
    if price is None:
        return None
    return round((input_tokens * price[0] + output_tokens * price[1]) / 1_000_000, 6)
