"""What a judge call costs: a small table of vendor list prices, so every verdict records its cost."""

from __future__ import annotations

__all__ = ["PRICES_PER_MILLION", "cost_usd"]

PRICES_PER_MILLION: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "gemini-3-pro": (2.0, 12.0),
    "gemini-2.5-pro": (1.25, 10.0),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.0-flash": (0.10, 0.40),
}
"""Model id prefix → (input, output) USD per million tokens, vendors' list prices when this table was written.
The longest matching prefix wins; update the table when prices change (old verdicts keep the cost they recorded)."""


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Cost of one call, or None when the model has no known price."""
    matches = [prefix for prefix in PRICES_PER_MILLION if model.startswith(prefix)]
    if not matches:
        return None
    price_in, price_out = PRICES_PER_MILLION[max(matches, key=len)]
    return (input_tokens * price_in + output_tokens * price_out) / 1_000_000
