"""Token and cost accounting per run: what each model call used, summed, priced by `ghost_eval.llm.pricing`."""

from __future__ import annotations

from dataclasses import dataclass

from ghost_eval.llm.pricing import cost_usd
from ghost_eval.run.identity import TokenUsage

__all__ = ["Usage"]


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
        return cost_usd(model, self.input_tokens, self.output_tokens)
