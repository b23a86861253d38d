"""Promptfoo assertion. Fix trials: the row's run graded by its latest stored lab trial (`1. fix resolves`,
`2. no collateral`, `fix durable`, `verification proves`; 1 = good). Reads stored verdicts only: no lab needed to view them."""

from __future__ import annotations

from typing import Any

from ghost_eval.trials.stored import trial_assertion


def get_assert(output: str, context: dict[str, Any]) -> dict[str, Any]:
    return trial_assertion(context)
