"""Token and cost accounting per run: what each model call used, summed, priced from a published price list.

A model missing from the list has an unknown cost (None), never a guessed one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ghost_eval.identity import TokenUsage

__all__ = ["PRICES_USD_PER_MTOK", "Usage", "price_of"]

PRICES_USD_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "gemini-2.5-pro": (1.25, 10.0),
    "gemini-2.5-flash-lite": (0.1, 0.4),
    "gemini-2.5-flash": (0.3, 2.5),
}
"""(input, output) list prices in USD per million tokens, keyed by model id prefix; the longest prefix wins."""


def price_of(model: str) -> tuple[float, float] | None:
    matches = [prefix for prefix in PRICES_USD_PER_MTOK if model.startswith(prefix)]
    return PRICES_USD_PER_MTOK[max(matches, key=len)] if matches else None


@dataclass
class Usage:
    """Tokens used so far in a run, over every model call (retried calls that failed used none)."""

    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0

    def add(self, input_tokens: int, output_tokens: int) -> None:
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.calls += 1

    def token_usage(self) -> TokenUsage:
        return TokenUsage(prompt=self.input_tokens, completion=self.output_tokens, total=self.input_tokens + self.output_tokens)

    def cost_usd(self, model: str) -> float | None:
        price = price_of(model)
        if price is None:
            return None
        return round((self.input_tokens * price[0] + self.output_tokens * price[1]) / 1_000_000, 6)
